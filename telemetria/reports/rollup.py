"""Per vehicle and local day, the additive facts of an analysis, kept in report_rollups while current.

A rollup is written by the refresher from the same pipeline a live report runs, over exactly one
local day with the same context, so reading it is the same as computing that day live
(tests/db/test_rollups.py checks it, late batches included). See migrations/0007_report_rollups.sql.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, fields
from datetime import UTC, date, datetime, timedelta
from typing import Any

import numpy as np

from telemetria.db import DB_ERRORS, Conn, Pool
from telemetria.http import FieldError
from telemetria.localtime import LOCAL_TZ
from telemetria.reports import distance, events
from telemetria.reports import queries as q
from telemetria.reports.context import Context, load
from telemetria.reports.engine import Analysis
from telemetria.reports.params import DEFAULT
from telemetria.reports.request import Selection, Window
from telemetria.reports.runner import analyze_piece, day_bounds

log = logging.getLogger(__name__)

REFRESH_LOCK = 4_242_003
LOCK_TIMEOUT = "5s"  # closing days waits this long at most for in-flight ingest
BATCH = 200


@dataclass(slots=True)
class Facts:
    """Additive figures of a vehicle over some days (metres, seconds, counts)."""

    fixes: int = 0
    kept: int = 0
    route_m: float = 0.0
    chord_m: float = 0.0
    gap_m: float = 0.0
    moving_s: float = 0.0
    max_kmh: float | None = None
    trips: int = 0
    stops: int = 0
    unauthorized_stops: int = 0
    speeding: int = 0
    deviations: int = 0
    odometer_m: float | None = None
    first_ts: datetime | None = None
    last_ts: datetime | None = None

    @property
    def km(self) -> float:
        return (self.route_m + self.chord_m) / 1000.0

    def add(self, other: Facts) -> None:
        """Fold `other` (a later or earlier period) into these figures."""
        for f in _SUMS:
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.max_kmh = _opt(max, self.max_kmh, other.max_kmh)
        self.odometer_m = _opt(lambda a, b: a + b, self.odometer_m, other.odometer_m)
        self.first_ts = _opt(min, self.first_ts, other.first_ts)
        self.last_ts = _opt(max, self.last_ts, other.last_ts)

    @classmethod
    def of_row(cls, row: Any) -> Facts:
        return cls(**{f.name: row[f.name] for f in fields(cls)})

    def values(self) -> list[Any]:
        return [getattr(self, f.name) for f in fields(self)]


_SUMS = ("fixes", "kept", "route_m", "chord_m", "gap_m", "moving_s", "trips", "stops", "unauthorized_stops",
         "speeding", "deviations")  # fmt: skip


def _opt(fn: Any, a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else fn(a, b)


def facts(a: Analysis) -> Facts:
    """The additive figures an analysis owns: its segments, and the events starting in its window."""
    own = a.own
    by = a.seg.by_method_m(own)
    t = a.track.t[own]
    return Facts(
        fixes=int(own.sum()),
        kept=int((own & a.keep).sum()),
        route_m=by["route"],
        chord_m=by["chord"],
        gap_m=a.seg.gap_m(own),
        moving_s=a.moving_s(own),
        max_kmh=a.max_kmh(own),
        trips=len(a.trips),
        stops=len(a.stops),
        unauthorized_stops=sum(not c.authorized for c in a.stops),
        speeding=len(a.speeding),
        deviations=len(a.deviations),
        odometer_m=distance.odometer_delta_m(a.track, a.start, a.end, a.keep),
        first_ts=datetime.fromtimestamp(float(t.min()), UTC) if len(t) else None,
        last_ts=datetime.fromtimestamp(float(np.max(t)), UTC) if len(t) else None,
    )


async def current(conn: Conn, ctx: Context, first: date, last: date) -> dict[tuple[int, date], Facts]:
    """The current rollups of the context's vehicles for local days first..last (their bases still hold)."""
    rows = await conn.fetch(q.ROLLUPS, [v.id for v in ctx.vehicles], first, last)
    return {(r["vehicle_id"], r["day"]): Facts.of_row(r) for r in rows if ctx.holds(r)}


async def compute_day(conn: Conn, vehicle_id: int, day: date) -> tuple[Facts, dict[str, Any], str]:
    """One vehicle's local day from the fixes with the default knobs: figures, event rows, and the basis used."""
    d0, d1 = day_bounds(day)
    ctx = await load(conn, None, Selection([vehicle_id], None, None), Window(d0, d1, LOCAL_TZ))
    a = await analyze_piece(conn, ctx.vehicles[0], ctx.zones, day, d0, d1, DEFAULT)
    return facts(a), events.neutral(a), ctx.basis(ctx.vehicles[0], day)


