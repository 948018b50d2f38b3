"""The simulated month's generator: its plan, its ground truth per run, its uploads, and that it is seeded."""

from __future__ import annotations

from collections import Counter
from datetime import date
from decimal import Decimal
from functools import cache

import numpy as np
import pytest
import shapely
from pyproj import Transformer

from telemetria.contracts import calendar
from telemetria.localtime import LOCAL_TZ
from telemetria.sim.month import (
    DISMISSAL,
    EVENTS,
    SECOND_ROUTE,
    SECOND_VEHICLE,
    SPARE,
    TURN_AT,
    Month,
    simulate_month,
)
from telemetria.sim.truth import Truth

UTM = Transformer.from_crs("EPSG:4326", "EPSG:32720", always_xy=True)


@cache
def month() -> Month:
    return simulate_month()


def test_the_plan_has_one_of_each_case_on_school_days_only() -> None:
    m = month()
    sy = calendar.SchoolYear(2026, date(2026, 2, 2), date(2026, 12, 18),
                             (calendar.MarkedDay(date(2026, 3, 10), "chuva"),), ())  # fmt: skip
    # The generator's school days are the calendar's (weekdays, no national holiday in March, minus the marked day).
    assert list(m.school_days) == [d for d in calendar.school_days(sy) if d.month == 3]
    assert len(m.school_days) == 21 and date(2026, 3, 10) not in {r.day for r in m.runs}
    # Routes 1-3 and 5 make one run a day, route 4 two: 21 × 6 runs due, but for route 4's return on the
    # morning-only day.
    assert len(m.runs) == 125 and [len(r.runs) for r in m.routes] == [1, 1, 1, 2, 1]
    kinds = Counter(r.kind for r in m.runs)
    assert kinds == {"made": 116, "partial": 1, "not_made": 2, "substitution": 1, "late": 2, "morning_only": 1,
                     "dismissal": 2}  # fmt: skip
    assert Counter(r.status for r in m.runs) == {"made": 122, "partial": 1, "not_made": 2}
    # Two contracts: SIM-05 (the second's) runs along SIM-01's line on its timetable, with a vehicle of its own.
    second = m.routes[SECOND_ROUTE]
    assert (second.contract, second.vehicle, second.route) == (1, SECOND_VEHICLE, m.routes[0].route)
    assert {r.contract for r in m.routes[:SECOND_ROUTE]} == {0}
    assert m.morning_only == (m.school_days[12],) and m.dismissals == ((m.school_days[14], DISMISSAL),)
    assert not any(r.route == 3 and r.run_no == 2 and r.day in m.morning_only for r in m.runs)
    sub = next(r for r in m.runs if r.substitution)
    assert sub.vehicle == SPARE and sub.status == "made"
    assert [(e.kind, m.school_days[e.school_day]) for e in EVENTS] == [
        (r.kind, r.day) for r in m.runs if r.kind != "made" and r.run_no == 1
    ]


def test_route_four_runs_out_in_the_morning_and_back_at_midday() -> None:
    route = month().routes[3]
    (a0, a1), (b0, b1) = route.runs
    assert a0 == 0 and a1 == b0 == pytest.approx(route.length_m / 2) and b1 == route.length_m
    assert route.share(1) + route.share(2) == pytest.approx(Decimal(1), abs=Decimal("1e-12"))
    school = next(j for j, s in enumerate(route.stops) if s.kind == "school")
    times = [s.scheduled for s in route.stops]
    assert times == sorted(times)
    assert times[school].hour == 6 and times[school + 1].hour == 12  # the scheduled times split the day in two
    assert calendar.shift_of(times[school + 1]) == "tarde"  # the return is the afternoon's run


