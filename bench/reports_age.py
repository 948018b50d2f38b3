"""The reads on a week-old and on a two-year-old installation, side by side, in one run.

Part of `python -m bench.reports` (alone: `--two-years`). Two databases hold the same fleet of 300
vehicles: one 8 local days old (8 daily chunks of `fixes`), one 731 days old (731 chunks, the shape every
installation reaches: Art. 15 §6 keeps two years). Each vehicle has a fix every 30 s over the last 25
minutes (50 today: online, with trails), one fix yesterday, and four on every day before. Both have their
closed days rolled up and sealed, as the background refresher leaves them (see `build`).

Timed, without HTTP, as the API runs them: the live map's poll (/api/v1/live: newest valid fix, driver,
route of the day, trails), the vehicle list (limit 500, as the pages ask), /metrics (each vehicle's
last-fix age, rendered), and the km report of the fleet today (computed live) and yesterday (from
rollups), and of one vehicle over the last 365 days (from rollups). The two installations take turns on
every repetition (which goes first alternates), so a burst of load from the other work on the machine hits
both alike; the verdict compares medians. A read that grows with the number of chunks shows here.
"""

from __future__ import annotations

import random
import time as clock
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from typing import Any

from bench.benchdb import BenchDb, Vehicle
from bench.fleetgen import COLUMNS, JARU_LAT, JARU_LON, REFRESH_LATEST
from bench.table import ms
from bench.table import render as table
from bench.timing import Timing
from telemetria import metrics
from telemetria.db import Conn, create_pool
from telemetria.live import queries as live_queries
from telemetria.localtime import LOCAL_TZ, day_bounds
from telemetria.paging import Page
from telemetria.registry import queries as rq
from telemetria.registry import store
from telemetria.reports.kinds.km import km
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Selection, Window
from telemetria.reports.store import rollup
from telemetria.reports.store.context import load as load_context
from telemetria.reports.store.queries import LAST_FIXES
from telemetria.settings import Settings

VEHICLES = 300
WEEK_DAYS, TWO_YEARS_DAYS = 8, 731
YEAR_DAYS = 365
OLD_TIMES = (time(6, 0), time(6, 30), time(12, 30), time(13, 0))  # local: each run's start and end
YESTERDAY_TIME = time(12, 0)
TODAY_FIXES = 50  # every 30 s up to a minute ago: online vehicles with trails
TRAIL = timedelta(minutes=10)
# Reads this fast are repeated up to CHEAP_TIMES as often (see interleaved).
CHEAP_TIMES, CHEAP_MS = 8, 100.0
# Flat: the two-year median may be at most this many times the week's.
FLAT_FACTOR = 1.2
# A day's km of the fleet from rollups.
YESTERDAY_MS = 100.0
CHUNKS = "SELECT count(*) FROM timescaledb_information.chunks WHERE hypertable_name = $1"
NEW_CHUNKS = "SELECT c::text FROM show_chunks('fixes', newer_than => now() - interval '2 days') c"


@dataclass(frozen=True)
class Read:
    what: str
    week: Timing
    two_years: Timing

    @property
    def ratio(self) -> float:
        return self.two_years.median_ms / self.week.median_ms


@dataclass(frozen=True)
class Age:
    reads: list[Read]
    notes: list[str]


def _rows(v: Vehicle, index: int, day: date, today: date, now: datetime) -> list[tuple[Any, ...]]:
    """A vehicle's fixes of one local day (only those before `now`), FIX_COLUMNS order."""
    rng = random.Random(index * 100_003 + day.toordinal())
    if day == today:
        times = [now - timedelta(seconds=30 * k) for k in range(TODAY_FIXES)]
    elif day == today - timedelta(days=1):
        times = [datetime.combine(day, YESTERDAY_TIME, LOCAL_TZ)]
    else:
        times = [datetime.combine(day, t, LOCAL_TZ) for t in OLD_TIMES]
    lat0, lon0 = JARU_LAT + rng.uniform(-0.05, 0.05), JARU_LON + rng.uniform(-0.05, 0.05)
    return [
        (v.vehicle_id, v.tracker_id, ts.astimezone(UTC), lat0 + rng.uniform(-0.01, 0.01),
         lon0 + rng.uniform(-0.01, 0.01), 38.0, 90.0, 152.0, 5.0, 0.9, 9, True, None, None, True, None)
        for ts in sorted(set(times)) if ts <= now
    ]  # fmt: skip


