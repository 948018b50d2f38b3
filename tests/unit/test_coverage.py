"""Coverage of a run: synthetic tracks along synthetic lines, and a simulated run; no database."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta

import numpy as np
import pytest

from telemetria.fix import Fix
from telemetria.geo.geodesic import GEOD
from telemetria.geo.routeline import RouteLine
from telemetria.measurement.coverage import observe
from telemetria.measurement.model import Observation, RunPlan
from telemetria.measurement.plans import plan_runs
from telemetria.reports.analysis import engine
from telemetria.reports.analysis.distance import CHORD, ROUTE
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Point, Route, Vehicle
from telemetria.sim import MotionParams, TrackerParams, simulate_vehicle, vehicle_route
from telemetria.sim import drive as sim_drive
from telemetria.sim import track as sim_track
from telemetria.sim.month import turned

DAY = date(2026, 3, 2)
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)  # 06:00 in Porto Velho
LON0, LAT0 = -62.47, -10.43
SPEED = 48.0  # km/h: 400 m every 30 s


def at(along_m: list[float] | np.ndarray, north_m: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Points along_m east of Jaru's centre and north_m north of that road, degrees."""
    d = np.asarray(along_m, dtype=float)
    lon, lat, _ = GEOD.fwd(np.full(d.shape, LON0), np.full(d.shape, LAT0), np.full(d.shape, 90.0), d)
    lon, lat, _ = GEOD.fwd(lon, lat, np.zeros(d.shape), np.full(d.shape, north_m))
    return np.asarray(lon), np.asarray(lat)


def drive(path_m: list[float], start: datetime = T0, every_s: float = 30.0, north_m: float = 3.0) -> list[Fix]:
    """Fixes at 48 km/h along a path of positions east of Jaru (m), heading east or west as the path goes."""
    out = []
    for k, x in enumerate(path_m):
        nxt = path_m[min(k + 1, len(path_m) - 1)] - path_m[max(k - 1, 0)]
        lon, lat = at([x], north_m)
        heading = 90.0 if nxt >= 0 else 270.0
        out.append(Fix(start + timedelta(seconds=k * every_s), float(lat[0]), float(lon[0]), speed_kmh=SPEED,
                       heading_deg=heading))  # fmt: skip
    return out


def steps(a: float, b: float, step: float = 400.0) -> list[float]:
    """Positions from a to b (both included) every `step` metres."""
    n = max(1, round(abs(b - a) / step))
    return [a + (b - a) * k / n for k in range(n + 1)]


def line_route(vertices: list[float], points: tuple[Point, ...] = ()) -> tuple[Route, RouteLine]:
    lon, lat = at(vertices)
    r = Route(7, "R7", "Linha 7", lon.tolist(), lat.tolist(), 60.0, 100.0, points, planned_km=None)
    return r, engine.line(r)


def analysed(fixes: list[Fix], routes: list[Route]) -> engine.Analysis:
    d0 = datetime(2026, 3, 2, 4, 0, tzinfo=UTC).timestamp()  # local midnight
    track = Track.of(fixes)
    vehicle = Vehicle(1, "AAA1A11", None, None, None, None)
    return engine.analyze(track, vehicle, routes, [engine.line(r) for r in routes], [], d0, d0 + 86_400, DEFAULT)


def seen(fixes: list[Fix], route: Route, line: RouteLine, others: tuple[Route, ...] = ()) -> list[Observation]:
    return observe(analysed(fixes, [route, *others]), plan_runs(route, line, DAY))


ONE_WAY = [0.0, 10_000.0]


def test_a_full_run_covers_the_line() -> None:
    r, line = line_route(ONE_WAY)
    (o,) = seen(drive(steps(0.0, 10_000.0)), r, line)
    assert (o.route_id, o.day, o.run_no, o.vehicle_id) == (7, DAY, 1, 1)
    assert o.coverage == pytest.approx(1.0, abs=0.001)
    assert o.route_km == pytest.approx(10.0, abs=0.01) and o.off_route_km == pytest.approx(0.0, abs=1e-9)
    assert (o.first, o.last) == (T0.timestamp(), T0.timestamp() + 30 * 25)


