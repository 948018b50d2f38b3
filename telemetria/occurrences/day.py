"""`GET /api/v1/day`: the servidor's day panel — who is in service now, today's due runs as GPS shows them so far,
the alerts waiting for review, the trackers silent while due, and today's 30 s-rule compliance of the fleet.

Every figure comes from the pipeline that computes it elsewhere, so the panel never disagrees with a report:
the runs from the measurement (measurement/store.py: the contract's due runs and their status by its rule), the
compliance from the `reporting` report's own sums (reports/kinds/reporting.py), the fleet from latest_fixes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from fastapi import APIRouter, Depends
from fastapi.responses import Response

from telemetria.auth.guard import require
from telemetria.auth.roles import Perm, Principal
from telemetria.db import Conn as Connection
from telemetria.deps import Conn
from telemetria.http import FieldError, json_response
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement import plans, store
from telemetria.measurement.boletim import Line
from telemetria.measurement.due import DueRun
from telemetria.occurrences import day_queries as q
from telemetria.occurrences.detection.duewindows import DueWindows
from telemetria.occurrences.model import KIND_NAMES, Kind
from telemetria.reports.analysis.engine import line as route_line
from telemetria.reports.kinds.reporting import Day, due_windows
from telemetria.reports.knobs import DEFAULT as REPORT_DEFAULT
from telemetria.reports.model import Selection, Window
from telemetria.reports.store import asof
from telemetria.reports.store.context import load
from telemetria.reports.store.fetch import analyses

router = APIRouter(prefix="/api/v1", tags=["fiscalização"])

RECENT_S = 300.0  # a vehicle is "in service now" with a fix at most this old ...
ZERO = Decimal(0)
MOVING_KMH = 5.0  # ... and moving at least this fast, or inside a due run's window
SILENT_S = 300.0  # a tracker due in service and silent this long is listed (DetectParams.silent_s's default)

# What a run of today looks like so far (the page's words are in static/js/fisc/names.js).
MADE, PARTIAL, IN_PROGRESS, NOT_STARTED, UPCOMING, NOT_MADE, JUSTIFIED = (
    "made", "partial", "in_progress", "not_started", "upcoming", "not_made", "justified",
)  # fmt: skip
STATES = (MADE, PARTIAL, IN_PROGRESS, NOT_STARTED, UPCOMING, NOT_MADE, JUSTIFIED)


def run_state(status: str, start: float, end: float, first: float | None, now: float) -> str:
    """A run's state at `now` (epoch s): its measured status once made or over, else where it stands in its window.

    `status` is the boletim's (made, partial, not_made, justified) for the GPS seen so far; `first` the time of
    the first fix on the route in the window (None: none yet).
    """
    if status == "made":
        return MADE
    if status == "justified":
        return JUSTIFIED
    if now < start:
        return UPCOMING
    if now <= end:
        return IN_PROGRESS if first is not None else NOT_STARTED
    return PARTIAL if status == "partial" else NOT_MADE


@dataclass(frozen=True, slots=True)
class Run:
    contract: str
    line: Line
    start: float
    end: float
    state: str

    def due_now(self, now: float) -> bool:
        return self.start <= now <= self.end


def _iso(t: float | datetime | None) -> str | None:
    if t is None:
        return None
    when = t if isinstance(t, datetime) else datetime.fromtimestamp(t, UTC)
    return when.astimezone(LOCAL_TZ).isoformat()


async def today_runs(conn: Connection, scope: int | None, day: date, now: float) -> tuple[list[Run], list[str]]:
    """The due runs of `day` of every contract in force (the caller's only, when scoped), and notes on what is
    missing for them (a school year not set up)."""
    runs: list[Run] = []
    notes: list[str] = []
    for head in await store.contracts(conn, scope, None):
        if not head.covers(day, day):
            continue
        try:
            computed = await store.compute(conn, head, day, day, frozen=False, judge_all=True)
        except FieldError as e:  # no school year, no price in force: the measurement says which
            notes.append(f"Contrato {head.number}: {e}")
            continue
        lines = [ln for ln in computed.lines if ln.day == day]
        if not lines:  # nothing due that day (no route, or no school): no calendar to read
            continue
        routes = await asof.routes_on(conn, sorted({ln.route_id for ln in lines}), day)
        # each run's window as the day was: moved by a schedule change (an early dismissal), as the boletim judged it
        timetable = [DueRun(p, route.code, ZERO, (), ZERO) for route in routes.values()
                     for p in plans.plan_runs(route, route_line(route), day)]  # fmt: skip
        windows = {(r.plan.route_id, r.plan.run_no): (r.plan.start, r.plan.end)
                   for r in (await store.school_calendar(conn, [day], "date")).follow(timetable)}  # fmt: skip
        for ln in lines:
            start, end = windows.get((ln.route_id, ln.run_no), (0.0, 0.0))
            runs.append(Run(head.number, ln, start, end, run_state(ln.status, start, end, ln.first, now)))
    runs.sort(key=lambda r: (r.start, r.line.code, r.line.run_no))
    return runs, notes


async def compliance(conn: Connection, scope: int | None, day: date, now: datetime) -> dict[str, Any]:
    """Today's 30 s rule for the fleet, summed exactly as the `reporting` report sums each vehicle's day."""
    win = Window(datetime.combine(day, time(), LOCAL_TZ), now, LOCAL_TZ)
    ctx = await load(conn, scope, Selection(None, None, None), win)
    fleet = Day()
    per_vehicle = []
    due = DueWindows()  # a due run's window is time in service, reported or not: silence reads 0 % (issue 36)
    for v in ctx.vehicles:
        mine = Day()
        async for a in analyses(conn, ctx, v, win, REPORT_DEFAULT):
            windows = await due_windows(conn, due, a)
            mine.add(a, REPORT_DEFAULT, windows, now.timestamp())
            fleet.add(a, REPORT_DEFAULT, windows, now.timestamp())
        if mine.service_s > 0:
            per_vehicle.append({"vehicle_id": v.id, "plate": v.plate, **mine.row()})
    per_vehicle.sort(key=lambda r: (r["coverage"], r["plate"]))
    total = fleet.row()
    return {
        "coverage": total["coverage"], "in_service_s": total["in_service_s"], "gaps_over_30s": total["gaps_over_30s"],
        "late_fixes": total["late_fixes"], "vehicles": len(per_vehicle), "worst": per_vehicle[:5],
    }  # fmt: skip


def _fleet_now(rows: Sequence[q.FleetRow], runs: Sequence[Run], now: datetime) -> tuple[list[Any], list[Any]]:
    """(vehicles in service now, trackers silent while due): by the newest fix's age and today's run windows."""
    t = now.timestamp()
    due: dict[int, Run] = {}
    for each in runs:
        if each.due_now(t) and each.line.vehicle_id is not None:
            due.setdefault(each.line.vehicle_id, each)
    in_service, silent = [], []
    for r in rows:
        age = None if r.ts is None else max(0.0, (now - r.ts).total_seconds())
        run = due.get(r.vehicle_id)
        base = {"vehicle_id": r.vehicle_id, "plate": r.plate, "prefix": r.prefix, "contractor": r.contractor,
                "time": _iso(r.ts), "age_s": None if age is None else round(age)}  # fmt: skip
        moving = r.speed_kmh is not None and r.speed_kmh >= MOVING_KMH
        if age is not None and age <= RECENT_S and (moving or run is not None):
            in_service.append({**base, "lat": r.lat, "lon": r.lon, "speed_kmh": r.speed_kmh,
                               "route": run.line.code if run else None})  # fmt: skip
        if run is not None and (age is None or age > SILENT_S):
            silent.append({**base, "route": run.line.code, "run_no": run.line.run_no})
    return in_service, silent


def _run_json(r: Run) -> dict[str, Any]:
    ln = r.line
    return {
        "contract": r.contract, "route_id": ln.route_id, "code": ln.code, "run_no": ln.run_no,
        "start": _iso(r.start), "end": _iso(r.end), "vehicle_id": ln.vehicle_id, "plate": ln.plate,
        "state": r.state, "status": ln.status, "coverage_pct": float(ln.coverage_pct),
        "substitution": ln.substitution, "unauthorized": ln.unauthorized,
        "first": _iso(ln.first), "last": _iso(ln.last),
    }  # fmt: skip


async def panel(conn: Connection, scope: int | None, now: datetime) -> dict[str, Any]:
    """The day panel's JSON at `now` (aware) for a caller scoped to `scope` (None: the whole fleet)."""
    day = now.astimezone(LOCAL_TZ).date()
    runs, notes = await today_runs(conn, scope, day, now.timestamp())
    in_service, silent = _fleet_now(await q.fleet(conn, scope), runs, now)
    # A contractor sees occurrences only once notified: the ones waiting for review are the Secretaria's.
    since = day - timedelta(days=1)  # yesterday and today, whole local days: the list's `from` and `to`
    waiting = await q.open_alerts(conn, datetime.combine(since, time(), LOCAL_TZ)) if scope is None else {}
    by_kind = [{"kind": k.value, "name": KIND_NAMES[k], "count": waiting.get(k.value, 0)} for k in Kind]
    counts = {s: sum(1 for r in runs if r.state == s) for s in STATES}
    return {
        "day": day.isoformat(), "now": _iso(now),
        "vehicles": {"in_service": len(in_service), "items": in_service},
        "runs": {"due": len(runs), "counts": counts, "items": [_run_json(r) for r in runs]},
        "alerts": {"open": sum(waiting.values()), "by_kind": by_kind, "from": since.isoformat(), "to": day.isoformat()},
        "silent": silent,
        "reporting": await compliance(conn, scope, day, now),
        "notes": notes,
    }  # fmt: skip


@router.get("/day")
async def day_panel(who: Principal = Depends(require(Perm.READ)), *, conn: Conn) -> Response:
    """Today so far: vehicles in service, due runs by state, alerts to review, silent trackers, 30 s compliance."""
    return json_response(await panel(conn, who.scope, datetime.now(UTC)))