async def refresh_one(conn: Conn, vehicle_id: int, day: date) -> None:
    """Recompute one rollup and delete the day's marks, in one REPEATABLE READ snapshot."""
    async with conn.transaction(isolation="repeatable_read"):
        if await conn.fetchval(q.VEHICLE_EXISTS, vehicle_id):
            f, rows, key = await compute_day(conn, vehicle_id, day)
            await conn.execute(q.UPSERT_ROLLUP, vehicle_id, day, key, *f.values(), rows)
        await conn.execute(q.DELETE_MARKS, vehicle_id, day)


async def close_days(conn: Conn, now: datetime) -> date | None:
    """Close the local days nothing live can change any more, and mark their vehicle-days; the horizon."""
    link = timedelta(seconds=DEFAULT.max_link_s)
    closable = (now - link).astimezone(LOCAL_TZ).date() - timedelta(days=1)
    horizon = await conn.fetchrow(q.HORIZON)
    if horizon["closed_through"] is None or horizon["closed_through"] < closable:
        async with conn.transaction():
            await conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
            await conn.execute(q.LOCK_INGEST)  # in-flight ingest commits first; later ingest sees the horizon
            await conn.execute(q.CLOSE_THROUGH, closable)
        horizon = await conn.fetchrow(q.HORIZON)
    closed, swept = horizon["closed_through"], horizon["swept_through"]
    if swept is None or swept < closed:
        async with conn.transaction():
            await conn.execute(q.SWEEP, swept, closed, LOCAL_TZ.key, link)
            await conn.execute(q.SWEPT_THROUGH, closed)
    return closed


async def check_bases(conn: Conn) -> None:
    """After a registry change, mark the vehicle-days whose rollup no longer matches what they derive from."""
    generation = await conn.fetchval(q.GENERATION)
    if await conn.fetchval(q.CHECKED) == generation:
        return
    for (vehicle_id,) in await conn.fetch(q.ROLLED_VEHICLES):
        rows = await conn.fetch(q.ROLLUP_BASES, vehicle_id)
        first, last = rows[0]["day"], rows[-1]["day"]
        window = Window(day_bounds(first)[0], day_bounds(last)[1], LOCAL_TZ)
        try:
            ctx = await load(conn, None, Selection([vehicle_id], None, None), window)
        except FieldError:  # the vehicle is gone: its rollups are never read
            continue
        outdated = [r["day"] for r in rows if not ctx.holds({**r, "vehicle_id": vehicle_id})]
        if outdated:
            await conn.execute(q.MARK_DAYS, vehicle_id, outdated)
    await conn.execute(q.SET_CHECKED, generation)


async def refresh(pool: Pool, limit: int = BATCH, now: datetime | None = None) -> int:
    """Close days, check bases, then recompute up to `limit` stale rollups, one process at a time; how many."""
    async with pool.acquire() as conn:
        if not await conn.fetchval("SELECT pg_try_advisory_lock($1)", REFRESH_LOCK):
            return 0
        try:
            await close_days(conn, now or datetime.now(UTC))
            await check_bases(conn)
            todo = [(r["vehicle_id"], r["day"]) for r in await conn.fetch(q.STALE_MARKS, limit)]
            for vehicle_id, day in todo:
                await refresh_one(conn, vehicle_id, day)
            return len(todo)
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", REFRESH_LOCK)


async def refresh_all(pool: Pool, now: datetime | None = None) -> int:
    """Mark every vehicle-day of every closed day again, then refresh until none is left (after a restore)."""
    async with pool.acquire() as conn:
        await conn.execute(q.RESWEEP)
    done = 0
    while n := await refresh(pool, now=now):
        done += n
    return done


async def periodic(pool: Pool, interval_s: float) -> None:
    """The service's refresher: every `interval_s` seconds, until nothing is stale. Runs until cancelled."""
    while True:
        await asyncio.sleep(interval_s)
        try:
            while await refresh(pool) == BATCH:
                pass
        except DB_ERRORS as e:
            log.warning("rollup refresh failed, will retry: %s: %s", type(e).__name__, e)
        except Exception:
            log.exception("rollup refresh failed unexpectedly")