def test_a_run_that_turns_back_halfway_covers_half() -> None:
    r, line = line_route(ONE_WAY)
    (o,) = seen(drive(steps(0.0, 5000.0) + steps(5000.0, 0.0)[1:]), r, line)
    assert o.coverage == pytest.approx(0.5, abs=0.005)
    assert o.route_km == pytest.approx(10.0, abs=0.01)  # it drove 10 km along the route, over half of it


def test_a_ten_minute_gap_moving_consistently_along_the_route_is_bridged() -> None:
    r, line = line_route(ONE_WAY)
    before = drive(steps(0.0, 2000.0))
    # 600 s silent at 48 km/h: 8 km further on, where the vehicle reappears and goes on to the end.
    after = drive([2000.0 + 8000.0 * 0.999], before[-1].ts + timedelta(seconds=600))
    (o,) = seen(before + after, r, line)
    a = analysed(before + after, [r])
    assert a.seg.method[len(before)] == ROUTE and a.seg.gap[len(before)]
    assert o.coverage == pytest.approx(0.999, abs=0.001)


def test_an_implausible_jump_is_not_bridged() -> None:
    r, line = line_route([0.0, 20_000.0])
    before = drive(steps(0.0, 3000.0))
    # 60 s later 9 km further (540 km/h), then on normally: the jump is a chord and covers nothing.
    after = drive(steps(12_000.0, 14_000.0), before[-1].ts + timedelta(seconds=60))
    fixes = before + after
    a = analysed(fixes, [r])
    assert a.seg.method[len(before)] == CHORD
    (o,) = observe(a, plan_runs(r, line, DAY))
    assert o.coverage == pytest.approx(5000.0 / 20_000.0, abs=0.002)
    assert o.off_route_km == pytest.approx(9.0, abs=0.05)


def test_a_vehicle_driving_another_road_covers_nothing_and_its_km_are_off_route() -> None:
    r, line = line_route(ONE_WAY)
    (o,) = seen(drive(steps(0.0, 10_000.0), north_m=600.0), r, line)  # a parallel road 600 m north
    assert o.coverage == 0.0 and o.route_km == 0.0
    assert o.off_route_km == pytest.approx(10.0, abs=0.01)
    assert (o.first, o.last) == (None, None)


def test_no_fix_is_no_coverage() -> None:
    r, line = line_route(ONE_WAY)
    (o,) = seen([], r, line)
    assert (o.coverage, o.route_km, o.off_route_km, o.first, o.last) == (0.0, 0.0, 0.0, None, None)


def test_km_on_another_assigned_route_are_off_this_one() -> None:
    r, line = line_route(ONE_WAY)
    lon, lat = at([0.0, 10_000.0], 600.0)
    other = Route(8, "R8", "Linha 8", lon.tolist(), lat.tolist(), 60.0, 100.0, ())
    (o,) = seen(drive(steps(0.0, 10_000.0), north_m=600.0), r, line, (other,))
    assert o.coverage == 0.0 and o.off_route_km == pytest.approx(10.0, abs=0.01)


def test_a_road_shared_with_another_route_of_the_vehicle_covers_both() -> None:
    # The vehicle's own route runs along the first 6 km of this one: the km report gives those segments to
    # the route listed first, but the run of either route has covered them.
    r, line = line_route(ONE_WAY)
    lon, lat = at([0.0, 6000.0])
    own = Route(8, "R8", "Linha 8", lon.tolist(), lat.tolist(), 60.0, 100.0, ())
    a = analysed(drive(steps(0.0, 10_000.0)), [own, r])
    assert set(a.seg.route[a.seg.method == ROUTE].tolist()) == {0, 1}
    (o,) = observe(a, plan_runs(r, line, DAY))
    assert o.coverage == pytest.approx(1.0, abs=0.001) and o.route_km == pytest.approx(10.0, abs=0.01)
    (mine,) = observe(a, plan_runs(own, engine.line(own), DAY))
    assert mine.coverage == pytest.approx(1.0, abs=0.001) and mine.off_route_km == pytest.approx(4.0, abs=0.01)