def _along(truth: Truth, line_lat: np.ndarray, line_lon: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each 1 Hz truth sample's distance from the route line and its measure along it, metres (UTM)."""
    lx, ly = UTM.transform(line_lon, line_lat)
    line = shapely.linestrings(np.column_stack([lx, ly]))
    px, py = UTM.transform(truth.lon, truth.lat)
    pts = shapely.points(px, py)
    return shapely.distance(line, pts), shapely.line_locate_point(line, pts)


def test_every_drive_stays_on_its_route_and_the_truth_km_are_what_it_drove() -> None:
    m = month()
    drives = iter(m.truths)
    for run in m.runs:
        if run.vehicle is None:
            assert run.kind == "not_made" and run.coverage == 0 and run.route_km == 0
            continue
        vehicle, truth = next(drives)
        assert vehicle == run.vehicle
        route = m.routes[run.route]
        off, _ = _along(truth, route.route.line.lat, route.route.line.lon)
        assert off.max() < 15.0, run  # corners are rounded with a 15 m radius; nothing else leaves the line
        m0, m1 = route.runs[run.run_no - 1]
        # Corner arcs cut a few metres per corner off what the line measures.
        assert truth.distance_m == pytest.approx(run.route_km * 1000, rel=0.01), run
        if run.kind == "partial":
            assert run.coverage == pytest.approx(2 * TURN_AT) and run.status == "partial"
            # It turned round TURN_AT along the line: its farthest point is there.
            _, s = _along(truth, route.route.line.lat[: len(route.route.line.lat) // 2 + 1],
                          route.route.line.lon[: len(route.route.line.lon) // 2 + 1])  # fmt: skip
            assert s.max() == pytest.approx(TURN_AT * route.length_m, abs=20)
        else:
            assert run.coverage == 1 and run.route_km == pytest.approx((m1 - m0) / 1000)
    assert next(drives, None) is None


def test_expected_pay_follows_the_default_rule() -> None:
    m = month()
    partial = next(r for r in m.runs if r.kind == "partial")
    route = m.routes[partial.route]
    assert m.expected_payable_km(partial) == pytest.approx(route.declared_km * Decimal(2 * TURN_AT))
    not_made = next(r for r in m.runs if r.kind == "not_made")
    assert m.expected_payable_km(not_made) == 0
    two = [r for r in m.runs if r.route == 3 and r.day == m.school_days[0]]
    assert sum(m.expected_payable_km(r) for r in two) == pytest.approx(m.routes[3].declared_km)


def test_uploads_are_the_days_fixes_with_the_late_day_last() -> None:
    m = month()
    late_day = m.school_days[next(e.school_day for e in EVENTS if e.kind == "late")]
    late = [p for p in m.posts if p.late]
    assert late and {p.day for p in late} == {late_day} and all(p.late for p in m.posts[-len(late) :])
    live_sent = [p.upload.sent_at for p in m.posts if not p.late]
    assert live_sent == sorted(live_sent) and min(p.upload.sent_at for p in late) >= max(live_sent)
    for p in m.posts:
        assert all(f.ts.astimezone(LOCAL_TZ).date() == p.day for f in p.upload.fixes)
    # The spare vehicle reports only on the substitution day; the not-made day's vehicle only parked.
    sub_day = m.school_days[next(e.school_day for e in EVENTS if e.kind == "substitution")]
    assert {p.day for p in m.posts if p.vehicle == SPARE} == {sub_day}
    nm = next(e for e in EVENTS if e.kind == "not_made")
    parked = [f for p in m.posts if p.vehicle == nm.route and p.day == m.school_days[nm.school_day]
              for f in p.upload.fixes]  # fmt: skip
    assert parked and all(f.speed_kmh == 0 and f.ignition is False for f in parked)
    fixes = sum(len(p.upload.fixes) for p in m.posts)
    assert 8_000 < fixes < 20_000


def test_same_seed_same_month_other_seed_other_month() -> None:
    a, b = month(), simulate_month()
    assert a.runs == b.runs
    assert [(p.vehicle, p.upload.sent_at, p.upload.fixes) for p in a.posts] == [
        (p.vehicle, p.upload.sent_at, p.upload.fixes) for p in b.posts
    ]
    assert [s.stops for s in a.routes] == [s.stops for s in b.routes]
    other = simulate_month(seed=18)
    assert [r.length_m for r in other.routes] != [r.length_m for r in a.routes]
