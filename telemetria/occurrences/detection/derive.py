"""The occurrence candidates of the database's facts: a vehicle's window of fixes, and a day's contract runs.

Inputs come from the same places the reports and the measurement take them (reports/store/fetch.py for a
vehicle's track with context and its analysis per local day, reports/store/context.py and asof.py for the
registry as it stood that day, measurement/store.py for the boletim's lines); the rules that turn them into
candidates are pure (rules.py). Read-only: nothing here writes to the database (a detector's window keeps its
analysis' per-fix values in the process, through chunkread.Shared).

A window is always derived from the analysis of each WHOLE local day it touches (the one the day's rollup and
the schedule report compute), keeping the candidates that start inside it: so a day in one piece or in hours
gives the same candidates, and they are those of the reports.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal

from telemetria.db import Conn
from telemetria.http import FieldError
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement import plans, store
from telemetria.measurement import queries as mq
from telemetria.measurement.boletim import Line
from telemetria.measurement.document import Computed
from telemetria.measurement.model import RunPlan
from telemetria.occurrences.detection import chunkread, rules, trackcache
from telemetria.occurrences.detection import derive_queries as dq
from telemetria.occurrences.model import Candidate, Kind
from telemetria.occurrences.params import DEFAULT, DetectParams
from telemetria.reports.analysis import engine, perfix
from telemetria.reports.analysis.days import day_bounds, split
from telemetria.reports.analysis.schedule import runs_of
from telemetria.reports.model import NotFound, Route, Selection, Window
from telemetria.reports.store import asof, context, fetch

log = logging.getLogger(__name__)

# Run plans depend only on the route's line and stops and the day (plans.plan_runs is pure): kept between
# windows and rounds, so a fleet sharing routes plans each route-day once. Keyed by the route's digest (which
# changes with anything a report derives from it) and the day; only bounded.
_PLANS: dict[tuple[str, date], tuple[RunPlan, ...]] = {}
PLANS_MAX = 20_000


def run_plans_of(route: Route, day: date) -> list[RunPlan]:
    """plans.plan_runs of `route` (as it was on local date `day`) on that day, computed once per route and day."""
    key = (route.digest, day)
    found = _PLANS.get(key)
    if found is None:
        if len(_PLANS) >= PLANS_MAX:
            _PLANS.clear()
        found = _PLANS[key] = tuple(plans.plan_runs(route, engine.line(route), day))
    return list(found)


async def window_candidates(
    conn: Conn, vehicle_id: int, start: datetime, end: datetime, *, now: datetime, params: DetectParams = DEFAULT,
    shared: chunkread.Shared | None = None,
) -> list[Candidate]:  # fmt: skip
    """Every candidate of kinds speeding, route_deviation, unauthorized_stop, schedule_delay, over_2h_on_board and
    tracker_silent of the vehicle whose START lies in [start, end) (aware instants), computed by fix time from its
    fixes with context and the registry as it stood on each local day the window touches.

    `now` (aware) is used only for what is still going on: a live silence (no fix for more than silent_s while
    `now` is inside a due run window: end=None) and episodes still open at the last fix. The same fixes in any
    arrival order give the same candidates, and a day computed whole or in pieces gives the same union. An
    unknown vehicle gives no candidates.
    """
    if end <= start:
        return []
    days = sorted({d for d, _, _ in split(start, end)})
    win = Window(day_bounds(days[0])[0], day_bounds(days[-1])[1], LOCAL_TZ)
    ctx = shared.context(vehicle_id, days[0], days[-1]) if shared is not None else None
    if ctx is None:
        try:
            ctx = await context.load(conn, None, Selection([vehicle_id], None, None), win)
        except NotFound:
            return []
    vehicle = ctx.vehicle(vehicle_id)
    assert vehicle is not None  # load raised NotFound otherwise
    calendar = shared.calendar if shared is not None else chunkread.Days()
    t_now = now.timestamp()
    out: list[Candidate] = []
    for day, d0, d1 in chunkread.local_days(start, end, now):
        piece = (vehicle_id, d0)
        # Taken out of what the chunk read: the day is analysed once, and its fixes are not held for the chunk's end.
        fixes = shared.fixes.pop(piece, None) if shared is not None else None
        network = ctx.network_on(day)
        basis = vehicle.basis(day, ctx.zones_digest(day), params.report, network)
        kept = shared.prior.get(piece) if shared is not None else None
        prior = perfix.Prior(kept[0].per_fix, kept[1], kept[0].roads) if kept and kept[0].basis == basis else None
        a = await fetch.analyze_piece(
            conn, vehicle, ctx.zones, day, d0, d1, params.report, network, fixes, inline=shared is not None,
            prior=prior,
        )  # fmt: skip
        if shared is not None and shared.kept is not None and fixes is not None:
            shared.kept.cache.keep_computed(vehicle_id, d0, trackcache.Computed(a.per_fix(), basis, a.roads))
        due = [r for r in a.routes if await calendar.due(conn, r, day)]
        run_plans = {r.id: run_plans_of(r, day) for r in a.routes}
        timed = any(p.scheduled is not None for r in a.routes for p in r.points)
        runs = runs_of(a, day, params.report) if timed else []
        by_route = {r.id: run for r, run in runs}
        spans = [s for r in due for s in rules.due_spans(r, run_plans[r.id], day, by_route.get(r.id), t_now)]
        t = a.track.t
        before = after = None
        if chunkread.before_needed(t, d0):  # nothing before the day in the track: since when was it quiet?
            if shared is not None and piece in shared.before:
                before = shared.before[piece]
            else:
                before = chunkread.edge(await dq.fix_before(conn, vehicle_id, d0, chunkread.LOOK_BACK))
        if chunkread.after_needed(t, d1):  # the track ends inside the day: where does it resume?
            if shared is not None and piece in shared.after:
                after = shared.after[piece]
            else:
                after = chunkread.edge(await dq.fix_after(conn, vehicle_id, chunkread.last(t, d1)))
        found = rules.day_candidates(a, day, runs, run_plans, spans, before, after, t_now, params)
        out += [c for c in found if start <= c.start < end]
    return out


async def _plans(conn: Conn, route_ids: Sequence[int], day: date) -> dict[tuple[int, int], RunPlan]:
    """(route, run_no) → the run plan of the routes as they were on `day`."""
    routes = await asof.routes_on(conn, route_ids, day)
    return {(p.route_id, p.run_no): p for r in routes.values() for p in run_plans_of(r, day)}


def _made_pct(computed: Computed, day: date) -> Decimal | None:
    return next((t.rule.made_min_coverage_pct for lo, hi, t in computed.terms if lo <= day <= hi), None)


def _not_made(ln: Line, plan: RunPlan, made_pct: Decimal | None, contractor_id: int) -> Candidate | None:
    if ln.vehicle_id is None:
        return None
    return Candidate(
        Kind.RUN_NOT_MADE, ln.vehicle_id, datetime.fromtimestamp(plan.start, UTC),
        datetime.fromtimestamp(plan.end, UTC),
        route_id=ln.route_id, run_no=ln.run_no, key=rules.run_key(ln.route_id, ln.day, ln.run_no),
        place=f"rota {ln.code}",
        facts={"coverage_pct": float(ln.coverage_pct), "made_pct": None if made_pct is None else float(made_pct),
               "declared_km": float(ln.declared_km), "contracted_km": float(ln.contracted_km)},
        contractor_id=contractor_id,
    )  # fmt: skip


def _unauthorized(ln: Line, plan: RunPlan, assigned: Sequence[int], info: dict[int, dict[str, object]],
                  contractor_id: int) -> Candidate | None:  # fmt: skip
    if ln.vehicle_id is None:
        return None
    v = info.get(ln.vehicle_id)
    why = "unknown" if v is None else "inactive" if not v["active"] else "not_contractors"
    if v is not None and v["active"] and v["contractor_id"] == contractor_id:
        why = "unknown"  # the boletim decided with the registry of its day; now it looks authorized
    return Candidate(
        Kind.UNAUTHORIZED_VEHICLE, ln.vehicle_id, datetime.fromtimestamp(plan.start, UTC),
        datetime.fromtimestamp(plan.end, UTC), route_id=ln.route_id, run_no=ln.run_no,
        key=rules.run_key(ln.route_id, ln.day, ln.run_no), place=f"rota {ln.code}",
        facts={"plate": ln.plate, "status": ln.status, "coverage_pct": float(ln.coverage_pct), "reason": why,
               "assigned_vehicle_ids": list(assigned),
               "first_fix": rules.iso(ln.first) if ln.first is not None else None,
               "last_fix": rules.iso(ln.last) if ln.last is not None else None},
        completed_ts=datetime.fromtimestamp(ln.last, UTC) if ln.last is not None else None,
        contractor_id=contractor_id,  # the contract holder answers for who made its run, not the vehicle's owner
    )  # fmt: skip


async def run_windows(conn: Conn, day: date) -> dict[tuple[int, int], tuple[datetime, datetime]]:
    """(route_id, run_no) → [start, end) of each run the contracts' routes make on local date `day` (whether due or
    not: the calendar is not read), so that a caller knows when run_candidates has something new to judge: at a
    window's end + run_grace_s, or when fixes inside an ended window change."""
    route_ids = await dq.contracted_routes(conn)
    return {k: (datetime.fromtimestamp(p.start, UTC), datetime.fromtimestamp(p.end, UTC))
            for k, p in (await _plans(conn, route_ids, day)).items()}  # fmt: skip