async def load(conn: Conn, fleet: list[Vehicle], days: list[date], now: datetime) -> int:
    """COPY the fleet's fixes of `days` (then latest_fixes is derived, as in fleetgen.load); rows stored."""
    today = now.astimezone(LOCAL_TZ).date()
    n = 0
    for i, v in enumerate(fleet):
        rows = [r for d in days for r in _rows(v, i, d, today, now)]
        await conn.copy_records_to_table("fixes", records=rows, columns=COLUMNS)
        n += len(rows)
    await conn.execute(REFRESH_LATEST)
    return n


# The rollups and seals of days older than the ones the reads touch: each vehicle's rollup and seal of its
# oldest rolled-up day, copied to every earlier day it has fixes on (rows the reads never show but an index
# and a chunk of seal_lines per day hold, as on a real installation), instead of computing 200,000
# vehicle-days of four fixes one by one (an hour of the refresher on this machine).
CLONE_ROLLUPS = """
INSERT INTO report_rollups (vehicle_id, day, basis, fixes, kept, route_m, chord_m, gap_m, road_m, paved_m, unpaved_m,
                            moving_s, max_kmh, trips, stops, unauthorized_stops, speeding, deviations, odometer_m,
                            first_ts, last_ts, events)
SELECT r.vehicle_id, d::date, r.basis, r.fixes, r.kept, r.route_m, r.chord_m, r.gap_m, r.road_m, r.paved_m,
       r.unpaved_m, r.moving_s, r.max_kmh, r.trips, r.stops, r.unauthorized_stops, r.speeding, r.deviations,
       r.odometer_m, r.first_ts - (r.day - d::date) * interval '1 day',
       r.last_ts - (r.day - d::date) * interval '1 day', r.events
FROM report_rollups r, generate_series($1::date, $2::date, interval '1 day') d
WHERE r.day = $3 AND r.vehicle_id <> ALL ($4::int[])"""
CLONE_SEAL_LINES = """
INSERT INTO seal_lines (vehicle_id, day, version, lines)
SELECT s.vehicle_id, d::date, s.version, s.lines
FROM seal_lines s, generate_series($1::date, $2::date, interval '1 day') d
WHERE s.day = $3 AND s.vehicle_id <> ALL ($4::int[])"""
CLONE_DAY_SEALS = """
INSERT INTO day_seals (vehicle_id, day, version, fixes, sha256, previous_sha256, leaf_sha256, sealed_at)
SELECT s.vehicle_id, d::date, s.version, s.fixes, s.sha256, s.previous_sha256, s.leaf_sha256, s.sealed_at
FROM day_seals s, generate_series($1::date, $2::date, interval '1 day') d
WHERE s.day = $3 AND s.vehicle_id <> ALL ($4::int[])"""
CLONE_ROOTS = """
INSERT INTO seal_roots (day, version, vehicles, root_sha256, previous_sha256)
SELECT d::date, r.version, r.vehicles, r.root_sha256, r.previous_sha256
FROM seal_roots r, generate_series($1::date, $2::date, interval '1 day') d WHERE r.day = $3
ON CONFLICT DO NOTHING"""
SWEPT = "UPDATE rollup_horizon SET closed_through = $1, swept_through = $1"


