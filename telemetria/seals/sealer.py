"""Sealing closed vehicle-days and the daily fleet roots (see migrations/0017_seals.sql and docs/verification.md).

`seal_day` runs in the REPEATABLE READ transaction in which reports/store/rollup.py recomputes the vehicle-day's
rollup, so the seal and the rollup are computed from the same snapshot of the fixes; rollup.py calls it (seals
never import reports: the reports name seals in their exports). `seal_roots` runs after a batch of those.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import date, datetime, time, timedelta

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.seals import canonical, changes
from telemetria.seals import queries as q

log = logging.getLogger(__name__)


def day_bounds(day: date) -> tuple[datetime, datetime]:
    """The instants a local day starts and ends (the same as reports/analysis/days.day_bounds)."""
    return datetime.combine(day, time(), LOCAL_TZ), datetime.combine(day + timedelta(days=1), time(), LOCAL_TZ)


async def kept(conn: Conn, day: date) -> bool:
    """Whether the stored fixes still cover the whole local day (retention drops whole chunks of old days)."""
    since: datetime | None = await conn.fetchval(q.FIXES_KEPT_FROM)
    return since is None or day_bounds(day)[0] >= since


async def day_lines(conn: Conn, vehicle_id: int, day: date) -> list[str]:
    """The canonical lines of every stored fix of the vehicle in the local day, in fix-time order."""
    start, end = day_bounds(day)
    rows = await conn.fetch(q.DAY_FIXES, vehicle_id, start, end)
    return [canonical.line(r["ts"], r["lat"], r["lon"], r["speed_kmh"]) for r in rows]


async def seal_day(conn: Conn, vehicle_id: int, day: date, lines: list[str] | None = None) -> bool:
    """Seal a closed vehicle-day's fixes: a new version when their digest differs from the latest; whether one was.

    The caller holds the transaction (the rollup's, or its own); `lines` may be given when already read in it.
    """
    if not await kept(conn, day):
        return False  # its fixes are partly gone: retention is no change to the record
    if lines is None:
        lines = await day_lines(conn, vehicle_id, day)
    sha = canonical.digest(lines)
    latest = await conn.fetchrow(q.LATEST_SEAL, vehicle_id, day)
    if latest is None:
        if not lines:
            return False  # nothing to seal, and nothing sealed before
        version, previous = 1, await conn.fetchval(q.PREVIOUS_DAY_SHA256, vehicle_id, day)
        diff: list[changes.Change] = []  # version 1 has no version before
    elif latest["sha256"] == sha:
        return False
    else:
        working = await conn.fetchrow(q.WORKING_LINES, vehicle_id, day)
        if working is None or working["version"] != latest["version"]:
            log.warning("seal of vehicle %s on %s: no lines of version %s kept, not sealed again",
                        vehicle_id, day, latest["version"])  # fmt: skip
            return False
        version, previous = latest["version"] + 1, latest["sha256"]
        diff = changes.diff(changes.unpack(working["lines"]), lines)
    added, removed = changes.counts(diff)
    leaf = canonical.leaf(vehicle_id, day, version, len(lines), sha, previous)
    await conn.execute(q.INSERT_SEAL, vehicle_id, day, version, len(lines), sha, previous, leaf, added, removed, diff)
    await conn.execute(q.PUT_WORKING_LINES, vehicle_id, day, version, changes.pack(lines))
    return True


async def seal_root(conn: Conn, day: date) -> bool:
    """The day's fleet root over its latest seals, once nothing of the day is stale; whether a new one was stored."""
    async with conn.transaction():
        if await conn.fetchval(q.DAY_STALE, day):
            return False  # a later round recomputes what is left, then the root
        leaves = await conn.fetch(q.DAY_LEAVES, day)
        if not leaves:
            return False
        root = canonical.merkle_root([r["leaf_sha256"] for r in leaves])
        latest = await conn.fetchrow(q.LATEST_ROOT, day)
        if latest is not None and latest["root_sha256"] == root:
            return False
        version, previous = (1, None) if latest is None else (latest["version"] + 1, latest["root_sha256"])
        await conn.execute(q.INSERT_ROOT, day, version, len(leaves), root, previous)
        return True


async def seal_roots(conn: Conn, days: Iterable[date]) -> int:
    """The fleet roots of the days a refresh batch sealed; how many new roots."""
    return sum([await seal_root(conn, day) for day in sorted(set(days))])