async def run_candidates(
    conn: Conn, day: date, *, now: datetime, params: DetectParams = DEFAULT, routes: Collection[int] | None = None
) -> list[Candidate]:
    """The run_not_made and unauthorized_vehicle candidates of every contract on local date `day`, from the boletim's
    lines (measurement/store.py): only runs whose window ended before now - run_grace_s. Key "route:day:run_no".

    A contract whose school year is not registered, that has no price in force, or that is not valid on `day`,
    gives none. Each contract's boletim is computed only for the routes with a run already judged (and among
    `routes`, when given): it observes every such run from the fixes, so call it when a run window has ended or
    fixes inside an ended one changed (run_windows), not every round.
    """
    cutoff = now.timestamp() - params.run_grace_s
    if day_bounds(day)[0].timestamp() >= cutoff:
        return []
    out: list[Candidate] = []
    for head in await store.contracts(conn, None, None):
        if not head.covers(day, day):
            continue
        route_ids = [r["id"] for r in await conn.fetch(mq.CONTRACT_ROUTES, [head.id])]
        if routes is not None:
            route_ids = [r for r in route_ids if r in routes]
        ended = {k: p for k, p in (await _plans(conn, route_ids, day)).items() if p.end <= cutoff}
        if not ended:
            continue
        try:
            computed = await store.compute(conn, head, day, day, route_ids=sorted({r for r, _ in ended}), where="day")
        except FieldError:
            continue  # no school year or no price that day: there is no boletim to judge runs by
        lines = [ln for ln in computed.lines if (ln.route_id, ln.run_no) in ended]
        made_pct = _made_pct(computed, day)
        flagged = [ln for ln in lines if ln.unauthorized and ln.status in ("made", "partial")]
        info = await dq.vehicles(conn, [ln.vehicle_id for ln in flagged if ln.vehicle_id is not None], day)
        assigned: dict[int, list[int]] = {}
        for a in await asof.assignments(conn, route_ids, day, day):
            if a.on(day):
                assigned.setdefault(a.route_id, []).append(a.vehicle_id)
        for ln in lines:
            plan = ended[(ln.route_id, ln.run_no)]
            c: Candidate | None = None
            if ln.status == "not_made" and ln.justification is None:
                c = _not_made(ln, plan, made_pct, head.contractor_id)
            elif ln in flagged:
                c = _unauthorized(ln, plan, sorted(set(assigned.get(ln.route_id, []))), info, head.contractor_id)
            if c is not None:
                out.append(c)
    return sorted(out, key=lambda c: (c.start, c.kind, c.key or ""))
