"""The reads with no time bound on a week-old and on a two-year-old installation, side by side.

Part of `python -m bench.reports` (alone: `--two-years`). The same fleet of 300 vehicles gets its last 7
local days of fixes and the three reads that show "now" are timed: the live map's poll (/api/v1/live:
newest valid fix, driver, route of the day, trails), the vehicle list (/api/v1/vehicles?limit=500, as the
pages ask) and /metrics (each vehicle's last-fix age, rendered). Then the 724 days before are added, 731
daily chunks of `fixes` in all, and the reads are timed again. A few fixes a day per vehicle keep the load
cheap: what such a read pays for is the number of chunks it visits, not the rows in them.

Next to each read, the same query with the newest fix looked up in `fixes` (every chunk, no time bound),
as it was before migrations/0009_latest_fix.sql, on the same data.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from functools import partial
from typing import Any

from bench.benchdb import BenchDb, Vehicle
from bench.fleetgen import COLUMNS, JARU_LAT, JARU_LON, REFRESH_LATEST
from bench.table import ms
from bench.table import render as table
from bench.timing import Timing, round_robin
from telemetria import metrics
from telemetria.db import Conn
from telemetria.live import queries as live_queries
from telemetria.localtime import LOCAL_TZ
from telemetria.paging import Page
from telemetria.registry import queries as rq
from telemetria.registry import store
from telemetria.reports.store.queries import LAST_FIXES

VEHICLES = 300
WEEK_DAYS, TWO_YEARS_DAYS = 7, 731
DAY_TIMES = (time(6, 0), time(6, 30), time(12, 30), time(13, 0))  # local: each run's start and end
LIVE_MINUTES = 10  # today also has a fix every 30 s over the last minutes: online vehicles with trails
TRAIL = timedelta(minutes=10)
# Flat: the two-year best may be at most this many times the week's (the machine is shared and noisy).
FLAT_FACTOR = 1.5


def _before(sql: str, now: str, then: str) -> str:
    assert now in sql, f"the read no longer has {now!r}: update bench/reports_age.py"
    return sql.replace(now, then)


# The three reads as they were before latest_fixes: the same SQL, the newest fix looked up in `fixes`.
LIVE_BEFORE = _before(
    live_queries.LIVE,
    "LEFT JOIN latest_fixes f ON f.vehicle_id = v.id",
    "LEFT JOIN LATERAL (SELECT x.ts AS valid_ts, x.received_at, x.lat, x.lon, x.speed_kmh, x.heading_deg,"
    " x.ignition, x.driver_id FROM fixes x WHERE x.vehicle_id = v.id AND x.valid ORDER BY x.ts DESC LIMIT 1) f"
    " ON true",
)
VEHICLES_BEFORE = _before(
    rq.LIST_VEHICLES_PAGE,
    "(SELECT l.last_ts FROM latest_fixes l WHERE l.vehicle_id = v.id) AS last_fix_at",
    "(SELECT f.ts FROM fixes f WHERE f.vehicle_id = v.id ORDER BY f.ts DESC LIMIT 1) AS last_fix_at",
)
LAST_FIXES_BEFORE = _before(
    LAST_FIXES,
    "LEFT JOIN latest_fixes f ON f.vehicle_id = v.id",
    "LEFT JOIN LATERAL (SELECT ts AS last_ts FROM fixes WHERE vehicle_id = v.id ORDER BY ts DESC LIMIT 1) f ON true",
)
CHUNKS = "SELECT count(*) FROM timescaledb_information.chunks WHERE hypertable_name = 'fixes'"


@dataclass(frozen=True)
class Read:
    what: str
    source: str
    week: Timing
    two_years: Timing
    target: bool  # the read the service runs today: must be flat


@dataclass(frozen=True)
class Age:
    reads: list[Read]
    notes: list[str]


def _rows(v: Vehicle, index: int, day: date, now: datetime) -> list[tuple[Any, ...]]:
    """A vehicle's fixes of one local day (only those before `now`), FIX_COLUMNS order."""
    rng = random.Random(index * 100_003 + day.toordinal())
    times = [datetime.combine(day, t, LOCAL_TZ) for t in DAY_TIMES]
    if day == now.astimezone(LOCAL_TZ).date():
        times += [now - timedelta(seconds=30 * k) for k in range(1, 2 * LIVE_MINUTES + 1)]
    lat0, lon0 = JARU_LAT + rng.uniform(-0.05, 0.05), JARU_LON + rng.uniform(-0.05, 0.05)
    return [
        (v.vehicle_id, v.tracker_id, ts.astimezone(UTC), lat0 + rng.uniform(-0.01, 0.01),
         lon0 + rng.uniform(-0.01, 0.01), 38.0, 90.0, 152.0, 5.0, 0.9, 9, True, None, None, True, None)
        for ts in sorted(set(times)) if ts < now
    ]  # fmt: skip


async def load(conn: Conn, fleet: list[Vehicle], days: list[date], now: datetime) -> int:
    """COPY the fleet's fixes of `days` (then latest_fixes is derived, as in fleetgen.load); rows stored."""
    n = 0
    for i, v in enumerate(fleet):
        rows = [r for d in days for r in _rows(v, i, d, now)]
        await conn.copy_records_to_table("fixes", records=rows, columns=COLUMNS)
        n += len(rows)
    await conn.execute(REFRESH_LATEST)
    await conn.execute("VACUUM (ANALYZE)")  # every table: the registry's too, just filled
    return n


