"""Reading the seals: which seals an export was cut from, a version's canonical lines, the API's lists and roots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.seals import canonical, changes, sealer
from telemetria.seals import queries as q
from telemetria.seals.model import Seal, SealRef


def _seal(r: Any) -> Seal:
    return Seal(
        r["vehicle_id"], r["plate"], r["day"], r["version"], r["fixes"], r["sha256"], r["previous_sha256"],
        r["leaf_sha256"], r["added"], r["removed"], r["sealed_at"],
    )  # fmt: skip


def local_days(start: datetime, end: datetime) -> tuple[date, date] | None:
    """The first and last local days the window [start, end) touches; None when it is empty."""
    if end <= start:
        return None
    return start.astimezone(LOCAL_TZ).date(), (end - timedelta(microseconds=1)).astimezone(LOCAL_TZ).date()


async def refs_for(conn: Conn, vehicle_ids: Sequence[int], start: datetime, end: datetime) -> list[SealRef]:
    """The latest version of each sealed vehicle-day touching the window [start, end), by vehicle id and day."""
    days = local_days(start, end)
    if days is None or not vehicle_ids:
        return []
    rows = await conn.fetch(q.LATEST_REFS, list(vehicle_ids), *days)
    return [SealRef(r["vehicle_id"], r["plate"], r["day"], r["version"], r["fixes"], r["sha256"]) for r in rows]


async def latest(conn: Conn, vehicle_id: int, day: date) -> Seal | None:
    """The latest version of a vehicle-day's seal, if it is sealed."""
    row = await conn.fetchrow(q.LATEST_SEAL, vehicle_id, day)
    return None if row is None else _seal(row)


async def version_lines(conn: Conn, vehicle_id: int, day: date, version: int) -> list[str] | None:
    """The canonical lines of a version of a vehicle-day's seal; None when there is no such version or its day's
    fixes are no longer kept (retention).

    Rebuilt from the current fixes, which are the latest version's lines once a change not sealed yet (a late fix,
    a tracker move the refresher has not reached) is sealed here, and by undoing the later versions' changes. May
    write: give it a connection of the main pool, not of a read-only replica.
    """
    last = await latest(conn, vehicle_id, day)
    if last is None or not 1 <= version <= last.version or not await sealer.kept(conn, day):
        return None
    newest, lines = last.version, await sealer.day_lines(conn, vehicle_id, day)
    if canonical.digest(lines) != last.sha256:
        # A change not sealed yet: sealed under the vehicle-day's lock from the fixes read under it (the lines read
        # above may be older than a version the refresher sealed meanwhile), and those lines are the ones used.
        async with conn.transaction():
            sealed = await sealer.seal_current(conn, vehicle_id, day)
        if sealed is None:
            return None  # the lines sealed last are gone, or so are the fixes
        newest, lines = sealed.version, sealed.lines
    # Lines whose digest is a version's: undoing the changes of the later versions up to it gives any earlier one
    # (a version sealed after the lines were read is not undone: it is not theirs).
    for r in await conn.fetch(q.LATER_CHANGES, vehicle_id, day, version):
        if r["version"] <= newest:
            lines = changes.undo(lines, r["changes"])
    return lines


async def seals(conn: Conn, scope: int | None, vehicle_id: int | None, first: date, last: date) -> list[Seal]:
    """Every version of the seals of local days first..last of the vehicles the scope sees, by vehicle, day, version."""
    return [_seal(r) for r in await conn.fetch(q.LIST_SEALS, scope, vehicle_id, first, last)]


async def visible(conn: Conn, scope: int | None, vehicle_id: int, day: date | None = None) -> bool:
    """Whether `scope` had the vehicle on local `day` (None: on some day); None sees every vehicle."""
    return bool(await conn.fetchval(q.VISIBLE_VEHICLE, scope, vehicle_id, day))


@dataclass(frozen=True, slots=True)
class Root:
    """A stored fleet root of a day (a row of seal_roots)."""

    day: date
    version: int
    vehicles: int
    root_sha256: str
    previous_sha256: str | None
    computed_at: datetime

    def as_json(self) -> dict[str, Any]:
        return {
            "version": self.version, "root_sha256": self.root_sha256, "previous_sha256": self.previous_sha256,
            "vehicles": self.vehicles, "computed_at": self.computed_at,
        }  # fmt: skip


def _root(r: Any) -> Root:
    return Root(r["day"], r["version"], r["vehicles"], r["root_sha256"], r["previous_sha256"], r["computed_at"])


async def latest_roots(conn: Conn, limit: int) -> list[Root]:
    """Each day's latest fleet root, newest day first."""
    return [_root(r) for r in await conn.fetch(q.LATEST_ROOTS, limit)]


async def day_roots(conn: Conn, day: date) -> tuple[list[Root], list[dict[str, Any]]]:
    """Every version of a day's fleet root, and the leaves of its latest (by vehicle id, the root's order)."""
    roots = [_root(r) for r in await conn.fetch(q.DAY_ROOTS, day)]
    if not roots:
        return [], []
    rows = await conn.fetch(q.ROOT_LEAVES, day, roots[-1].computed_at)
    return roots, [dict(r) for r in rows]