async def build(
    db: BenchDb, settings: Settings, n_days: int, now: datetime, progress: Callable[[str], None]
) -> tuple[list[Vehicle], str]:
    """An installation `n_days` old: fleet, fixes, latest_fixes, rollups and seals of its closed days; (ids, note).

    The week's days before yesterday and the one vehicle whose year is read are rolled up by the refresher
    itself (rollup.refresh), the rest of the older days copied from those (CLONE_*)."""
    await db.create()
    fleet = await db.register_fleet(VEHICLES)
    ids = [v.vehicle_id for v in fleet]
    today = now.astimezone(LOCAL_TZ).date()
    days = [today - timedelta(days=k) for k in range(1, n_days)]  # today's come last (add_today)
    t0 = clock.perf_counter()
    conn = await db.connect(jsonb_codec=False)
    try:
        stored = await load(conn, fleet, days, now)
    finally:
        await conn.close()
    recent = min(n_days, WEEK_DAYS)
    first_real = today - timedelta(days=recent - 1)  # days first_real..yesterday computed for every vehicle
    old = [d for d in days if d < first_real]
    conn = await db.connect()  # no command timeout: the copies and VACUUM take minutes on a busy machine
    try:
        if old:  # computed for one vehicle only; the others' are cloned below
            await conn.execute(SWEPT, first_real - timedelta(days=1))
            await conn.execute("INSERT INTO rollup_stale (vehicle_id, day) SELECT $1, unnest($2::date[])", ids[0], old)
        pool = await create_pool(settings, dsn=db.dsn, min_size=1, max_size=2)
        try:
            # As at the end of today: yesterday closed (a day closes max_link_s after its end, 06:00 the next
            # morning), whatever the hour this bench runs at, so that yesterday's km is read from rollups.
            while await rollup.refresh(pool, limit=1000, now=day_bounds(today)[1]):
                pass
        finally:
            await pool.close()
        if old:
            args = (min(old), max(old), first_real, [ids[0]])
            for sql in (CLONE_ROLLUPS, CLONE_SEAL_LINES, CLONE_DAY_SEALS):
                await conn.execute(sql, *args)
            await conn.execute(CLONE_ROOTS, *args[:3])
        await conn.execute("VACUUM (ANALYZE)")
        rolled = await conn.fetchval("SELECT count(*) FROM report_rollups")
        chunks = [await conn.fetchval(CHUNKS, t) for t in ("fixes", "seal_lines", "report_rollups")]
    finally:
        await conn.close()
    note = (
        f"{n_days} days: {stored:,} fixes before today's in {chunks[0]} chunks, "
        f"{rolled:,} rollups in {chunks[2]} chunks, "
        f"seal_lines in {chunks[1]} chunks (built in {clock.perf_counter() - t0:.0f} s)"
    )
    progress(note)
    return fleet, note


async def add_today(db: BenchDb, fleet: list[Vehicle], now: datetime) -> None:
    """Today's fixes, up to `now`: added once both installations are built, so that the reads run while every
    vehicle is online (its last fix under a minute old, a trail of the last minutes)."""
    today = now.astimezone(LOCAL_TZ).date()
    conn = await db.connect(jsonb_codec=False)
    try:
        await load(conn, fleet, [today], now)
        for (chunk,) in await conn.fetch(NEW_CHUNKS):
            await conn.execute(f"ANALYZE {chunk}")
    finally:
        await conn.close()


async def km_report(
    conn: Conn, ids: list[int], first: date, last: date, live: int | None, rolled: int
) -> dict[str, Any]:
    """The km report as the API builds it (context, then every row); checks where its days came from (live: how
    many vehicle-days computed from the fixes, None: unchecked; rolled: at least so many from rollups)."""
    win = Window(day_bounds(first)[0], day_bounds(last)[1], LOCAL_TZ)
    ctx = await load_context(conn, None, Selection(ids, None, None), win)
    report = await km(conn, ctx, win, DEFAULT, False)
    assert isinstance(report.rows, list) and report.footer is not None
    foot = report.footer()
    assert live is None or foot["vehicle_days"]["computed_live"] == live, foot["vehicle_days"]
    assert foot["vehicle_days"]["from_rollups"] >= rolled, foot["vehicle_days"]
    return foot


