"""Distance by segment: known answers, window additivity, and accuracy against the simulator's ground truth."""

from __future__ import annotations

import math
import random
from datetime import UTC, datetime, timedelta
from functools import cache
from itertools import pairwise

import numpy as np
import pytest

from telemetria.fix import Fix
from telemetria.geo.geodesic import GEOD
from telemetria.geo.metric import JARU_ZONE, zone_plane
from telemetria.geo.routeline import RouteLine
from telemetria.reports.analysis.clean import keep_mask
from telemetria.reports.analysis.distance import CHORD, NONE, ROUTE, Segments, odometer_delta_m, segments
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.sim import MotionParams, SimRun, TrackerParams, simulate_vehicle

PLANE = zone_plane(JARU_ZONE)  # Jaru's UTM zone, 20S

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
LON0, LAT0 = -62.47, -10.43
TOL = DEFAULT.deviation_tolerance_m
CONTEXT = 6  # fixes each side of a window: the spike test looks two usable fixes beyond the previous kept one


def _total_m(seg: Segments) -> float:
    """Metres over every fix of the segments."""
    return float(np.sum(seg.length_m))


def at(along_m: list[float], north_m: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """Points along_m east of Jaru's centre and north_m north of that road, degrees."""
    d = np.asarray(along_m, dtype=float)
    lon, lat, _ = GEOD.fwd(np.full(d.shape, LON0), np.full(d.shape, LAT0), np.full(d.shape, 90.0), d)
    lon, lat, _ = GEOD.fwd(lon, lat, np.zeros(d.shape), np.full(d.shape, north_m))
    return np.asarray(lon), np.asarray(lat)


def fixes_at(along_m: list[float], every_s: float, speed: float | None, heading: float | None) -> list[Fix]:
    lon, lat = at(along_m, 3.0)
    return [
        Fix(T0 + timedelta(seconds=k * every_s), float(la), float(lo), speed_kmh=speed, heading_deg=heading)
        for k, (lo, la) in enumerate(zip(lon, lat, strict=True))
    ]


def out_and_back(length_m: float = 10_000.0) -> RouteLine:
    lon, lat = at([0.0, length_m, 0.0])
    return RouteLine.of(lon, lat)


def run(track: Track, routes: list[RouteLine]) -> Segments:
    return segments(track, keep_mask(track, DEFAULT), routes, [TOL] * len(routes), DEFAULT)


def test_along_the_route_forward_uses_the_measure_difference() -> None:
    track = Track.of(fixes_at([1000.0, 1400.0, 1800.0], 30.0, 48.0, 90.0))
    seg = run(track, [out_and_back()])
    assert seg.method.tolist() == [NONE, ROUTE, ROUTE]
    assert seg.length_m.tolist() == pytest.approx([0.0, 400.0, 400.0], abs=0.05)
    assert seg.dt_s[1:].tolist() == [30.0, 30.0] and not seg.gap.any()


def test_a_u_turn_between_two_fixes_counts_both_sides_of_the_turn() -> None:
    # 100 m before the turn going in, then 150 m back from it coming out: 250 m, not the 50 m chord.
    fixes = fixes_at([9900.0, 9850.0], 20.0, 40.0, 90.0)
    fixes[1].heading_deg = 270.0
    seg = run(Track.of(fixes), [out_and_back()])
    assert seg.method[1] == ROUTE and seg.length_m[1] == pytest.approx(250.0, abs=0.1)
    # Still heading in: no turn, 50 m back along the same pass would be the wrong way; it is the other pass.
    fixes[1].heading_deg = 90.0
    fixes[1].lon, fixes[1].lat = (float(x[0]) for x in at([9950.0], 3.0))
    assert run(Track.of(fixes), [out_and_back()]).length_m[1] == pytest.approx(50.0, abs=0.1)


def test_without_headings_the_reported_speeds_pick_the_pass() -> None:
    fixes = fixes_at([9900.0, 9850.0], 20.0, 45.0, None)  # 45 km/h for 20 s: 250 m, not 50 m
    assert run(Track.of(fixes), [out_and_back()]).length_m[1] == pytest.approx(250.0, abs=0.1)


def test_off_route_and_implausible_progress_fall_back_to_the_chord() -> None:
    lon, lat = at([2000.0, 2400.0], 500.0)  # a parallel road 500 m away
    fixes = [Fix(T0 + timedelta(seconds=30 * k), float(lat[k]), float(lon[k]), speed_kmh=48.0) for k in range(2)]
    seg = run(Track.of(fixes), [out_and_back()])
    assert seg.method[1] == CHORD and seg.length_m[1] == pytest.approx(400.0, abs=0.01)


def test_stationary_jitter_is_zeroed_and_long_links_are_cut() -> None:
    fixes = fixes_at([500.0, 508.0, 503.0, 3000.0], 30.0, 0.5, 90.0)
    fixes[3].ts = fixes[2].ts + timedelta(hours=7)  # beyond max_link_s: not joined at all
    seg = run(Track.of(fixes), [out_and_back()])
    assert seg.stationary_jitter.tolist() == [False, True, True, False]
    assert seg.length_m.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert seg.method.tolist() == [NONE, NONE, NONE, NONE] and seg.gap.tolist() == [False, False, False, True]


def test_odometer_delta_over_windows_adds_up() -> None:
    fixes = fixes_at([0.0, 400.0, 800.0, 1200.0], 30.0, 48.0, 90.0)
    for k, f in enumerate(fixes):
        f.odometer_m = 10_000.0 + 401.0 * k
    track = Track.of(fixes)
    mid = track.t[2]
    a, b = odometer_delta_m(track, track.t[0], mid), odometer_delta_m(track, mid, track.t[-1] + 1)
    assert (a, b) == (401.0, 802.0)
    assert odometer_delta_m(Track.of(fixes_at([0.0], 30.0, 0.0, None)), 0.0, 2e9) is None  # no readings


# --- the simulator --------------------------------------------------------------------------------


@cache
def sim(seed: int, kind: str) -> SimRun:
    if kind == "detour":
        return simulate_vehicle(seed, T0, motion=MotionParams(detour=True), tracker=TrackerParams(outlier=True))
    return simulate_vehicle(seed, T0, tracker=TrackerParams(silent_gap=True, silent_gap_s=(600.0, 600.0)))


def sim_track(s: SimRun) -> Track:
    return Track.of([f for u in s.uploads for f in u.fixes])


def planned(s: SimRun) -> RouteLine:
    return RouteLine.of(s.truth.route.line.lon, s.truth.route.line.lat)


def sparse_at_corners(s: SimRun, radius_m: float = 150.0, guard_s: float = 120.0) -> list[Fix]:
    """The run's fixes less those within radius_m of a corner of the planned route (a turn over 45°).

    Sampled every 30 s, a bus's chords cut the grid's corners by a fraction of a percent, well inside
    the tolerance: chords alone would pass. With no fix near a corner, a chord cuts it by a block's
    worth and only measuring along the route gives the length back. Fixes within guard_s of the
    detour and of the outlier stay, so those are still seen as they were sent.
    """
    line = s.truth.route.line
    turn = np.abs((np.diff(line.az) + 180.0) % 360.0 - 180.0)
    k = np.flatnonzero(turn > 45.0) + 1
    cx, cy = PLANE.to_metric(line.lon[k], line.lat[k])
    fixes = [f for u in s.uploads for f in u.fixes]
    fx, fy = PLANE.to_metric([f.lon for f in fixes], [f.lat for f in fixes])
    near = np.hypot(fx[:, None] - cx[None, :], fy[:, None] - cy[None, :]).min(axis=1) <= radius_m
    t = np.array([(f.ts - s.truth.start).total_seconds() for f in fixes])
    detour, outlier = s.truth.detour, s.log.outlier_t_s
    assert detour is not None and outlier is not None
    guarded = ((t > detour.t_start_s - guard_s) & (t < detour.t_end_s + guard_s)) | (np.abs(t - outlier) < guard_s)
    return [f for f, drop in zip(fixes, near & ~guarded, strict=True) if not drop]


@pytest.mark.parametrize("seed", range(8))
def test_detour_and_outlier_within_one_percent_of_the_truth(seed: int) -> None:
    s = sim(seed, "detour")
    track = Track.of(sparse_at_corners(s))
    seg = run(track, [planned(s)])
    err = _total_m(seg) / s.truth.distance_m - 1
    chord_err = _total_m(run(track, [])) / s.truth.distance_m - 1
    print(f"seed {seed}: route {err:+.2%}, chords only {chord_err:+.2%}")
    assert abs(chord_err) > 0.015  # the track is one that chords alone get wrong
    assert abs(err) <= 0.01
    assert seg.by_method_m()["chord"] > 2 * s.truth.detour.reach_m * 0.9  # type: ignore[union-attr]


# Seeds whose 10-minute silent gap starts and ends while the bus is driving (checked below).
MOVING_GAP_SEEDS = [0, 1, 2, 3, 7, 10, 11, 13, 15, 16, 19]


@pytest.mark.parametrize("seed", MOVING_GAP_SEEDS)
def test_a_silent_gap_on_the_route_is_recovered_along_it(seed: int) -> None:
    s = sim(seed, "gap")
    a, b = s.log.silent  # type: ignore[misc]
    assert np.interp([a, b], s.truth.t_s, s.truth.speed_kmh).min() > 10.0
    assert s.truth.distance_between(a, b) > 3000.0
    track = sim_track(s)
    seg = run(track, [planned(s)])
    chord = run(track, [])
    err = _total_m(seg) / s.truth.distance_m - 1
    chord_err = _total_m(chord) / s.truth.distance_m - 1
    print(f"seed {seed}: route {err:+.2%}, chords only {chord_err:+.2%}")
    assert abs(err) <= 0.02
    # The gap's own segment, from the last fix before it to the first after it, against the truth.
    (end,) = np.flatnonzero(seg.gap)
    t_end = seg.t[end] - s.truth.start.timestamp()
    truth_m = s.truth.distance_between(t_end - seg.dt_s[end], t_end)
    assert seg.method[end] == ROUTE and seg.gap_m() == pytest.approx(truth_m, rel=0.02)


def test_chords_alone_do_noticeably_worse_across_gaps() -> None:
    errs = []
    for seed in MOVING_GAP_SEEDS:
        s = sim(seed, "gap")
        track = sim_track(s)
        errs.append(
            (
                abs(_total_m(run(track, [planned(s)])) / s.truth.distance_m - 1),
                abs(_total_m(run(track, [])) / s.truth.distance_m - 1),
            )
        )
    route, chord = np.max(errs, axis=0)
    print(f"worst error: route {route:.2%}, chords only {chord:.2%}")
    assert chord > 0.05 and chord > 10 * route


@pytest.mark.parametrize("seed", [0, 4])
def test_windows_with_context_add_up_to_the_whole_track(seed: int) -> None:
    s = sim(seed, "detour")
    track = sim_track(s)
    routes = [planned(s)]
    whole = run(track, routes)
    rnd = random.Random(seed)
    cuts = sorted(rnd.uniform(track.t[0], track.t[-1]) for _ in range(7))
    edges = [track.t[0], *cuts, track.t[-1] + 1.0]
    parts: list[np.ndarray] = []
    for t0, t1 in pairwise(edges):
        i0, i1 = np.searchsorted(track.t, [t0, t1])
        lo, hi = max(0, i0 - CONTEXT), min(len(track), i1 + CONTEXT)
        seg = run(track.take(np.arange(lo, hi)), routes)
        parts.append(seg.length_m[(seg.t >= t0) & (seg.t < t1)])
    assert np.array_equal(np.concatenate(parts), whole.length_m)  # per fix, bit for bit
    assert math.fsum(float(p.sum()) for p in parts) == pytest.approx(_total_m(whole), abs=1e-6)


def test_the_result_does_not_depend_on_arrival_order() -> None:
    s = sim(2, "detour")
    fixes = [f for u in s.uploads for f in u.fixes]
    shuffled = fixes[:]
    random.Random(1).shuffle(shuffled)
    a, b = run(Track.of(fixes), [planned(s)]), run(Track.of(shuffled), [planned(s)])
    assert np.array_equal(a.length_m, b.length_m) and np.array_equal(a.method, b.method)
