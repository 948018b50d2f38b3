"""Rollup storage: per vehicle and local day, the facts of an analysis kept in report_rollups while current,
and the refresher that closes days and recomputes stale ones.

A rollup is written by the refresher from the same pipeline a live report runs, over exactly one
local day with the same context, so reading it is the same as computing that day live
(tests/db/test_rollups.py checks it, late batches included). See migrations/0007_report_rollups.sql.
Its `events` also keep, as kind `runs`, what the day shows of each run of the vehicle's routes
(reports/analysis/runs.py), which the measurement reads (telemetria/measurement/observe.py); a rollup
written before that has no `runs`, and the measurement computes those from the fixes.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, date, datetime, timedelta
from typing import Any

from telemetria.db import DB_ERRORS, Conn, Pool
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.events import neutral
from telemetria.reports.analysis.facts import Facts, facts
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Context, NotFound, Selection, Window
from telemetria.reports.store import queries as q
from telemetria.reports.store.context import load
from telemetria.reports.store.fetch import analyze_piece
from telemetria.seals import sealer

log = logging.getLogger(__name__)

REFRESH_LOCK = 4_242_003
LOCK_TIMEOUT = "5s"  # closing days waits this long at most for in-flight ingest
BATCH = 200


async def current(conn: Conn, ctx: Context, first: date, last: date) -> dict[tuple[int, date], Facts]:
    """The current rollups of the context's vehicles for local days first..last (their bases still hold)."""
    rows = await conn.fetch(q.ROLLUPS, [v.id for v in ctx.vehicles], first, last)
    return {(r["vehicle_id"], r["day"]): Facts.of_row(r) for r in rows if ctx.holds(r)}


async def compute_day(conn: Conn, vehicle_id: int, day: date) -> tuple[Facts, dict[str, Any], str]:
    """One vehicle's local day from the fixes with the default knobs: figures, event rows, and the basis used."""
    d0, d1 = day_bounds(day)
    ctx = await load(conn, None, Selection([vehicle_id], None, None), Window(d0, d1, LOCAL_TZ))
    a = await analyze_piece(conn, ctx.vehicles[0], ctx.zones, day, d0, d1, DEFAULT, ctx.network_on(day))
    return facts(a), neutral(a), ctx.basis(ctx.vehicles[0], day)


async def refresh_one(conn: Conn, vehicle_id: int, day: date) -> bool:
    """Recompute one rollup of a closed day, seal the vehicle-day's fixes (telemetria/seals) and delete the day's
    marks, in one REPEATABLE READ snapshot; whether a new seal version was stored."""
    sealed = False
    # The seal lock first, then the snapshot: a version sealed meanwhile (seals/store.py, on another connection) is
    # committed and in the snapshot, so this one is computed from it (not a second version n+1 from version n).
    async with sealer.vehicle_day_locked(conn, vehicle_id, day), conn.transaction(isolation="repeatable_read"):
        if await conn.fetchval(q.VEHICLE_EXISTS, vehicle_id):
            f, rows, key = await compute_day(conn, vehicle_id, day)
            await conn.execute(q.UPSERT_ROLLUP, vehicle_id, day, key, *f.values(), rows)
            sealed = await sealer.seal_day(conn, vehicle_id, day)
        await conn.execute(q.DELETE_MARKS, vehicle_id, day)
    return sealed


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
    closed: date | None = horizon["closed_through"]
    swept = horizon["swept_through"]
    if swept is None or swept < closed:
        async with conn.transaction():
            await conn.execute(q.SWEEP, swept, closed, LOCAL_TZ.key, link)
            await conn.execute(q.SWEPT_THROUGH, closed)
    return closed


async def check_bases(conn: Conn) -> None:
    """After a registry change or a release with other rules (knobs.ANALYSIS_VERSION), mark the vehicle-days whose
    rollup no longer matches what they derive from."""
    generation = await conn.fetchval(q.GENERATION)
    checked = await conn.fetchrow(q.CHECKED)
    if (checked["checked_generation"], checked["checked_fingerprint"]) == (generation, DEFAULT.fingerprint()):
        return
    for (vehicle_id,) in await conn.fetch(q.ROLLED_VEHICLES):
        rows = await conn.fetch(q.ROLLUP_BASES, vehicle_id)
        first, last = rows[0]["day"], rows[-1]["day"]
        window = Window(day_bounds(first)[0], day_bounds(last)[1], LOCAL_TZ)
        try:
            ctx = await load(conn, None, Selection([vehicle_id], None, None), window)
        except NotFound:  # the vehicle is gone: its rollups are never read
            continue
        outdated = [r["day"] for r in rows if not ctx.holds({**r, "vehicle_id": vehicle_id})]
        if outdated:
            await conn.execute(q.MARK_DAYS, vehicle_id, outdated)
    await conn.execute(q.SET_CHECKED, generation, DEFAULT.fingerprint())


async def refresh(pool: Pool, limit: int = BATCH, now: datetime | None = None) -> int:
    """Close days, check bases, then recompute (and seal) up to `limit` stale vehicle-days of closed days, then the
    fleet roots due (sealer.seal_roots); one process at a time; how many vehicle-days."""
    async with pool.acquire() as conn:
        if not await conn.fetchval("SELECT pg_try_advisory_lock($1)", REFRESH_LOCK):
            return 0
        try:
            await close_days(conn, now or datetime.now(UTC))
            await check_bases(conn)
            todo = [(r["vehicle_id"], r["day"]) for r in await conn.fetch(q.STALE_MARKS, limit)]
            try:
                for vehicle_id, day in todo:  # STALE_MARKS: closed days only
                    await refresh_one(conn, vehicle_id, day)
            finally:  # also when one failed: the days refreshed before it lost their marks, and get their roots
                await sealer.seal_roots(conn)
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