def reads(ids: list[int], year_rollups: int) -> list[tuple[str, Callable[[Conn], Awaitable[Any]]]]:
    """(read, one call) for each read; year_rollups: the one vehicle's rolled-up days in the last year."""
    page = Page(500, 0)  # what the pages ask for

    async def poll(conn: Conn) -> Any:
        today = datetime.now(LOCAL_TZ).date()
        rows = await live_queries.live(conn, None, None, today)
        seen = [r["vehicle_id"] for r in rows if r["ts"] is not None]
        assert len(seen) == len(ids), f"{len(seen)} of {len(ids)} vehicles on the map"
        trails = await live_queries.trails(conn, seen, datetime.now(UTC) - TRAIL)
        assert len(trails) == len(ids), f"{len(trails)} trails"
        return trails

    async def vehicles(conn: Conn) -> Any:
        listed = await store.many(conn, rq.LIST_VEHICLES_PAGE, page, None, None, None, None, None)
        assert listed["total"] == len(ids) and all(v["last_fix_at"] for v in listed["items"])
        return listed

    async def scrape(conn: Conn) -> Any:
        fleet = [(r["plate"], r["age_s"]) for r in await conn.fetch(LAST_FIXES)]
        assert len(fleet) == len(ids) and all(age is not None for _, age in fleet)
        return metrics.render(metrics.database_families(True, fleet))

    def today() -> date:
        return datetime.now(LOCAL_TZ).date()

    async def km_today(conn: Conn) -> Any:
        return await km_report(conn, ids, today(), today(), len(ids), 0)

    async def km_yesterday(conn: Conn) -> Any:
        day = today() - timedelta(days=1)
        return await km_report(conn, ids, day, day, 0, len(ids))

    async def km_year(conn: Conn) -> Any:
        last = today() - timedelta(days=1)
        return await km_report(conn, ids[:1], last - timedelta(days=YEAR_DAYS - 1), last, None, year_rollups)

    return [
        ("live map poll (/api/v1/live + trails)", poll),
        ("vehicle list (limit 500)", vehicles),
        ("/metrics (query + render)", scrape),
        (f"km report, {VEHICLES} vehicles, today (live, {TODAY_FIXES} fixes each)", km_today),
        (f"km report, {VEHICLES} vehicles, yesterday (rollups, 1 fix each)", km_yesterday),
        (f"km report, 1 vehicle, last {YEAR_DAYS} days (rollups)", km_year),
    ]


async def interleaved(
    calls: list[tuple[Callable[[], Awaitable[Any]], Callable[[], Awaitable[Any]]]], reps: int, warmup: int
) -> list[tuple[Timing, Timing]]:
    """Each (week, two years) pair at least `reps` times after `warmup`, back to back, which goes first
    alternating on every repetition; their timings. A read of a few milliseconds is repeated up to CHEAP_TIMES
    as often (as many as fit in CHEAP_MS per repetition): one burst of other work on the machine is many times
    such a read, and its median needs more samples to hold still."""
    runs: list[tuple[list[float], list[float]]] = [([], []) for _ in calls]
    times = [1] * len(calls)
    for rep in range(warmup + reps * CHEAP_TIMES):
        for k, pair in enumerate(calls):
            if rep >= warmup + reps * times[k]:
                continue
            for side in (0, 1) if rep % 2 == 0 else (1, 0):
                t = clock.perf_counter_ns()
                await pair[side]()
                took = (clock.perf_counter_ns() - t) / 1e9
                if rep >= warmup:
                    runs[k][side].append(took)
                elif side == 0:  # the last warm-up on the week decides how often
                    times[k] = max(1, min(CHEAP_TIMES, int(CHEAP_MS / 1000 / max(took, 1e-6))))
    return [(Timing(w), Timing(y)) for w, y in runs]


