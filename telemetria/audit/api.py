"""Reading the audit log (admins and control bodies)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from pydantic import AwareDatetime

from telemetria.audit.log import entries
from telemetria.auth.guard import require
from telemetria.auth.roles import Perm, Principal
from telemetria.http import json_response
from telemetria.paging import Page, page

router = APIRouter(prefix="/api/v1", tags=["audit"])


@router.get("/audit")
async def audit_log(
    request: Request,
    since: AwareDatetime | None = Query(None, alias="from"),
    until: AwareDatetime | None = Query(None, alias="to"),
    action: str | None = Query(None, max_length=100, description="e.g. auth.login_failed, or a prefix: registry"),
    username: str | None = Query(None, max_length=64),
    pg: Page = Depends(page),
    who: Principal = Depends(require(Perm.READ_AUDIT)),
) -> Response:
    """Newest first: who did what, when and from which address."""
    async with request.app.state.pool.acquire() as conn:
        items, total = await entries(conn, since, until, action, username, pg.limit, pg.offset)
    return json_response(pg.answer(items, total))
