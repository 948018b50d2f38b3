"""Sealing closed vehicle-days and the daily fleet roots (see migrations/0017_seals.sql and docs/verification.md).

`seal_day` runs in the REPEATABLE READ transaction in which reports/store/rollup.py recomputes the vehicle-day's
rollup, so the seal and the rollup are computed from the same snapshot of the fixes; rollup.py calls it (seals
never import reports: the reports name seals in their exports). seals/store.py also seals, in its own transaction,
a change the refresher has not reached yet. A vehicle-day is sealed under its advisory lock, one sealer at a time.
`seal_roots` runs after each batch of those.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from telemetria.db import Conn
from telemetria.localtime import day_bounds
from telemetria.seals import canonical, changes
from telemetria.seals import queries as q
from telemetria.settings import MIN_RETENTION_DAYS

log = logging.getLogger(__name__)
# Retention keeps at least MIN_RETENTION_DAYS; a day younger than that, less a margin, is always whole.
_ALWAYS_KEPT = timedelta(days=MIN_RETENTION_DAYS - 2)
ROOTS_BATCH = 62  # days whose fleet root is computed per seal_roots call (two months after a restore)


async def kept(conn: Conn, day: date, now: datetime | None = None) -> bool:
    """Whether the stored fixes still cover the whole local day (retention drops whole chunks of old days)."""
    start = day_bounds(day)[0]
    if start >= (now or datetime.now(UTC)) - _ALWAYS_KEPT:
        return True  # younger than any retention window: no need to look at the chunks
    since: datetime | None = await conn.fetchval(q.FIXES_KEPT_FROM)
    return since is None or start >= since


async def day_lines(conn: Conn, vehicle_id: int, day: date) -> list[str]:
    """The canonical lines of every stored fix of the vehicle in the local day, in fix-time order."""
    start, end = day_bounds(day)
    rows = await conn.fetch(q.DAY_FIXES, vehicle_id, start, end)
    return [canonical.line(r["ts"], r["lat"], r["lon"], r["speed_kmh"]) for r in rows]


_VEHICLE_DAY_LOCKS, _DAY_LOCKS = 19 << 56, 20 << 56


def _key(vehicle_id: int | None, day: date) -> int:
    """An advisory lock key (one bigint): a namespace byte, the vehicle id (31 bits), the day's ordinal (24 bits).

    The namespace keeps the keys apart from the small constant locks (REFRESH_LOCK, ...) of the same keyspace.
    """
    if vehicle_id is None:
        return _DAY_LOCKS | day.toordinal()
    return _VEHICLE_DAY_LOCKS | vehicle_id << 24 | day.toordinal()


@asynccontextmanager
async def vehicle_day_locked(conn: Conn, vehicle_id: int, day: date) -> AsyncIterator[None]:
    """Hold the vehicle-day's seal lock (for the session) while the block runs.

    For a REPEATABLE READ transaction that seals the day (rollup.refresh_one): its snapshot is taken when its first
    statement starts, so a `pg_advisory_xact_lock` inside it would wait with a snapshot already taken, blind to a
    version sealed meanwhile; the lock has to be granted before the transaction begins. seal_day's own lock is then
    granted at once (the session holds it).
    """
    await conn.execute(q.LOCK_VEHICLE_DAY_SESSION, _key(vehicle_id, day))
    try:
        yield
    finally:
        await conn.execute(q.UNLOCK_VEHICLE_DAY_SESSION, _key(vehicle_id, day))


@dataclass(frozen=True, slots=True)
class Sealed:
    """The latest version of a vehicle-day's seal after sealing it, and its lines (the day's current ones)."""

    version: int
    lines: list[str]
    new: bool  # whether this version was sealed just now


async def seal_current(conn: Conn, vehicle_id: int, day: date) -> Sealed | None:
    """Seal a closed vehicle-day's fixes: a new version when their digest differs from the latest. The latest version
    then, with its lines; None when no version has these lines (no fixes and none sealed, retention, the lines of
    the version before lost).

    The caller holds the transaction (the rollup's, or its own). The vehicle-day's lock is taken here, before the
    fixes and the latest version are read, and held to its end: two sealers never compute a version from the same
    one before. In a READ COMMITTED transaction every statement after the lock sees what was sealed before it; a
    REPEATABLE READ one must hold the lock from before its snapshot (vehicle_day_locked).
    """
    await conn.execute(q.LOCK_VEHICLE_DAY, _key(vehicle_id, day))
    if not await kept(conn, day):
        return None  # its fixes are partly gone: retention is no change to the record
    lines = await day_lines(conn, vehicle_id, day)
    sha = canonical.digest(lines)
    latest = await conn.fetchrow(q.LATEST_SEAL, vehicle_id, day)
    if latest is None:
        if not lines:
            return None  # nothing to seal, and nothing sealed before
        version, previous = 1, await conn.fetchval(q.PREVIOUS_DAY_SHA256, vehicle_id, day)
        diff: list[changes.Change] = []  # version 1 has no version before
    elif latest["sha256"] == sha:
        return Sealed(latest["version"], lines, new=False)
    else:
        working = await conn.fetchrow(q.WORKING_LINES, vehicle_id, day)
        if working is None or working["version"] != latest["version"]:
            log.warning("seal of vehicle %s on %s: no lines of version %s kept, not sealed again",
                        vehicle_id, day, latest["version"])  # fmt: skip
            return None
        version, previous = latest["version"] + 1, latest["sha256"]
        diff = changes.diff(changes.unpack(working["lines"]), lines)
    added, removed = changes.counts(diff)
    leaf = canonical.leaf(vehicle_id, day, version, len(lines), sha, previous)
    # The day's lock, shared with the day's other seals, held to the commit: its fleet root waits for this seal.
    await conn.execute(q.SHARE_DAY, _key(None, day))
    await conn.execute(q.INSERT_SEAL, vehicle_id, day, version, len(lines), sha, previous, leaf, added, removed, diff)
    await conn.execute(q.PUT_WORKING_LINES, vehicle_id, day, version, changes.pack(lines))
    return Sealed(version, lines, new=True)


async def seal_day(conn: Conn, vehicle_id: int, day: date) -> bool:
    """seal_current; whether a new version was sealed."""
    sealed = await seal_current(conn, vehicle_id, day)
    return sealed is not None and sealed.new


async def seal_root(conn: Conn, day: date) -> bool:
    """The day's fleet root over its latest seals; whether a new one was stored (only when it changed).

    For a day none of whose vehicle-days is stale any more (ROOTS_DUE checks). Under the day's lock, exclusive: the
    seals sealing meanwhile commit first and are read, and a later one has a later sealed_at than computed_at.
    """
    async with conn.transaction():
        await conn.execute(q.LOCK_DAY, _key(None, day))
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


async def seal_roots(conn: Conn, limit: int = ROOTS_BATCH) -> int:
    """The fleet roots of up to `limit` days due one, oldest first; how many new.

    Due: a seal sealed after the day's latest root (or no root yet), and no stale marks left (a day still stale
    waits: the round that recomputes its last marked vehicle-day is followed by this). Found in the database, not
    from a batch's days, so a batch that failed halfway leaves no root behind: the next call finds it.
    """
    return sum([await seal_root(conn, r["day"]) for r in await conn.fetch(q.ROOTS_DUE, limit)])
