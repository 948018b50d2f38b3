"""Reading the audit log (admins and control bodies): the trail's HTTP edge, behind the guard.

It lives with auth, not in `telemetria.audit`, so the floors stay in one order: audit records and reads
the trail and imports nothing of auth; auth (logins, users, this route) records into it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response, StreamingResponse

from telemetria.audit import queries as audit_q
from telemetria.audit import words
from telemetria.audit.log import entries
from telemetria.auth.guard import require
from telemetria.auth.roles import Perm, Principal
from telemetria.deps import Conn
from telemetria.http import json_response
from telemetria.localtime import LOCAL_TZ
from telemetria.paging import Page, page
from telemetria.period import instant
from telemetria.reports.output.csv import CSV_MEDIA_TYPE, TEXT, Column, content_disposition, csv_chunks, export_filename

router = APIRouter(prefix="/api/v1", tags=["audit"])
PERIOD = "a local date (America/Porto_Velho), a local date-time, or RFC 3339"


@router.get("/audit")
async def audit_log(
    since: str | None = Query(None, alias="from", max_length=40, description=PERIOD),
    until: str | None = Query(
        None, alias="to", max_length=40, description=f"{PERIOD}: the last day, minute or second included"
    ),
    action: str | None = Query(None, max_length=100, description="e.g. auth.login_failed, or a prefix: registry"),
    username: str | None = Query(None, max_length=64),
    format: Literal["json", "csv"] = Query("json", description="csv: the filtered log in words, local times"),
    pg: Page = Depends(page),
    who: Principal = Depends(require(Perm.READ_AUDIT)),
    *,
    conn: Conn,  # after the guard: see telemetria/deps.py
) -> Response:
    """Newest first: who did what, when and from which address. Each entry also comes in words (`words`: when in
    local time, what, on what, the details with old → new values where kept), as the page and the CSV show it."""
    start = instant(since, LOCAL_TZ, "from") if since else None
    end = instant(until, LOCAL_TZ, "to", end=True) if until else None
    if format == "csv":
        rows, _ = await entries(conn, start, end, action, username, audit_q.CSV_ROWS, 0)
        plates = await _plates(conn, rows)
        described = [{**r, **words.describe(r, plates)} for r in rows]
        first = start.astimezone(LOCAL_TZ).date() if start else None
        last = end.astimezone(LOCAL_TZ).date() if end else None
        name = export_filename("auditoria", first, last)
        return StreamingResponse(
            csv_chunks(CSV_COLUMNS, described, LOCAL_TZ),
            media_type=CSV_MEDIA_TYPE,
            headers={"Content-Disposition": content_disposition(name)},
        )
    items, total = await entries(conn, start, end, action, username, pg.limit, pg.offset)
    plates = await _plates(conn, items)
    return json_response(pg.answer([{**e, "words": words.describe(e, plates)} for e in items], total))


# The audit CSV: words, local time (the zone in the header's text), never codes.
CSV_COLUMNS = [
    Column("Quando (America/Porto_Velho)", "when", TEXT),
    Column("Usuário", "username", TEXT),
    Column("Perfil", "role_name", TEXT),
    Column("Ação", "what", TEXT),
    Column("Alvo", "on", TEXT),
    Column("Detalhes", "details", TEXT),
    Column("Endereço IP", "ip", TEXT),
]


async def _plates(conn: Conn, rows: list[dict[str, Any]]) -> Mapping[int, str]:
    ids = words.vehicle_ids(rows)
    if not ids:
        return {}
    return {r["id"]: r["plate"] for r in await conn.fetch(audit_q.PLATES, sorted(ids))}
