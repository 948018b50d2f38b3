"""The runs a contract's routes are due to make over a period: school days × assignments × run plans; pure.

A route's runs are due on a day when (1) the day is a school day (contracts/calendar.py), (2) it lies inside
the contract's validity and the period asked for, and (3) some vehicle is assigned the route that day
(the assignment's dates and ISO weekdays, as the registry stood then: reports/store/asof.py). Each due day
becomes the route version's run plans (measurement/plans.py: one run, or one per scheduled leg), each worth
its share of the route's declared km.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from telemetria.contracts.money import METRE
from telemetria.geo.routeline import RouteLine
from telemetria.measurement.model import RunPlan
from telemetria.reports.model import Route
from telemetria.reports.store.asof import AssignmentRow

PlanFn = Callable[[Route, RouteLine, date], list[RunPlan]]
LineFn = Callable[[Route], RouteLine]


@dataclass(frozen=True, slots=True)
class DueRun:
    """One run due: its plan, the route as it was that day and the vehicles assigned to it that day."""

    plan: RunPlan
    code: str
    declared_km: Decimal  # the route's declared km that day (a whole day's runs), to the metre
    vehicle_ids: tuple[int, ...]  # assigned that day, in the order of their assignments

    @property
    def contracted_km(self) -> Decimal:
        """The km this run is worth: declared km × its share of the day, to the metre."""
        return (self.declared_km * self.plan.share).quantize(METRE)


def days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=n) for n in range((last - first).days + 1)]


def due_days(
    first: date, last: date, school_days: Collection[date], route_ids: Iterable[int],
    assignments: Iterable[AssignmentRow],
) -> dict[tuple[int, date], tuple[int, ...]]:  # fmt: skip
    """(route_id, day) → the vehicles assigned that day, for every school day in first..last a route is assigned.

    `first`..`last` is already clipped to the contract's validity by the caller.
    """
    wanted = set(route_ids)
    by_route: dict[int, list[AssignmentRow]] = {}
    for a in assignments:
        if a.route_id in wanted:
            by_route.setdefault(a.route_id, []).append(a)
    out: dict[tuple[int, date], tuple[int, ...]] = {}
    for day in days(first, last):
        if day not in school_days:
            continue
        for route_id in sorted(by_route):
            vehicles = tuple(dict.fromkeys(a.vehicle_id for a in by_route[route_id] if a.on(day)))
            if vehicles:
                out[(route_id, day)] = vehicles
    return out


def declared(route: Route) -> Decimal:
    """The route's km per day as the contract counts them (its declared km, else its line's length), to the metre."""
    km = route.planned_km if route.planned_km is not None else 0.0
    return Decimal(repr(float(km))).quantize(METRE)


def due_runs(
    due: Mapping[tuple[int, date], tuple[int, ...]], routes_by_day: Mapping[date, Mapping[int, Route]],
    plan: PlanFn, line: LineFn,
) -> list[DueRun]:  # fmt: skip
    """The run plans of every due (route, day), by the route version of that day; in (day, route, run) order.

    A route missing from its day's registry (deleted since) has no plan and so no run.
    """
    out: list[DueRun] = []
    for route_id, day in sorted(due, key=lambda k: (k[1], k[0])):
        route = routes_by_day.get(day, {}).get(route_id)
        if route is None:
            continue
        km = declared(route)
        for p in sorted(plan(route, line(route), day), key=lambda p: p.run_no):
            out.append(DueRun(p, route.code, km, due[(route_id, day)]))
    return out
