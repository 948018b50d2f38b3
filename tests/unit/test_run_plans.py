"""Run plans: how many runs a route makes on a day, their windows and their stretches of the line; no database."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime, time
from decimal import Decimal
from itertools import pairwise

import numpy as np
import pytest

from telemetria.geo.geodesic import GEOD
from telemetria.geo.routeline import RouteLine
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement.plans import plan_runs
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.runs import stop_measures
from telemetria.reports.analysis.schedule import EARLY_S, LATE_S
from telemetria.reports.model import Point, Route

DAY = date(2026, 3, 2)
LON0, LAT0 = -62.47, -10.43


def at(along_m: list[float], north_m: float = 0.0) -> tuple[list[float], list[float]]:
    """Points along_m east of Jaru's centre and north_m north of that road, degrees."""
    d = np.asarray(along_m, dtype=float)
    lon, lat, _ = GEOD.fwd(np.full(d.shape, LON0), np.full(d.shape, LAT0), np.full(d.shape, 90.0), d)
    lon, lat, _ = GEOD.fwd(lon, lat, np.zeros(d.shape), np.full(d.shape, north_m))
    return [float(x) for x in lon], [float(y) for y in lat]


def epoch(hhmm: str) -> float:
    return datetime.combine(DAY, time.fromisoformat(hhmm), LOCAL_TZ).timestamp()


def route(stops: Sequence[tuple[float, str, str | None]], vertices: list[float]) -> tuple[Route, RouteLine]:
    """A route along `vertices` (m east of Jaru) with stops (m east, kind, scheduled HH:MM or None) in seq order."""
    lon, lat = at(vertices)
    points = []
    for seq, (x, kind, hhmm) in enumerate(stops, 1):
        plon, plat = at([x], 4.0)
        points.append(Point(f"P{seq}", kind, plat[0], plon[0], seq, None if hhmm is None else f"{hhmm}:00", 7))
    r = Route(7, "R7", "Linha 7", lon, lat, 60.0, 100.0, tuple(points), planned_km=20.0)
    return r, RouteLine.of(lon, lat)


OUT_AND_BACK = [0.0, 10_000.0, 0.0]  # garage → school 10 km east → garage: 20 km, passes on one road


def test_without_scheduled_times_one_run_covers_the_whole_line_all_day() -> None:
    r, line = route([(2000.0, "boarding", None), (10_000.0, "school", None)], OUT_AND_BACK)
    (plan,) = plan_runs(r, line, DAY)
    d0, d1 = day_bounds(DAY)
    assert (plan.route_id, plan.day, plan.run_no) == (7, DAY, 1)
    assert (plan.start, plan.end) == (d0.timestamp(), d1.timestamp())
    assert (plan.m_from, plan.m_to, plan.share) == (0.0, line.length_m, Decimal(1))


def test_a_morning_run_out_and_a_midday_run_back_split_at_the_school() -> None:
    stops = [
        (2000.0, "boarding", "06:30"), (6000.0, "boarding", "06:45"), (10_000.0, "school", "07:10"),
        (6000.0, "boarding", "11:50"), (2000.0, "boarding", "12:05"),
    ]  # fmt: skip
    r, line = route(stops, OUT_AND_BACK)
    morning, midday = plan_runs(r, line, DAY)
    assert (morning.run_no, midday.run_no) == (1, 2)
    assert morning.m_from == 0.0 and midday.m_to == line.length_m
    assert morning.m_to == midday.m_from == pytest.approx(line.length_m / 2, abs=1.0)  # at the school
    assert (morning.start, morning.end) == (epoch("06:30") - EARLY_S, epoch("07:10") + LATE_S)
    assert (midday.start, midday.end) == (epoch("11:50") - EARLY_S, epoch("12:05") + LATE_S)
    assert morning.share + midday.share == Decimal(1)
    assert float(morning.share) == pytest.approx(0.5, abs=1e-4)
    assert isinstance(morning.share, Decimal) and morning.share.as_tuple().exponent == -6


