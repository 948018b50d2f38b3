"""The runs a contract's routes are due to make over a period: school days × assignments × run plans; pure.

A route's runs are due on a day when (1) the day is a school day (contracts/calendar.py), (2) it lies inside
the contract's validity and the period asked for, and (3) some vehicle is assigned the route that day
(the assignment's dates and ISO weekdays, as the registry stood then: reports/store/asof.py). Each due day
becomes the route version's run plans (measurement/plans.py: one run, or one per scheduled leg), each worth
its share of the route's declared km, allotted by largest remainder so a day's runs sum to the declared km.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_FLOOR, ROUND_HALF_EVEN, Decimal

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
    contracted_km: Decimal  # the km this run is worth: its allotment of the declared km (allot), to the metre


def allot(total: Decimal, shares: Sequence[Decimal]) -> list[Decimal]:
    """`total` (km, to the metre) split in proportion to `shares` so that the parts sum to it exactly.

    Largest remainder to the metre: each part is first cut down to the metre, then the metres left over go one
    each to the parts with the largest remainders (ties: the earlier run). Rounding each part on its own would
    pay 38.456 km for two runs of a 38.455 km route.
    """
    whole = sum(shares, Decimal(0))
    if not shares:
        return []
    if whole <= 0:
        return [Decimal(0).quantize(METRE)] * len(shares)
    metres = int((total / METRE).to_integral_value(rounding=ROUND_HALF_EVEN))
    exact = [Decimal(metres) * s / whole for s in shares]
    parts = [int(e.to_integral_value(rounding=ROUND_FLOOR)) for e in exact]
    left = metres - sum(parts)
    for i in sorted(range(len(shares)), key=lambda i: (-(exact[i] - parts[i]), i))[:left]:
        parts[i] += 1
    return [(Decimal(p) * METRE).quantize(METRE) for p in parts]


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
        todo = sorted(plan(route, line(route), day), key=lambda p: p.run_no)
        for p, worth in zip(todo, allot(km, [p.share for p in todo]), strict=True):
            out.append(DueRun(p, route.code, km, due[(route_id, day)], worth))
    return out
