"""Recording who did what, when and from where: logins, exports and registry writes."""

from __future__ import annotations

from typing import Any, Protocol

from telemetria.audit import queries as q
from telemetria.db import Conn


class Actor(Protocol):
    """Who acted, as the trail records it (an auth.roles.Principal is one): audit imports nothing of auth."""

    @property
    def user_id(self) -> int: ...
    @property
    def username(self) -> str: ...
    @property
    def role(self) -> str: ...


async def record(
    conn: Conn,
    action: str,
    who: Actor | None,
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
        str(who.role) if who else None,
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
