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
from telemetria.reports.model import Route

__all__ = ["RUN_BREAK_S", "SCHOOL_BREAK_S", "plan_runs"]


def plan_runs(route: Route, line: RouteLine, day: date) -> list[RunPlan]:
    """The runs of `route` (as it was on local date `day`, its line `line`) on that day, by scheduled time."""
    return [
        RunPlan(route.id, day, s.run_no, s.start, s.end, s.m_from, s.m_to, s.share) for s in stretches(route, line, day)
    ]
