"""Report times next to a plain count(*) over the same fixes, all measured in this run.

    .venv/bin/python -m bench.reports [--quick]

Creates its own database (telemetria_bench_<pid>) in the local cluster, registers a fleet with one
route per vehicle (the line its synthetic fixes follow, with stops, assigned on every day), COPYs
synthetic days of fixes (bench/fleetgen.py), builds the rollups once, then times: the fleet's `km`
report over whole local days (from rollups), one vehicle's month computed live, one vehicle-day's
track analysis, the `trips` report (computed live, no HTTP), and a CSV export of positions
(bench/csvexport.py, in fresh processes so that peak memory is the export's own). Then, in a database
of its own, the reads with no time bound on a week-old and a two-year-old installation
(bench/reports_age.py). Prints the tables and drops the databases.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from typing import Any

import orjson

from bench import fleetgen, reports_age
from bench.benchdb import BenchDb
from bench.csvexport import COUNT_POSITIONS
from bench.fleetgen import Days
from bench.reports_table import Figure, Memory, render
from bench.timing import Timing, timed
from telemetria.db import Conn, create_pool
from telemetria.live import queries as live_queries
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.facts import facts
from telemetria.reports.kinds import events
from telemetria.reports.kinds.km import km
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Selection, Window
from telemetria.reports.store import fetch, rollup
from telemetria.reports.store.context import load
from telemetria.reports.store.fetch import analyze_piece
from telemetria.reports.store.queries import LAST_FIXES
from telemetria.settings import Settings

COUNT = "SELECT count(*) FROM fixes WHERE vehicle_id = ANY ($1) AND ts >= $2 AND ts < $3"
LIVE = replace(DEFAULT, stop_min_s=61)  # any knob off the default: rollups are not used


@dataclass(frozen=True)
class Plan:
    vehicles: int
    days: int
    csv_rows: int
    csv_small: int
    reps: int


def plan_for(args: argparse.Namespace) -> Plan:
    if args.quick:
        return Plan(vehicles=10, days=10, csv_rows=100_000, csv_small=10_000, reps=3)
    return Plan(vehicles=100, days=30, csv_rows=1_000_000, csv_small=100_000, reps=5)


def _progress(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


async def km_report(conn: Conn, ids: list[int], win: Window, by_day: bool, live: bool = False) -> dict[str, Any]:
    """The km report as the API builds it (context, then every row), with its footer."""
    ctx = await load(conn, None, Selection(ids, None, None), win)
    report = await km(conn, ctx, win, LIVE if live else DEFAULT, by_day)
    assert isinstance(report.rows, list) and report.footer is not None
    return {**report.footer(), "rows": len(report.rows)}


async def trips_report(conn: Conn, ids: list[int], win: Window, live: bool = False) -> int:
    """The `trips` report as the API builds it (context, then every row); its rows.

    From rollups unless `live`: other knobs make every day computed from the fixes.
    """
    ctx = await load(conn, None, Selection(ids, None, None), win)
    report = await events.report("trips", conn, ctx, win, LIVE if live else DEFAULT)
    assert isinstance(report.rows, list) and report.footer is not None
    assert report.footer()["vehicle_days"]["computed_live" if not live else "from_rollups"] == 0
    return len(report.rows)


async def count(conn: Conn, ids: list[int], start: datetime, end: datetime) -> int:
    return int(await conn.fetchval(COUNT, ids, start, end))


def export(db: BenchDb, rows: int, reps: int, win: Window) -> dict[str, Any]:
    """One fresh process exporting `rows` positions `reps` times: its times and peak memory."""
    cmd = [sys.executable, "-m", "bench.csvexport", db.dsn, str(rows), str(reps)]
    out = subprocess.run([*cmd, win.start.isoformat(), win.end.isoformat()], capture_output=True, check=True)
    result: dict[str, Any] = orjson.loads(out.stdout)
    assert result["rows"] == rows, result
    return result


async def count_positions(db: BenchDb, win: Window, n: int, reps: int) -> Timing:
    """The baseline of an export: count(*) over the positions it streams."""
    conn = await db.connect()
    try:
        timing, _ = await timed(lambda: conn.fetchval(COUNT_POSITIONS, win.start, win.end, n), reps)
        return timing
    finally:
        await conn.close()


async def measure(db: BenchDb, settings: Settings, plan: Plan) -> tuple[list[Figure], list[Memory], list[str]]:
    notes: list[str] = []
    today = datetime.now(LOCAL_TZ).date()
    days = Days(today - timedelta(days=plan.days + 2), plan.days)
    win = Window(day_bounds(days.first)[0], day_bounds(days.last)[1], LOCAL_TZ)
    fleet = await db.register_fleet(plan.vehicles)
    ids = [v.vehicle_id for v in fleet]
    conn = await db.connect()
    try:
        vertices = await fleetgen.register_routes(conn, fleet, days)
    finally:
        await conn.close()
    notes.append(
        f"routes: one per vehicle, the loop its fixes follow (±{fleetgen.GPS_NOISE_M:g} m noise), "
        f"{min(vertices):,}..{max(vertices):,} vertices, {len(fleetgen.route_stops(fleetgen.vehicle_path(0)))} "
        "stops, assigned on every day"
    )

    conn = await db.connect(jsonb_codec=False)
    try:
        t = time.perf_counter()
        stored = await fleetgen.load(conn, fleet, days)
        load_s = time.perf_counter() - t
        _progress(f"COPY {stored:,} fixes in {load_s:.1f} s")
        t = time.perf_counter()
        await conn.execute("VACUUM (ANALYZE) fixes")
        notes.append(
            f"data: {plan.vehicles} vehicles × {plan.days} local days {days.first}..{days.last}, "
            f"{fleetgen.fixes_per_day():,} fixes per vehicle-day, {stored:,} fixes "
            f"(generated + binary COPY in {load_s:.1f} s, VACUUM ANALYZE {time.perf_counter() - t:.1f} s)"
        )
    finally:
        await conn.close()

    pool = await create_pool(settings, dsn=db.dsn, min_size=1, max_size=2)
    try:
        t = time.perf_counter()
        built = await rollup.refresh_all(pool)
        build_s = time.perf_counter() - t
        _progress(f"rollups: {built:,} vehicle-days in {build_s:.1f} s")
        notes.append(
            f"rollup build (one-off, rollup.refresh_all): {built:,} vehicle-days in {build_s:.1f} s "
            f"= {build_s / max(built, 1) * 1000:.1f} ms per vehicle-day"
        )
        async with pool.acquire() as c:
            figures = await _report_figures(c, plan, days, win, ids, notes)
    finally:
        await pool.close()

    memory = []
    for n in (plan.csv_small, plan.csv_rows):
        reps = 3 if n == plan.csv_rows else plan.reps
        r = export(db, n, reps, win)
        base = await count_positions(db, win, n, plan.reps)
        csv = Timing(r["csv_s"])
        figures.append(Figure(f"CSV export, {n:,} positions", n, csv, base, None))
        figures.append(Figure("  same cursor, no CSV", n, Timing(r["cursor_s"]), base, None))
        memory.append(Memory(n, r["bytes"], r["rss_before_kib"], r["rss_peak_kib"], r["traced_peak_kib"]))
        _progress(f"CSV {n:,}: best {csv.best_ms / 1000:.2f} s, peak RSS +{memory[-1].growth_mib:.1f} MiB")
    return figures, memory, notes


async def _report_figures(
    conn: Conn, plan: Plan, days: Days, win: Window, ids: list[int], notes: list[str]
) -> list[Figure]:
    n_days = plan.days
    vd = plan.vehicles * n_days
    all_base, fixes = await timed(lambda: count(conn, ids, win.start, win.end), plan.reps)
    one_base, one_fixes = await timed(lambda: count(conn, ids[:1], win.start, win.end), plan.reps)

    km_t, foot = await timed(lambda: km_report(conn, ids, win, by_day=False), plan.reps)
    assert foot["vehicle_days"] == {"from_rollups": vd, "computed_live": 0}, foot
    assert foot["rows"] == plan.vehicles
    _progress(f"km fleet: best {km_t.best_ms:.0f} ms, count(*) {all_base.best_ms:.0f} ms")
    byday_t, byday = await timed(lambda: km_report(conn, ids, win, by_day=True), plan.reps)
    assert byday["vehicle_days"]["computed_live"] == 0 and byday["rows"] == vd
    one_t, one = await timed(lambda: km_report(conn, ids[:1], win, by_day=False), plan.reps)
    live_reps = max(2, plan.reps // 2)
    live_t, live = await timed(lambda: km_report(conn, ids[:1], win, False, live=True), live_reps, warmup=0)
    assert live["vehicle_days"] == {"from_rollups": 0, "computed_live": n_days}, live
    _progress(f"km one vehicle live: best {live_t.best_ms:.0f} ms, from rollups {one_t.best_ms:.1f} ms")
    assert foot["total_route_km"] > 0, "fixes off their routes: every km is a chord"
    notes.append(
        f"km totals: fleet {foot['total_km']:,.1f} km from {vd:,} rollups ({_split(foot)}); vehicle {ids[0]}: "
        f"{one['total_km']:,.3f} km from rollups, {live['total_km']:,.3f} km computed live (stop_min_s=61, "
        f"{_split(live)})"
    )

    day = days.first + timedelta(days=n_days // 2)
    d0, d1 = day_bounds(day)
    ctx = await load(conn, None, Selection(ids[:1], None, None), win)
    vehicle, zones = ctx.vehicles[0], ctx.zones
    day_base, day_fixes = await timed(lambda: count(conn, ids[:1], d0, d1), plan.reps * 2)
    fetch_t, tr = await timed(lambda: fetch.track(conn, vehicle.id, d0, d1), plan.reps * 2)
    track_t, a = await timed(lambda: analyze_piece(conn, vehicle, zones, day, d0, d1, DEFAULT), plan.reps * 2)
    notes.append(
        f"track: vehicle {vehicle.id}, {day}: {day_fixes:,} fixes in the day, {len(tr):,} fetched with context, "
        f"{facts(a).km:.1f} km, {len(a.stops)} stops, {len(a.trips)} trips"
    )
    _progress(f"track: best {track_t.best_ms:.1f} ms, count(*) {day_base.best_ms:.1f} ms")

    # The live map's poll: every vehicle's newest fix with driver and route of the day, plus trails; against
    # the /metrics query that only reads each newest fix time (the same latest_fixes rows, nothing joined).
    today = datetime.now(LOCAL_TZ).date()
    poll_t, polled = await timed(lambda: _live_poll(conn, ids, today), plan.reps * 2)
    newest_t, _ = await timed(lambda: conn.fetch(LAST_FIXES), plan.reps * 2)
    assert polled == plan.vehicles, polled
    _progress(f"live poll: best {poll_t.best_ms:.1f} ms, newest-fix times only {newest_t.best_ms:.1f} ms")

    trips_t, n_trips = await timed(lambda: trips_report(conn, ids[:1], win, live=True), live_reps)
    fleet_t, fleet_trips = await timed(lambda: trips_report(conn, ids, win), plan.reps)
    notes.append(f"trips: vehicle {ids[0]}, {n_days} days: {n_trips} trips; the fleet: {fleet_trips} trips")
    _progress(f"trips: 1 vehicle live best {trips_t.best_ms:.0f} ms, fleet from rollups {fleet_t.best_ms:.0f} ms")
    return [
        Figure(f"km report, {plan.vehicles} vehicles × {n_days} days (rollups)", fixes, km_t, all_base, 1000),
        Figure("  same, by day", fixes, byday_t, all_base, None),
        Figure(f"km report, 1 vehicle × {n_days} days (rollups)", one_fixes, one_t, one_base, None),
        Figure(f"km report, 1 vehicle × {n_days} days (live)", one_fixes, live_t, one_base, None),
        Figure("track, 1 vehicle-day (fetch + analyze)", day_fixes, track_t, day_base, 100),
        Figure("  of which fetch.track", day_fixes, fetch_t, day_base, None),
        Figure(f"trips report, {plan.vehicles} vehicles × {n_days} days (rollups)", fixes, fleet_t, all_base, None),
        Figure(f"trips report, 1 vehicle × {n_days} days (live)", one_fixes, trips_t, one_base, None),
        Figure(f"live map poll, {plan.vehicles} vehicles (/api/v1/live)", fixes, poll_t, newest_t, 200),
    ]


async def _live_poll(conn: Conn, ids: list[int], today: date) -> int:
    rows = await live_queries.live(conn, None, None, today)
    await live_queries.trails(conn, ids, datetime.now(LOCAL_TZ) - timedelta(minutes=10))
    return sum(r["ts"] is not None for r in rows)


def _split(footer: dict[str, Any]) -> str:
    """How a km footer's total was measured: along routes vs straight chords."""
    total = footer["total_km"] or 1.0
    route, chord = footer["total_route_km"], footer["total_chord_km"]
    return f"route {route:,.1f} km = {100 * route / total:.1f} %, chord {chord:,.1f} km = {100 * chord / total:.1f} %"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.reports", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="10 vehicles × 10 days, CSV of 100k positions")
    p.add_argument("--two-years", action="store_true", help="only the week-old vs two-year-old reads")
    p.add_argument("--keep", action="store_true", help="keep the two installations' databases (for EXPLAIN)")
    args = p.parse_args(argv)
    plan = plan_for(args)
    # SIGTERM must unwind through the finally block that drops the database.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))

    settings = Settings()
    db = BenchDb.for_this_run(settings)
    print(f"bench: database {db.name}", file=sys.stderr)
    out = []
    if not args.two_years:
        asyncio.run(db.create())
        try:
            figures, memory, notes = asyncio.run(measure(db, settings, plan))
        finally:
            asyncio.run(db.drop())
        out.append(render(figures, memory, notes, plan.reps, db.name, not asyncio.run(db.exists())))
    # The two installations in databases of their own.
    week_db, years_db = db.named(f"{db.name}_week"), db.named(f"{db.name}_years")
    try:
        age = asyncio.run(reports_age.measure(week_db, years_db, settings, plan.reps * 4, _progress))
    finally:
        if not args.keep:
            asyncio.run(week_db.drop())
            asyncio.run(years_db.drop())
    out += ["", reports_age.render(age, plan.reps * 4), ""]
    left = [d.name for d in (db, week_db, years_db) if asyncio.run(d.exists())]
    out.append(f"cleanup: databases {', '.join(left)} NOT dropped" if left else "cleanup: databases dropped")
    text = "\n".join(out)
    print(text)
    # Every judged row of both tables says "met" or "NOT met" (reports_table, reports_age): a target missed fails
    # the bench where it runs (issue 33: it always exited 0).
    return 1 if "NOT met" in text else 0


if __name__ == "__main__":
    sys.exit(main())
