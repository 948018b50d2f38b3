"""The boletim de medição of a contract from rollups, next to the km report of its vehicles, in the same run.

    .venv/bin/python -m bench.boletim [--quick] [--routes N] [--days N] [--reps N]

About 5 minutes on 2 cores, most of it building the rollups once (1,320 vehicle-days:
the weekends between too), plus the worst case below; --quick (10 routes, a couple of minutes) is what
`python -m bench.measurements --quick` runs, judged against the target scaled to its size (routes × days).
Exits 1 when a judged target is not met.

Creates its own database (telemetria_bench_<pid>) in the local cluster: one contractor with one vehicle per
route (bench/fleetgen.py: each drives its own ~180 km loop with stops, two 5 h runs a day at 30 s), a contract
at R$ 4.37/km whose routes are those loops (declared km, assigned Monday to Friday), a school year whose
school days are the last 22 (by default) before today, and those days' fixes (binary COPY). The days are
closed and rolled up once (rollup.refresh_all), then the service answers in-process over ASGI, taking turns:
GET /api/v1/reports/measurement for the contract and the period (json), the same as csv, and the baseline, GET
/api/v1/reports/km for the contractor's vehicles over the same days (from rollups). Target (issue 17): the
boletim of 40 routes × 22 school days in < 1 s (median). That is the best case: every run made by its own
vehicle, every day rolled up. Beside it, the worst case (issue 33), timed on the same data afterwards: a quarter
of the routes assigned to a spare vehicle that never drove (each run looked for among the contractor's other
vehicles: substitutions), another quarter's vehicles stopping after the first 4 h of each 5 h run (partial runs), and no
rollups at all (a live month: every vehicle-day analysed from its fixes). Prints the table and drops the
database.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import time
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

import httpx
import orjson

from bench import fleetgen
from bench.benchdb import BenchDb, Vehicle
from bench.fleetgen import Days
from bench.table import ms
from bench.table import render as table
from bench.timing import Timing, round_robin
from telemetria.app import create_app
from telemetria.auth import store as auth_store
from telemetria.auth.roles import Role
from telemetria.contracts import calendar
from telemetria.contracts import store as contracts
from telemetria.contracts.schemas import ContractIn
from telemetria.db import Conn, create_pool
from telemetria.localtime import LOCAL_TZ
from telemetria.registry import queries as rq
from telemetria.registry import routes, schemas
from telemetria.registry.geocheck import RouteGeometry, StopIn, finish
from telemetria.reports.store import rollup
from telemetria.settings import Settings

TARGET_MS = 1000.0
TARGET_ROUTES, TARGET_DAYS = 40, 22  # issue 17: the boletim of 40 routes × 22 school days in < 1 s
PRICE = Decimal("4.37")
CNPJ = "11222333000181"  # valid check digits


@dataclass(frozen=True)
class Plan:
    routes: int
    days: int
    reps: int
    missed: int = 0  # days the first vehicle stays home: its runs short, the others substitute candidates


def plan_for(args: argparse.Namespace) -> Plan:
    if args.quick:
        return Plan(routes=args.routes or 10, days=args.days or 22, reps=args.reps or 3, missed=args.missed)
    return Plan(routes=args.routes or TARGET_ROUTES, days=args.days or TARGET_DAYS, reps=args.reps or 5,
                missed=args.missed)  # fmt: skip


def target_for(plan: Plan) -> float:
    """The boletim's target for a contract of this size: 1 s for 40 routes × 22 days and more, a smaller contract
    the same time per route-day (quick mode is judged too, on its scaled target)."""
    share = min(1.0, (plan.routes * plan.days) / (TARGET_ROUTES * TARGET_DAYS))
    return TARGET_MS * share


@dataclass(frozen=True)
class Result:
    plan: Plan
    period: tuple[date, date]
    timings: list[tuple[str, Timing, float | None]]  # (what, times, target ms)
    notes: list[str]
    boletim: dict[str, Any]


def _progress(text: str) -> None:
    print(f"  {text}", file=sys.stderr, flush=True)


def school_period(today: date, n: int) -> list[date]:
    """The last n school days (weekdays but national holidays) ending three days before today, in one year."""
    last = today - timedelta(days=3)
    for year in (last.year, last.year - 1):
        end = min(last, date(year, 12, 31))
        days = calendar.school_days(calendar.SchoolYear(year, date(year, 1, 1), end))
        if len(days) >= n:
            return days[-n:]
    raise ValueError(f"no {n} school days in {last.year - 1}..{last.year}")


def _runs_of_days(days: list[date]) -> list[Days]:
    """Consecutive days as Days spans (fleetgen loads a span at a time)."""
    spans: list[Days] = []
    for d in days:
        if spans and spans[-1].last + timedelta(days=1) == d:
            spans[-1] = Days(spans[-1].first, spans[-1].n + 1)
        else:
            spans.append(Days(d, 1))
    return spans


async def register(conn: Conn, fleet: list[Vehicle], days: list[date]) -> tuple[int, int, list[int]]:
    """The contractor, its contract, the school year and one route per vehicle on it: (contractor, contract, routes)."""
    first, last = days[0], days[-1]
    cid = await conn.fetchval(
        "INSERT INTO contractors (name, cnpj) VALUES ('Bench Transportes', $1) RETURNING id", CNPJ
    )
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = ANY($2)", cid, [v.vehicle_id for v in fleet])
    body = ContractIn(contractor_id=cid, number="1/BENCH", valid_from=date(first.year, 1, 1),
                      valid_to=date(first.year, 12, 31), price_per_km=PRICE)  # fmt: skip
    contract = await contracts.create_contract(conn, body, "bench")
    await contracts.put_school_year(conn, calendar.SchoolYear(first.year, first, last), "bench")
    ids = []
    for i, v in enumerate(fleet):
        path = fleetgen.vehicle_path(i)
        lat, lon = path.degrees(path.north, path.east)
        coords, length_m = finish(list(zip(lon.tolist(), lat.tolist(), strict=True)))
        fields = schemas.RouteFields(code=f"BENCH-{i:03d}", name=f"Linha bench {i}", school_year=first.year,
                                     contract_id=contract, declared_km=round(length_m / 1000, 1))  # fmt: skip
        geo = RouteGeometry(coords, length_m, _one_run(fleetgen.route_stops(path)))
        rid = await routes.create_route(conn, fields.model_dump(), geo)
        await conn.fetchval(
            rq.INSERT_ROUTE_ASSIGNMENT, rid, v.vehicle_id, date(first.year, 1, 1), None, [1, 2, 3, 4, 5]
        )
        ids.append(rid)
    return cid, contract, ids


def _one_run(stops: list[StopIn]) -> list[StopIn]:
    """fleetgen's stops with its school registered as a boarding point: its loop does not wait at the school (it
    drives on for an hour to its next stop), which the run rule would take for the end of a morning run."""
    return [replace(s, kind="boarding") if s.kind == "school" else s for s in stops]


async def measure(db: BenchDb, settings: Settings, plan: Plan, today: date | None = None) -> Result:
    notes: list[str] = []
    days = school_period(today or datetime.now(LOCAL_TZ).date(), plan.days)
    fleet = await db.register_fleet(plan.routes)
    conn = await db.connect()
    try:
        contractor, contract, _ = await register(conn, fleet, days)
        user = await auth_store.add_user(conn, "bench", "correct horse battery staple", Role.AUDITOR)
        token = (await auth_store.create_token(conn, user["id"], "bench"))["token"]
    finally:
        await conn.close()
    conn = await db.connect(jsonb_codec=False)
    try:
        t = time.perf_counter()
        stored = 0
        for span in _runs_of_days(days):
            stored += await fleetgen.load(conn, fleet, span)
        if plan.missed:  # its runs not made: every other vehicle, driving then, is a candidate (rival_claims)
            gone = await conn.execute(
                "DELETE FROM fixes WHERE vehicle_id = $1 AND (ts AT TIME ZONE $2)::date = ANY($3::date[])",
                fleet[0].vehicle_id, str(LOCAL_TZ), days[-plan.missed :],
            )  # fmt: skip
            stored -= int(gone.split()[-1])
        await conn.execute("VACUUM (ANALYZE)")
        notes.append(
            f"data: {plan.routes} routes (one vehicle each) × {plan.days} school days {days[0]}..{days[-1]}, "
            f"{stored:,} fixes (generated + COPY + VACUUM ANALYZE in {time.perf_counter() - t:.1f} s)"
            + (f"; the first vehicle home on the last {plan.missed} days" if plan.missed else "")
        )
        _progress(notes[-1])
    finally:
        await conn.close()
    pool = await create_pool(settings, dsn=db.dsn, min_size=1, max_size=2)
    try:
        t = time.perf_counter()
        built = await rollup.refresh_all(pool)
        notes.append(
            f"rollups (one-off, rollup.refresh_all): {built:,} vehicle-days in {time.perf_counter() - t:.1f} s"
        )
        _progress(notes[-1])
    finally:
        await pool.close()

    app = create_app(Settings(database_url=db.dsn, rollup_interval_s=0))
    period = {"from": days[0].isoformat(), "to": days[-1].isoformat()}
    headers = {"Authorization": f"Bearer {token}"}
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench") as client:

            async def get(path: str, params: dict[str, str]) -> bytes:
                r = await client.get(path, params=params, headers=headers)
                assert r.status_code == 200, r.text
                return r.content

            boletim = {"contract_id": str(contract), **period}
            km = {"contractor_id": str(contractor), **period}
            calls = [
                lambda: get("/api/v1/reports/measurement", {**boletim, "format": "json"}),
                lambda: get("/api/v1/reports/measurement", {**boletim, "format": "csv"}),
                lambda: get("/api/v1/reports/km", km),
            ]
            timings = await round_robin(calls, plan.reps)
            report = orjson.loads(await calls[0]())
            footer = orjson.loads(await calls[2]())
            notes.append(_summary(report, footer))
            worst_note = await worsen(db, fleet, days)
            _progress(worst_note)
            worst = await round_robin(calls[:1], max(1, plan.reps // 2), warmup=0)
            notes.append(worst_note)
            notes.append("worst case: " + _summary(orjson.loads(await calls[0]()), {}))
    scaled = "" if target_for(plan) >= TARGET_MS else " (target scaled to its size)"
    what = [
        (f"boletim, {plan.routes} routes × {plan.days} school days (json){scaled}", timings[0], target_for(plan)),
        ("  same, csv", timings[1], None),
        (f"km report, the same {plan.routes} vehicles and days (rollups): baseline", timings[2], None),
        ("boletim, worst case: substitutions, partial runs, no rollups (json)", worst[0], None),
    ]
    return Result(plan, (days[0], days[-1]), what, notes, report)


async def worsen(db: BenchDb, fleet: list[Vehicle], days: list[date]) -> str:
    """The worst case on the same data: a quarter of the routes assigned to a spare vehicle that never drove (the
    runs are looked for among the contractor's other vehicles), another quarter's vehicles without the last hour of
    each 5 h run and the afternoon's loop (partial runs: a run completed later on its own day is made, flagged
    late, so the afternoon's drive must not complete it), and no rollups (every vehicle-day analysed from its fixes)."""
    quarter = max(1, len(fleet) // 4)
    subst, partial = fleet[:quarter], fleet[quarter : 2 * quarter]
    conn = await db.connect()
    try:
        cid = await conn.fetchval("SELECT contractor_id FROM vehicles WHERE id = $1", fleet[0].vehicle_id)
        for i, v in enumerate(subst):
            spare = await conn.fetchval(
                "INSERT INTO vehicles (plate, contractor_id) VALUES ($1, $2) RETURNING id", f"SPR{i:04d}", cid
            )
            # Same day as the registration: the version is superseded, so the spare is assigned on every day.
            await conn.execute(
                "UPDATE route_assignments SET vehicle_id = $1 WHERE vehicle_id = $2", spare, v.vehicle_id
            )
        cut = await conn.execute(
            "DELETE FROM fixes WHERE vehicle_id = ANY ($1::int[]) AND ts >= $2 AND ts < $3"
            " AND ((ts AT TIME ZONE 'America/Porto_Velho')::time BETWEEN '09:30' AND '10:30'"
            "   OR (ts AT TIME ZONE 'America/Porto_Velho')::time >= '12:00')",
            [v.vehicle_id for v in partial], datetime.combine(days[0], datetime.min.time(), LOCAL_TZ),
            datetime.combine(days[-1] + timedelta(days=1), datetime.min.time(), LOCAL_TZ),
        )  # fmt: skip
        await conn.execute("DELETE FROM report_rollups")
    finally:
        await conn.close()
    return (f"worst case: {len(subst)} routes on a spare vehicle that never drove, {len(partial)} vehicles without "
            f"the morning run's last hour and the afternoon ({cut.split()[-1]} fixes cut), no rollups")  # fmt: skip


def _summary(report: dict[str, Any], km: dict[str, Any]) -> str:
    """What the boletim said (runs by status, amount) and where the km report's days came from."""
    runs = report.get("runs", [])
    by: dict[str, int] = {}
    for r in runs:
        by[r["status"]] = by.get(r["status"], 0) + 1
    c = report.get("contracts", [{}])[0]
    days = km.get("vehicle_days", km.get("footer", {}).get("vehicle_days"))
    return (f"boletim: {len(runs):,} runs ({', '.join(f'{k} {v:,}' for k, v in sorted(by.items()))}), payable "
            f"{c.get('payable_km', 0):,} km, R$ {c.get('amount', 0):,}; km report vehicle-days: {days}")  # fmt: skip


def render(res: Result) -> str:
    head = (
        f"BOLETIM DE MEDIÇÃO: GET /api/v1/reports/measurement of one contract over {res.period[0]}..{res.period[1]}, "
        f"in-process over ASGI (no network), best and median of {res.plan.reps} runs after a warm-up, taking turns"
    )
    rows = [[what, ms(t.best_ms), ms(t.median_ms), f"< {target:g}" if target else "", _verdict(t, target)]
            for what, t, target in res.timings]  # fmt: skip
    base = res.timings[-1][1]
    ratio = f"boletim ÷ km report (best): {res.timings[0][1].best_ms / base.best_ms:.1f}x"
    return "\n".join(
        [head, *res.notes, "", table(["read", "best ms", "median ms", "target ms", "verdict"], rows), ratio]
    )


def _verdict(t: Timing, target: float | None) -> str:
    if target is None:
        return ""
    return "met" if t.median_ms < target else "NOT met"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.boletim", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="10 routes, 3 repetitions (judged on the scaled target)")
    p.add_argument("--routes", type=int, default=0, help="routes of the contract (default 40, --quick 10)")
    p.add_argument("--days", type=int, default=0, help="school days of the period (default 22)")
    p.add_argument("--reps", type=int, default=0, help="timed runs of each read")
    p.add_argument("--missed", type=int, default=0, help="days the first vehicle stays home (substitution path)")
    plan = plan_for(p.parse_args(argv))
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))  # unwind to drop the database
    settings = Settings()
    db = BenchDb.for_this_run(settings)
    print(f"bench: database {db.name}", file=sys.stderr)
    asyncio.run(db.create())
    try:
        res = asyncio.run(measure(db, settings, plan))
    finally:
        asyncio.run(db.drop())
    print(render(res))
    print(f"cleanup: database {db.name} {'NOT dropped' if asyncio.run(db.exists()) else 'dropped'}")
    return exit_code(res)


def exit_code(res: Result) -> int:
    """1 when a judged target is not met (the bench then fails where it runs: CI, bench.measurements), else 0."""
    return 0 if all(_verdict(t, target) != "NOT met" for _, t, target in res.timings) else 1


if __name__ == "__main__":
    sys.exit(main())
