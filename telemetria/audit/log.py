"""Recording who did what, when and from where: logins, exports and registry writes."""

from __future__ import annotations

from typing import Any

from telemetria.audit import queries as q
from telemetria.auth.roles import Principal
from telemetria.db import Conn


async def record(
    conn: Conn,
    action: str,
    who: Principal | None,
    ip: str | None,
    target: str | None = None,
    detail: dict[str, Any] | None = None,
    username: str | None = None,
) -> None:
    """Append one entry. `detail` must hold no personal data (name fields changed, not their values)."""
    await conn.execute(
        q.INSERT,
        who.user_id if who else None,
        who.username if who else username,
        who.role.value if who else None,
        action,
        target,
        detail,
        ip,
    )


async def entries(
    conn: Conn, since: Any, until: Any, action: str | None, username: str | None, limit: int, offset: int
) -> tuple[list[dict[str, Any]], int]:
    rows = await conn.fetch(q.LIST, since, until, action, username, limit, offset)
    total = rows[0]["total"] if rows else 0
    return [{k: v for k, v in r.items() if k != "total"} for r in rows], total
