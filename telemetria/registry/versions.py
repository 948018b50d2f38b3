"""Effective-dated registry edits: the day an edit applies from, and the history of an item's versions.

The current tables hold the newest version; triggers (migrations/0011_registry_versions.sql) write each
change into registry_versions from the day set here (default: today in the municipality).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, datetime, timedelta
from typing import Any

import asyncpg

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.registry import queries as q
from telemetria.registry.errors import Conflict, RegistryError
from telemetria.registry.routes import km_json

MAX_AHEAD_DAYS = 365  # the default of Settings.registry_max_ahead_days
TOO_EARLY = "TL011"  # raised by registry_version() for a date before the newest version's
CLOSED_MONTH = "TL031"  # raised for a version that would reach a closed month's boletim (migrations/0026)


def local_today() -> date:
    """Today in the municipality (America/Porto_Velho): the default first day of an edit."""
    return datetime.now(LOCAL_TZ).date()


async def check(conn: Conn, kind: str, item_id: int, day: date) -> None:
    """409 naming effective_from when `day` is before the first day of the item's newest version."""
    newest = await conn.fetchval(q.NEWEST_VERSION_FROM, kind, item_id)
    if newest is not None and day < newest:
        raise Conflict(
            f"effective_from: {day} is before {newest}, the first day of the newest version; a correction may "
            f"start on {newest} or later",
            "effective_from",
        )


@asynccontextmanager
async def dated(
    conn: Conn,
    who: str,
    effective_from: date | None,
    kind: str | None = None,
    item_id: int | None = None,
    *,
    max_ahead_days: int = MAX_AHEAD_DAYS,
) -> AsyncIterator[None]:
    """A transaction whose registry edits are versions from `effective_from` (None: today) by `who`.

    With `kind` and `item_id`, a date before that item's newest version is refused before anything is written;
    the triggers refuse it for every item the edit touches (TL011 → 409 naming effective_from). A date more than
    `max_ahead_days` after today is refused (422 naming effective_from, Settings.registry_max_ahead_days).
    """
    if effective_from is not None and effective_from > local_today() + timedelta(days=max_ahead_days):
        last = local_today() + timedelta(days=max_ahead_days)
        raise RegistryError(
            f"effective_from: {effective_from} is more than {max_ahead_days} days ahead; the latest first day "
            f"accepted today is {last}",
            "effective_from",
            422,
        )
    async with conn.transaction():
        await conn.execute(q.SET_EFFECTIVE, effective_from.isoformat() if effective_from else "", who)
        if kind is not None and item_id is not None:
            await check(conn, kind, item_id, effective_from or local_today())
            # An item with a version dated ahead is edited on that version (its current row holds today's).
            await conn.execute(q.LOAD_NEWEST, kind, item_id)
        try:
            yield
        except asyncpg.PostgresError as e:
            if getattr(e, "sqlstate", None) in (TOO_EARLY, CLOSED_MONTH):
                raise Conflict(str(e), "effective_from") from None
            raise


def _data(kind: str, data: dict[str, Any] | None) -> dict[str, Any] | None:
    if kind == "route" and data is not None and data.get("declared_km") is not None:
        data = {**data, "declared_km": km_json(data["declared_km"])}
    return data


async def history(conn: Conn, kind: str, item_id: int) -> dict[str, Any]:
    """Every version of the item, superseded ones too: from when, to when, who wrote it, what it changed."""
    versions = []
    for r in await conn.fetch(q.VERSION_HISTORY, kind, item_id):
        nxt = r["next_from"]
        versions.append(
            {
                "version": r["version"],
                "valid_from": r["valid_from"],
                # The last day it applies (the next version's first day − 1); None: open, or superseded.
                "valid_to": nxt - timedelta(days=1) if nxt is not None else None,
                "in_force": r["superseded_at"] is None,
                "deleted": r["data"] is None,
                "changed": r["changed"],
                "created_at": r["created_at"],
                "created_by": r["created_by"],
                "superseded_at": r["superseded_at"],
                "data": _data(kind, r["data"]),
            }
        )
    return {"kind": kind, "id": item_id, "versions": versions}
