"""Planned km of a vehicle's day: its assigned routes' km, each route once, none without a route (pure)."""

from __future__ import annotations

from datetime import date

from telemetria.reports.kinds.km import planned
from telemetria.reports.model import Assignment, Route, Vehicle

MONDAY, TUESDAY = date(2026, 11, 23), date(2026, 11, 24)


def _route(i: int, km: float | None) -> Route:
    return Route(i, f"R{i}", f"Linha {i}", [], [], 60.0, 100.0, (), km)


def test_planned_km_sums_each_route_of_the_day_once() -> None:
    a, b = _route(1, 40.0), _route(2, 12.5)
    v = Vehicle(1, "AAA1A11", None, None, None, None)
    v.assignments.extend([
        Assignment(a, date(2026, 11, 1), None, frozenset({1, 2, 3, 4, 5})),
        Assignment(a, date(2026, 11, 20), date(2026, 11, 30), frozenset({1})),  # the same route again: counted once
        Assignment(b, date(2026, 11, 1), None, frozenset({1})),
    ])  # fmt: skip
    assert v.planned_km(MONDAY) == 52.5
    assert v.planned_km(TUESDAY) == 40.0
    assert v.planned_km(date(2026, 11, 22)) is None  # a Sunday: no route
    assert planned(v, [MONDAY, TUESDAY, date(2026, 11, 22)]) == 92.5
    assert planned(v, [date(2026, 11, 22)]) is None