async def measure(
    week_db: BenchDb, years_db: BenchDb, settings: Settings, reps: int, progress: Callable[[str], None]
) -> Age:
    """Build both installations, then time every read on both, taking turns."""
    start = datetime.now(UTC).replace(microsecond=0)
    week_fleet, week_note = await build(week_db, settings, WEEK_DAYS, start, progress)
    years_fleet, years_note = await build(years_db, settings, TWO_YEARS_DAYS, start, progress)
    same = [(v.vehicle_id, v.tracker_id) for v in week_fleet] == [(v.vehicle_id, v.tracker_id) for v in years_fleet]
    assert same, "both installations register the same fleet"
    week_ids = years_ids = [v.vehicle_id for v in week_fleet]
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=30)
    if now.astimezone(LOCAL_TZ).date() != start.astimezone(LOCAL_TZ).date():
        raise SystemExit("local midnight passed while building: run the bench again")
    for db in (week_db, years_db):
        await add_today(db, week_fleet, now)
    week = await week_db.connect()
    years = await years_db.connect()
    try:
        pairs = zip(reads(week_ids, WEEK_DAYS - 1), reads(years_ids, YEAR_DAYS), strict=True)
        calls = [(what, partial(on_week, week), partial(on_years, years)) for (what, on_week), (_, on_years) in pairs]
        timings = await interleaved([(w, y) for _, w, y in calls], reps, warmup=2)
    finally:
        await week.close()
        await years.close()
    out = [Read(what, w, y) for (what, _, _), (w, y) in zip(calls, timings, strict=True)]
    for r in out:
        progress(f"{r.what}: week {r.week.median_ms:.1f} ms, two years {r.two_years.median_ms:.1f} ms")
    return Age(out, [week_note, years_note])


def render(age: Age, reps: int) -> str:
    head = (
        f"READS ON A WEEK-OLD AND A TWO-YEAR-OLD INSTALLATION: the same {VEHICLES} vehicles ({TODAY_FIXES} fixes "
        f"today, 1 yesterday, {len(OLD_TIMES)} on each day before), {WEEK_DAYS} days in one database and "
        f"{TWO_YEARS_DAYS} in another, closed days rolled up and sealed; {reps} runs after 2 warm-ups (reads "
        f"under {CHEAP_MS:g} ms up to {CHEAP_TIMES}× as many), the two installations taking turns on every run; no HTTP"
    )
    rows = []
    for r in age.reads:
        w, y = r.week, r.two_years
        rows.append([r.what, ms(w.best_ms), ms(w.median_ms), ms(y.best_ms), ms(y.median_ms), f"{r.ratio:.2f}x"])
    headers = ["read", "week best ms", "week median", "2 years best", "2 years median", "÷ week (medians)"]
    targets = [
        [
            f"{r.what}: 2 years ÷ week (medians)",
            f"{r.ratio:.2f}x",
            f"flat: ≤ {FLAT_FACTOR:g}x",
            "met" if r.ratio <= FLAT_FACTOR else "NOT met",
        ]
        for r in age.reads
    ]
    yesterday = next(r for r in age.reads if "yesterday" in r.what)
    for label, t in (("week", yesterday.week), ("2 years", yesterday.two_years)):
        targets.append(
            [
                f"a day's km of {VEHICLES} vehicles from rollups, {label} (median)",
                f"{t.median_ms:.1f} ms",
                f"< {YESTERDAY_MS:g} ms",
                "met" if t.median_ms < YESTERDAY_MS else "NOT met",
            ]
        )
    parts = [head, *age.notes, "", table(headers, rows), ""]
    return "\n".join([*parts, table(["what", "value", "target", "verdict"], targets)])
