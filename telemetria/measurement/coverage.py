"""What one vehicle's analysis shows of planned runs: coverage, km on and off the route, first and last fix (pure).

Coverage is the share of the run's stretch [m_from, m_to] traversed along the route inside the run's window:
the union of the along-route intervals of the segments the distance method measures along the run's route
(gaps bridged exactly when the km report bridges them), clipped to the stretch (reports/analysis/runs.py).
"""

from __future__ import annotations

from collections.abc import Sequence

from telemetria.measurement.model import Observation, RunPlan
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.runs import Seen, Stretch, along, seen


def route_index(a: Analysis, route_id: int) -> int:
    """Position of route `route_id` among the analysis's routes (ValueError when it was not analysed with it)."""
    for i, r in enumerate(a.routes):
        if r.id == route_id:
            return i
    raise ValueError(f"route {route_id} is not among the routes the analysis was made with")


def observation(plan: RunPlan, vehicle_id: int, x: Seen) -> Observation:
    """The Observation of `plan` by `vehicle_id` from what was seen of it."""
    return Observation(
        plan.route_id, plan.day, plan.run_no, vehicle_id, x.coverage, x.route_km, x.off_route_km, x.first, x.last
    )


def observe(a: Analysis, plans: Sequence[RunPlan]) -> list[Observation]:
    """One Observation per plan, in order, from analysis `a` (its routes must include each plan's route)."""
    segs = {r: along(a, route_index(a, r)) for r in dict.fromkeys(p.route_id for p in plans)}
    out = []
    for p in plans:
        s = Stretch(p.run_no, p.start, p.end, p.m_from, p.m_to, p.share)
        line = a.lines[route_index(a, p.route_id)]
        out.append(observation(p, a.vehicle.id, seen(a, segs[p.route_id], s, line=line)))
    return out