def _reads(ids: list[int]) -> list[tuple[str, str, Callable[[Conn], Awaitable[Any]], bool]]:
    """(read, source, one call, whether it is the service's) for each read and its every-chunk variant."""
    page = Page(500, 0)  # what the pages ask for

    def poll(sql: str) -> Callable[[Conn], Awaitable[Any]]:
        async def run(conn: Conn) -> Any:
            today = datetime.now(LOCAL_TZ).date()
            rows = await conn.fetch(sql, None, None, today)
            seen = [r["vehicle_id"] for r in rows if r["ts"] is not None]
            assert len(seen) == len(ids), f"{len(seen)} of {len(ids)} vehicles on the map"
            return await live_queries.trails(conn, seen, datetime.now(UTC) - TRAIL)

        return run

    def vehicles(sql: str) -> Callable[[Conn], Awaitable[Any]]:
        async def run(conn: Conn) -> Any:
            listed = await store.many(conn, sql, page, None, None, None, None, None)
            assert listed["total"] == len(ids) and all(v["last_fix_at"] for v in listed["items"])
            return listed

        return run

    def scrape(sql: str) -> Callable[[Conn], Awaitable[Any]]:
        async def run(conn: Conn) -> Any:
            fleet = [(r["plate"], r["age_s"]) for r in await conn.fetch(sql)]
            assert len(fleet) == len(ids) and all(age is not None for _, age in fleet)
            return metrics.render(metrics.database_families(True, fleet))

        return run

    latest, chunks = "latest_fixes", "every chunk (before 0009)"
    return [
        ("live map poll (/api/v1/live)", latest, poll(live_queries.LIVE), True),
        ("", chunks, poll(LIVE_BEFORE), False),
        ("vehicle list (limit 500)", latest, vehicles(rq.LIST_VEHICLES_PAGE), True),
        ("", chunks, vehicles(VEHICLES_BEFORE), False),
        ("/metrics (query + render)", latest, scrape(LAST_FIXES), True),
        ("", chunks, scrape(LAST_FIXES_BEFORE), False),
    ]


async def measure(db: BenchDb, reps: int, progress: Callable[[str], None]) -> Age:
    """Register the fleet, time the reads on a week of chunks, add the rest of two years, time them again."""
    fleet = await db.register_fleet(VEHICLES)
    ids = [v.vehicle_id for v in fleet]
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    today = now.astimezone(LOCAL_TZ).date()
    all_days = [today - timedelta(days=k) for k in range(TWO_YEARS_DAYS)]
    reads = _reads(ids)
    times: dict[int, list[Timing]] = {}
    notes = []
    conn = await db.connect(jsonb_codec=False)
    try:
        for label, days in (("a week", all_days[:WEEK_DAYS]), ("two years", all_days[WEEK_DAYS:])):
            stored = await load(conn, fleet, days, now)
            chunks, total = await conn.fetchval(CHUNKS), await conn.fetchval("SELECT count(*) FROM fixes")
            notes.append(f"{label}: {stored:,} fixes added, {total:,} in {chunks} chunks of fixes")
            progress(notes[-1])
            for k, timing in enumerate(
                await round_robin([partial(call, conn) for _, _, call, _ in reads], reps, warmup=2)
            ):
                times.setdefault(k, []).append(timing)
                what, source = reads[k][0] or reads[k - 1][0], reads[k][1]
                progress(f"{label}: {what}, newest fix from {source}: median {timing.median_ms:.1f} ms")
    finally:
        await conn.close()
    out = [Read(what, source, times[k][0], times[k][1], service) for k, (what, source, _, service) in enumerate(reads)]
    return Age(out, notes)


def render(age: Age, reps: int) -> str:
    head = (
        f"READS WITHOUT A TIME BOUND: the same {VEHICLES} vehicles ({len(DAY_TIMES)} fixes a day each, and a fix "
        f"every 30 s over the last {LIVE_MINUTES} minutes) {WEEK_DAYS} days old, then {TWO_YEARS_DAYS} days old; "
        f"best and median of {reps} runs after 2 warm-ups, the six queries taking turns; no HTTP"
    )
    rows = []
    for r in age.reads:
        week, years = r.week, r.two_years
        rows.append([r.what, r.source, ms(week.best_ms), ms(week.median_ms), ms(years.best_ms), ms(years.median_ms)])
        rows[-1] += [f"{years.best_ms / week.best_ms:.1f}x", f"{years.median_ms / week.median_ms:.1f}x"]
    headers = ["read", "newest fix from", "week best ms", "week median", "2 years best", "2 years median"]
    # The verdict compares best times: the floor of each, which other work on the machine can only raise.
    targets = [
        [
            f"{r.what}: 2 years ÷ week (best)",
            f"{r.two_years.best_ms / r.week.best_ms:.2f}x",
            f"flat: ≤ {FLAT_FACTOR:g}x",
            "met" if r.two_years.best_ms <= FLAT_FACTOR * r.week.best_ms else "NOT met",
        ]
        for r in age.reads
        if r.target
    ]
    parts = [head, *age.notes, "", table([*headers, "÷ week, best", "÷ week, median"], rows), ""]
    return "\n".join([*parts, table(["what", "value", "target", "verdict"], targets)])
