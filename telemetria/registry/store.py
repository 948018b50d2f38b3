"""Registry writes and scoped reads by id, with database refusals turned into errors naming the field."""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from datetime import datetime
from typing import Any

import asyncpg

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.paging import Page, split_total
from telemetria.registry import queries as q
from telemetria.registry.errors import Conflict, NotFound, RegistryError

_KEY = re.compile(r"Key \(([^)]+)\)")


def _field(e: asyncpg.PostgresError) -> str | None:
    m = _KEY.search(getattr(e, "detail", None) or "")
    if m:
        return m.group(1).split(",")[0].strip()
    name = getattr(e, "constraint_name", None) or ""
    table = getattr(e, "table_name", None) or ""
    return name.removeprefix(table + "_").removesuffix("_check") or None


async def guarded(action: Callable[[], Awaitable[Any]]) -> Any:
    """Run one write; unique, foreign-key, check and exclusion violations become registry errors."""
    try:
        return await action()
    except asyncpg.UniqueViolationError as e:
        f = _field(e)
        raise Conflict(f"{f}: already registered", f) from None
    except asyncpg.ForeignKeyViolationError as e:
        f = _field(e)
        if "still referenced" in (e.detail or ""):
            raise Conflict(f"{e.table_name}: still in use by other records", f) from None
        raise NotFound(f"{f}: no such record", f) from None
    except asyncpg.ExclusionViolationError as e:
        raise Conflict(
            f"valid_from: overlaps another {e.table_name} period of this vehicle or driver", "valid_from"
        ) from None
    except asyncpg.CheckViolationError as e:
        f = _field(e)
        raise RegistryError(f"{f}: value not allowed", f) from None


async def insert(conn: Conn, sql: str, columns: tuple[str, ...], values: dict[str, Any]) -> int:
    return int(await guarded(lambda: conn.fetchval(sql, *(values.get(c) for c in columns))))


async def patch(conn: Conn, sql: str, columns: tuple[str, ...], row_id: int, sent: dict[str, Any]) -> None:
    if not sent:
        raise RegistryError("nothing to change: send at least one field")
    args = [sent.get(c) for c in columns]
    if await guarded(lambda: conn.fetchval(sql, row_id, list(sent), *args)) is None:
        raise NotFound(f"no record {row_id}")


async def one(conn: Conn, sql: str, what: str, row_id: int, *args: Any) -> dict[str, Any]:
    """The row `row_id` of a scoped SELECT, or NotFound (also when it exists outside the caller's scope)."""
    rows, _ = split_total(await conn.fetch(sql, *args))
    if not rows:
        raise NotFound(f"no {what} {row_id}")
    return rows[0]


async def many(conn: Conn, sql: str, pg: Page, *args: Any) -> dict[str, Any]:
    return pg.answer(*split_total(await conn.fetch(sql, *args, pg.limit, pg.offset)))


async def scheduled(conn: Conn, kind: str, item_id: int) -> dict[str, Any] | None:
    """The item's next version dated ahead of today: its first day and the fields it changes ("alteração
    programada para dd/mm/aaaa" on the pages); None when the item has none. The current tables hold the version
    in force today (migrations/0033); this one applies from its day on."""
    row = await conn.fetchrow(q.NEXT_VERSION, kind, item_id, datetime.now(LOCAL_TZ).date())
    if row is None:
        return None
    return {"valid_from": row["valid_from"], "changed": row["changed"], "deleted": row["data"] is None}
