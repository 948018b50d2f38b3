"""The runs a route is due to make on a day, as RunPlans: each run's window and stretch of the line (pure).

The rule (one run a day unless the scheduled times have a break; windows as the schedule's, never overlapping;
stretches split where the vehicle waits; shares summing to 1) is reports/analysis/runs.py's, where a day's
rollup computes the same runs; docs/contracts.md, "How a run's coverage is measured", explains it.
"""

from __future__ import annotations

from datetime import date

from telemetria.geo.routeline import RouteLine
from telemetria.measurement.model import RunPlan
from telemetria.reports.analysis.runs import RUN_BREAK_S, SCHOOL_BREAK_S, stretches
from telemetria.reports.analysis.schedule import scheduled_at
from telemetria.reports.model import Route

__all__ = ["RUN_BREAK_S", "SCHOOL_BREAK_S", "plan_runs"]


def plan_runs(route: Route, line: RouteLine, day: date) -> list[RunPlan]:
    """The runs of `route` (as it was on local date `day`, its line `line`) on that day, by scheduled time; each
    with its first scheduled time (the earliest of the stops' times inside its window), which gives its shift."""
    times = sorted(t for p in route.points if (t := scheduled_at(p, day)) is not None)
    return [
        RunPlan(route.id, day, s.run_no, s.start, s.end, s.m_from, s.m_to, s.share,
                next((t for t in times if s.start <= t <= s.end), None))
        for s in stretches(route, line, day)
    ]  # fmt: skip