# --- out and back: the passes share one road ---------------------------------------------------

OUT_AND_BACK = [0.0, 10_000.0, 0.0]


def school_route() -> tuple[Route, RouteLine]:
    """Garage at 0, school 10 km east; out in the morning, back at midday, stops on both passes."""
    lon, lat = at([2000.0, 10_000.0, 2000.0], 4.0)
    points = (
        Point("Ponto 1", "boarding", float(lat[0]), float(lon[0]), 1, "06:30:00", 7),
        Point("Escola", "school", float(lat[1]), float(lon[1]), 2, "07:00:00", 7),
        Point("Ponto 1 (volta)", "boarding", float(lat[2]), float(lon[2]), 3, "12:00:00", 7),
    )
    return line_route(OUT_AND_BACK, points)


MORNING = T0 + timedelta(minutes=20)  # 06:20 local
MIDDAY = T0 + timedelta(hours=5, minutes=30)  # 11:30 local


def test_morning_and_midday_runs_are_kept_apart() -> None:
    r, line = school_route()
    out = drive(steps(0.0, 10_000.0), MORNING)
    back = drive(steps(10_000.0, 0.0), MIDDAY)
    morning, midday = seen(out + back, r, line)
    assert (morning.run_no, midday.run_no) == (1, 2)
    assert morning.coverage == pytest.approx(1.0, abs=0.001) and midday.coverage == pytest.approx(1.0, abs=0.001)
    assert morning.route_km == pytest.approx(10.0, abs=0.01) and midday.route_km == pytest.approx(10.0, abs=0.01)
    assert morning.last is not None and midday.first is not None and morning.last < midday.first
    # Only the way back: the return pass is covered, though its road is the outbound's too.
    morning, midday = seen(back, r, line)
    assert morning.coverage == 0.0 and midday.coverage == pytest.approx(1.0, abs=0.001)
    morning, midday = seen(out, r, line)
    assert morning.coverage == pytest.approx(1.0, abs=0.001) and midday.coverage == 0.0


def test_a_whole_out_and_back_run_in_one_window_covers_both_passes() -> None:
    r, line = line_route(OUT_AND_BACK)
    (o,) = seen(drive(steps(0.0, 10_000.0) + steps(10_000.0, 0.0)[1:]), r, line)
    assert o.coverage == pytest.approx(1.0, abs=0.001)
    assert o.route_km == pytest.approx(20.0, abs=0.02)


def test_stationary_jitter_at_the_garage_covers_nothing() -> None:
    r, line = line_route(OUT_AND_BACK)
    rng = random.Random(3)
    jitter = [Fix(T0 + timedelta(seconds=30 * k), *_near_garage(rng), speed_kmh=0.0) for k in range(120)]
    (o,) = seen(jitter, r, line)
    assert o.coverage == 0.0


def _near_garage(rng: random.Random) -> tuple[float, float]:
    lon, lat = at([rng.uniform(0.0, 40.0)], rng.uniform(-20.0, 20.0))
    return float(lat[0]), float(lon[0])


def test_fix_order_does_not_matter() -> None:
    r, line = school_route()
    fixes = drive(steps(0.0, 10_000.0), MORNING) + drive(steps(10_000.0, 6000.0), MIDDAY)
    shuffled = fixes[:]
    random.Random(5).shuffle(shuffled)
    assert seen(shuffled, r, line) == seen(fixes, r, line)


def test_a_plan_for_a_route_the_analysis_lacks_is_refused() -> None:
    r, line = line_route(ONE_WAY)
    plan = RunPlan(99, DAY, 1, 0.0, 1e10, 0.0, 1.0, plan_runs(r, line, DAY)[0].share)
    with pytest.raises(ValueError, match="route 99"):
        observe(analysed([], [r]), [plan])


# --- a simulated run: the grid's out-and-back route, driven by the simulator ------------------


