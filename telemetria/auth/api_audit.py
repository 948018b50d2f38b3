"""Reading the audit log (admins and control bodies): the trail's HTTP edge, behind the guard.

It lives with auth, not in `telemetria.audit`, so the floors stay in one order: audit records and reads
the trail and imports nothing of auth; auth (logins, users, this route) records into it.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from telemetria.audit.log import entries
from telemetria.auth.guard import require
from telemetria.auth.roles import Perm, Principal
from telemetria.deps import Conn
from telemetria.http import json_response
from telemetria.localtime import LOCAL_TZ
from telemetria.paging import Page, page
from telemetria.period import instant

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
    pg: Page = Depends(page),
    who: Principal = Depends(require(Perm.READ_AUDIT)),
    *,
    conn: Conn,  # after the guard: see telemetria/deps.py
) -> Response:
    """Newest first: who did what, when and from which address."""
    start = instant(since, LOCAL_TZ, "from") if since else None
    end = instant(until, LOCAL_TZ, "to", end=True) if until else None
    items, total = await entries(conn, start, end, action, username, pg.limit, pg.offset)
    return json_response(pg.answer(items, total))