def test_windows_that_would_overlap_are_cut_inside_the_break_in_the_ratio_late_to_early() -> None:
    stops = [(2000.0, "boarding", "06:30"), (10_000.0, "school", "07:00"), (2000.0, "boarding", "08:30")]
    r, line = route(stops, OUT_AND_BACK)
    first, second = plan_runs(r, line, DAY)
    cut = epoch("07:00") + 90 * 60 * LATE_S / (LATE_S + EARLY_S)
    assert first.end == second.start == cut == epoch("08:00")
    assert first.start == epoch("05:30") and second.end == epoch("10:30")


@pytest.mark.parametrize(
    ("kind", "wait_min", "runs"),
    [("school", 60, 2), ("school", 59, 1), ("boarding", 89, 1), ("boarding", 90, 2)],
)
def test_a_break_is_an_hour_after_a_school_or_ninety_minutes_after_any_stop(
    kind: str, wait_min: int, runs: int
) -> None:
    after = f"{7 + wait_min // 60:02d}:{wait_min % 60:02d}"
    stops = [(2000.0, "boarding", "06:30"), (5000.0, kind, "07:00"), (8000.0, "boarding", after)]
    r, line = route(stops, [0.0, 10_000.0])
    plans = plan_runs(r, line, DAY)
    assert len(plans) == runs
    if runs == 2:
        assert plans[0].m_to == plans[1].m_from == pytest.approx(5000.0, abs=1.0)
        assert [float(p.share) for p in plans] == pytest.approx([0.5, 0.5], abs=1e-4)


def test_shares_are_the_stretches_and_sum_to_exactly_one() -> None:
    stops = [
        (1000.0, "boarding", "06:00"), (3333.3, "school", "06:40"), (3333.3, "boarding", "11:00"),
        (7777.7, "school", "11:40"), (7777.7, "boarding", "16:00"), (9000.0, "boarding", "16:20"),
    ]  # fmt: skip
    r, line = route(stops, [0.0, 10_000.0])
    plans = plan_runs(r, line, DAY)
    assert [p.run_no for p in plans] == [1, 2, 3]
    assert sum((p.share for p in plans), Decimal(0)) == Decimal(1)
    for p in plans:
        assert float(p.share) == pytest.approx((p.m_to - p.m_from) / line.length_m, abs=2e-6)
    assert [p.m_from for p in plans[1:]] == [p.m_to for p in plans[:-1]]  # contiguous, in order
    ends = [(p.start, p.end) for p in plans]
    assert all(a[1] <= b[0] for a, b in pairwise(ends))  # windows never overlap


def test_windows_stay_inside_the_local_day() -> None:
    r, line = route([(2000.0, "boarding", "00:20"), (9000.0, "school", "23:10")], [0.0, 10_000.0])
    plans = plan_runs(r, line, DAY)
    d0, d1 = day_bounds(DAY)
    assert plans[0].start == d0.timestamp() and plans[-1].end == d1.timestamp()


def test_a_break_at_the_line_start_does_not_make_an_empty_run() -> None:
    # The school is the first stop: splitting there would leave run 1 no stretch; its runs are joined.
    stops = [(0.0, "school", "07:00"), (5000.0, "boarding", "11:00"), (9000.0, "boarding", "11:20")]
    r, line = route(stops, [0.0, 10_000.0])
    (plan,) = plan_runs(r, line, DAY)
    assert (plan.m_from, plan.m_to, plan.share) == (0.0, line.length_m, Decimal(1))
    assert (plan.start, plan.end) == (epoch("07:00") - EARLY_S, epoch("11:20") + LATE_S)


def test_stops_project_monotonically_so_return_stops_land_on_the_return_pass() -> None:
    r, line = route([(2000.0, "boarding", None), (10_000.0, "school", None), (2000.0, "boarding", None)], OUT_AND_BACK)
    points = sorted(r.points, key=lambda p: p.seq)
    assert stop_measures(points, line, 100.0) == pytest.approx([2000.0, 10_000.0, 18_000.0], abs=1.0)
    # A stop off the line (beyond tolerance) still gets its nearest place.
    far_lon, far_lat = at([4000.0], 300.0)
    far = Point("Longe", "boarding", far_lat[0], far_lon[0], 1)
    assert stop_measures([far], line, 100.0) == pytest.approx([4000.0], abs=1.0)