@pytest.mark.parametrize(("seed", "silent"), [(1, False), (2, False), (3, False), (4, True), (8, True)])
def test_a_simulated_run_covers_its_route_within_half_a_percent(seed: int, silent: bool) -> None:
    # Seed 4's 10-minute silence starts standing at the school and ends standing on the way back: bridged.
    tracker = TrackerParams(silent_gap=True, silent_gap_s=(600.0, 600.0)) if silent else TrackerParams()
    s = simulate_vehicle(seed, T0, tracker=tracker)
    lon, lat = s.truth.route.line.lon, s.truth.route.line.lat
    r = Route(7, "R7", "Sim", list(map(float, lon)), list(map(float, lat)), 60.0, 100.0, ())
    fixes = [f for u in s.uploads for f in u.fixes]
    (o,) = seen(fixes, r, engine.line(r))
    assert o.coverage >= 0.995
    # Half of it (the tracker's fixes up to the school): half the line, within half a percent of it.
    school = s.truth.t_s[np.argmax(s.truth.dist_m >= s.truth.route.length_m / 2)]
    half = [f for f in fixes if (f.ts - s.truth.start).total_seconds() <= school]
    (h,) = seen(half, r, engine.line(r))
    assert h.coverage == pytest.approx(0.5, abs=0.005)


@pytest.mark.parametrize("seed", [1, 6])
def test_a_simulated_run_that_turns_round_covers_the_first_and_last_stretches(seed: int) -> None:
    # Turned round at 35 % of the line and driven back the same road: the line's first 35 % out, its last 35 %
    # (the same road, on the return pass) back; the payable km within half a percent.
    route = vehicle_route(seed)
    truth = sim_drive(turned(route, 0.35 * route.length_m), T0, np.random.default_rng([seed, 1]), MotionParams())
    uploads, _ = sim_track(truth, np.random.default_rng([seed, 2]), 30, TrackerParams())
    r = Route(7, "R7", "Sim", list(map(float, route.line.lon)), list(map(float, route.line.lat)), 60.0, 100.0, ())
    (o,) = seen([f for u in uploads for f in u.fixes], r, engine.line(r))
    assert o.coverage == pytest.approx(0.70, rel=0.005)


def detour_fixes(phase_m: float, every_m: float = 400.0) -> list[Fix]:
    """A 24 km run east along the line that leaves it square at 10 km, drives 1.5 km on a road 300 m north of it
    and comes back square at 11.5 km: 93.75 % of the line driven. A fix every 30 s at 48 km/h (400 m), the first
    phase_m along the path."""
    corners = [(0.0, 0.0), (10_000.0, 0.0), (10_000.0, 300.0), (11_500.0, 300.0), (11_500.0, 0.0), (24_000.0, 0.0)]
    xs, ys = np.array([c[0] for c in corners]), np.array([c[1] for c in corners])
    cum = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(xs), np.diff(ys)))])
    at_m = np.concatenate([[0.0], np.arange(phase_m, cum[-1], every_m), [cum[-1]]])
    out = []
    for k, m in enumerate(at_m):
        x, y = float(np.interp(m, cum, xs)), float(np.interp(m, cum, ys))
        ahead = min(m + 1.0, cum[-1])
        dx, dy = float(np.interp(ahead, cum, xs)) - x, float(np.interp(ahead, cum, ys)) - y
        lon, lat = at([x], y + 3.0)
        heading = float(np.degrees(np.arctan2(dx, dy))) % 360.0
        ts = T0 + timedelta(seconds=(m if k else 0.0) / (SPEED / 3.6))
        out.append(Fix(ts, float(lat[0]), float(lon[0]), speed_kmh=SPEED, heading_deg=heading))
    return out


@pytest.mark.parametrize("phase_m", [0.0, 50.0, 130.0, 200.0, 270.0, 390.0])
def test_a_partial_run_is_paid_within_half_a_point_of_what_it_covered(phase_m: float) -> None:
    # Departure and return are interpolated along the route (runs._leaving): counted only from the last fix on
    # the route to the first one back, this run read 91.96 % on average (half an interval lost at each end).
    r, line = line_route([0.0, 24_000.0])
    (o,) = seen(detour_fixes(phase_m), r, line)
    assert abs(o.coverage - 0.9375) <= 0.005, o.coverage
