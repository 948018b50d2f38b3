"""Km along the roads off the routes (issue 20): the simulator's grid exported as the road network, vehicles with
no route assigned, against the simulator's ground truth; no database."""

from __future__ import annotations

import random
from datetime import UTC, datetime
from functools import cache
from itertools import pairwise

import numpy as np
import pytest

from telemetria.geo.metric import JARU_ZONE, zone_plane
from telemetria.reports.analysis.clean import keep_mask
from telemetria.reports.analysis.distance import CHORD, ROAD, Segments, segments
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.roads import steps
from telemetria.roads.model import Roads
from telemetria.sim import MotionParams, SimRun, TrackerParams, simulate_vehicle
from telemetria.sim.roadnet import grid_ways
from telemetria.sim.roads import make_grid

PLANE = zone_plane(JARU_ZONE)  # Jaru's UTM zone, 20S

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
CONTEXT = 6  # fixes each side of a window, as tests/unit/test_distance.py
# Seeds whose 10-minute silent gap starts and ends while the bus is driving (tests/unit/test_distance.py).
MOVING_GAP_SEEDS = [0, 1, 2, 3, 7, 10, 11, 13, 15, 16, 19]


@cache
def network(seed: int) -> Roads:
    return steps.build(seed + 1, grid_ways(make_grid(seed)))


@cache
def sim(seed: int, kind: str) -> SimRun:
    if kind == "gap":
        return simulate_vehicle(seed, T0, tracker=TrackerParams(silent_gap=True, silent_gap_s=(600.0, 600.0)))
    if kind == "detour":
        return simulate_vehicle(seed, T0, motion=MotionParams(detour=True))
    return simulate_vehicle(seed, T0)


def track_of(s: SimRun) -> Track:
    return Track.of([f for u in s.uploads for f in u.fixes])


def run(track: Track, roads: Roads | None) -> Segments:
    """Segments with no route assigned: along the roads where plausible, else chords."""
    return segments(track, keep_mask(track, DEFAULT), [], [], DEFAULT, roads=roads)


def total(seg: Segments) -> float:
    return float(np.sum(seg.length_m))


def true_ways(s: SimRun, roads: Roads, t: np.ndarray) -> np.ndarray:
    """The way the vehicle really was on at each time (epoch s): the one nearest its true position."""
    off = t - s.truth.start.timestamp()
    lat = np.interp(off, s.truth.t_s, s.truth.lat)
    lon = np.interp(off, s.truth.t_s, s.truth.lon)
    return roads.nearest(lat, lon, 25.0)


def true_paved_share(s: SimRun, roads: Roads) -> float:
    """Share of the true distance driven on paved ways, from the truth's own samples."""
    d = np.diff(s.truth.dist_m)
    mid_lat = (s.truth.lat[1:] + s.truth.lat[:-1]) / 2
    mid_lon = (s.truth.lon[1:] + s.truth.lon[:-1]) / 2
    moving = d > 0
    way = roads.nearest(mid_lat[moving], mid_lon[moving], 25.0)
    paved = np.array([w >= 0 and roads.ways[w].paved for w in way.tolist()])
    return float(np.sum(d[moving][paved]) / np.sum(d[moving]))


@pytest.mark.parametrize("seed", range(8))
def test_a_morning_with_no_route_is_measured_along_the_roads_within_one_percent(seed: int) -> None:
    s = sim(seed, "plain")
    track = track_of(s)
    seg = run(track, network(seed))
    err = total(seg) / s.truth.distance_m - 1
    chord_err = total(run(track, None)) / s.truth.distance_m - 1
    print(f"seed {seed}: roads {err:+.2%}, chords {chord_err:+.2%}")
    assert abs(err) <= 0.01
    assert abs(err) < abs(chord_err)  # chords cut the corners: the roads give them back
    moved = seg.length_m > 0
    assert np.mean(seg.method[moved] == ROAD) >= 0.95  # chords only where no road path is plausible


def without_fixes_near_corners(s: SimRun, radius_m: float = 150.0) -> Track:
    """The run's fixes less those within radius_m of a corner (a turn of 45° to 135°) of the route it drove: a
    chord then cuts each corner by a block's worth (tests/unit/test_distance.py does the same for the route
    method). Turning round (at the school, the line's 180°) stays seen: no road path shows an out-and-back."""
    line = s.truth.route.line
    turn = np.abs((np.diff(line.az) + 180.0) % 360.0 - 180.0)
    k = np.flatnonzero((turn > 45.0) & (turn < 135.0)) + 1
    cx, cy = PLANE.to_metric(line.lon[k], line.lat[k])
    fixes = [f for u in s.uploads for f in u.fixes]
    fx, fy = PLANE.to_metric([f.lon for f in fixes], [f.lat for f in fixes])
    near = np.hypot(fx[:, None] - cx[None, :], fy[:, None] - cy[None, :]).min(axis=1) <= radius_m
    return Track.of([f for f, drop in zip(fixes, near, strict=True) if not drop])


@pytest.mark.parametrize("seed", range(8))
def test_with_no_fix_near_the_corners_the_roads_still_give_the_km_within_one_percent(seed: int) -> None:
    s = sim(seed, "plain")
    track = without_fixes_near_corners(s)
    err = total(run(track, network(seed))) / s.truth.distance_m - 1
    chord_err = total(run(track, None)) / s.truth.distance_m - 1
    print(f"seed {seed}: roads {err:+.2%}, chords {chord_err:+.2%}")
    assert abs(chord_err) > 0.005  # a track chords alone get wrong ...
    assert abs(err) <= 0.01 and abs(err) < abs(chord_err) / 3  # ... and the roads get right


def school_inside_the_gap(s: SimRun) -> bool:
    a, b = s.log.silent  # type: ignore[misc]
    return any(st.kind == "school" and a < st.t_start_s < b for st in s.truth.stops)


@pytest.mark.parametrize("seed", MOVING_GAP_SEEDS)
def test_a_silent_ten_minutes_is_bridged_along_the_roads_within_two_percent(seed: int) -> None:
    s = sim(seed, "gap")
    a, b = s.log.silent  # type: ignore[misc]
    assert s.truth.distance_between(a, b) > 3000.0
    track = track_of(s)
    seg = run(track, network(seed))
    chords = run(track, None)
    err = total(seg) / s.truth.distance_m - 1
    chord_err = total(chords) / s.truth.distance_m - 1
    (end,) = np.flatnonzero(seg.gap)
    t_end = seg.t[end] - s.truth.start.timestamp()
    truth_m = s.truth.distance_between(t_end - seg.dt_s[end], t_end)
    got, chord = seg.length_m[end], chords.length_m[end]
    print(f"seed {seed}: roads {err:+.2%}, chords {chord_err:+.2%}; gap {got:.0f} m, chord {chord:.0f}, {truth_m:.0f}")
    # The shortest plausible road path: never longer than what was driven, never shorter than the chord.
    assert seg.method[end] == ROAD and chord - 10.0 <= got <= truth_m * 1.01
    if school_inside_the_gap(s):
        # The bus went to the school past the last crossing and came back the same way while silent: no fix
        # shows the out-and-back, so the road path (like the chord) misses it; only a registered route gives it.
        assert got < truth_m * 0.95
    else:
        assert abs(err) <= 0.02 and got == pytest.approx(truth_m, rel=0.02)


def test_the_gaps_with_the_school_inside_are_the_ones_the_seeds_say() -> None:
    assert [seed for seed in MOVING_GAP_SEEDS if school_inside_the_gap(sim(seed, "gap"))] == [3, 11]


@pytest.mark.parametrize("seed", range(8))
def test_the_road_of_nearly_every_fix_is_named_right(seed: int) -> None:
    s = sim(seed, "plain")
    roads = network(seed)
    track = track_of(s)
    seg = run(track, roads)
    kept = np.flatnonzero(keep_mask(track, DEFAULT))
    truth = true_ways(s, roads, track.t[kept])
    on_road = truth >= 0  # parked at the garage or school, off the way's 25 m: no road to name
    got = [roads.ways[w].label if w >= 0 else None for w in seg.way[kept][on_road].tolist()]
    want = [roads.ways[w].label for w in truth[on_road].tolist()]
    right = np.mean([g == w for g, w in zip(got, want, strict=True)])
    print(f"seed {seed}: {right:.2%} of {len(got)} fixes named right")
    assert right >= 0.98


@pytest.mark.parametrize("seed", range(8))
def test_paved_and_unpaved_km_split_as_driven(seed: int) -> None:
    s = sim(seed, "plain")
    roads = network(seed)
    seg = run(track_of(s), roads)
    measured = float(np.sum(seg.paved_m) / (np.sum(seg.paved_m) + np.sum(seg.unpaved_m)))
    want = true_paved_share(s, roads)
    print(f"seed {seed}: paved {measured:.2%}, truth {want:.2%}")
    assert abs(measured - want) <= 0.02
    assert np.sum(seg.paved_m) + np.sum(seg.unpaved_m) == pytest.approx(total(seg), rel=0.01)


@pytest.mark.parametrize("seed", [0, 3])
def test_windows_with_context_add_up_to_the_whole_track_and_arrival_order_does_not_matter(seed: int) -> None:
    s = sim(seed, "gap")
    roads = network(seed)
    track = track_of(s)
    whole = run(track, roads)
    rnd = random.Random(seed)
    cuts = sorted(rnd.uniform(track.t[0], track.t[-1]) for _ in range(7))
    edges = [track.t[0], *cuts, track.t[-1] + 1.0]
    parts: list[np.ndarray] = []
    ways: list[np.ndarray] = []
    for t0, t1 in pairwise(edges):
        i0, i1 = np.searchsorted(track.t, [t0, t1])
        lo, hi = max(0, i0 - CONTEXT), min(len(track), i1 + CONTEXT)
        # A network built afresh for each window: nothing the whole track computed is remembered for it.
        seg = run(track.take(np.arange(lo, hi)), steps.build(seed + 1, grid_ways(make_grid(seed))))
        inside = (seg.t >= t0) & (seg.t < t1)
        parts.append(np.stack([seg.length_m, seg.paved_m, seg.unpaved_m])[:, inside])
        ways.append(seg.way[inside])
    assert np.array_equal(np.concatenate(parts, axis=1), np.stack([whole.length_m, whole.paved_m, whole.unpaved_m]))
    assert np.array_equal(np.concatenate(ways), whole.way)  # per fix, bit for bit: length, paved, unpaved, way
    fixes = [f for u in s.uploads for f in u.fixes]
    random.Random(1).shuffle(fixes)
    shuffled = run(Track.of(fixes), steps.build(seed + 1, grid_ways(make_grid(seed))))
    assert np.array_equal(shuffled.length_m, whole.length_m) and np.array_equal(shuffled.method, whole.method)
    assert np.array_equal(shuffled.paved_m, whole.paved_m)


def test_with_no_network_nothing_changes() -> None:
    s = sim(1, "detour")
    track = track_of(s)
    seg = run(track, None)
    assert not (seg.method == ROAD).any() and (seg.method == CHORD).any()
    assert not seg.paved_m.any() and not seg.unpaved_m.any() and (seg.way == -1).all()


def test_a_road_path_far_longer_than_the_chord_is_not_believed_across_a_long_gap() -> None:
    """Two parallel roads 300 m apart joined only 10 km north: fixes on each, two hours apart. The road path is
    20 km, which max_jump_kmh × 2 h allows, but no one believes a 20 km detour for 300 m: the chord counts (and
    the search never has to cover more than 4 × the chord + 5 km of roads)."""
    from telemetria.fix import Fix
    from telemetria.roads.model import Way

    lat0, lon0, north, east = -10.45, -62.47, 10_000 / 111_320, 300 / 109_500

    def way(osm: int, nodes: tuple[int, ...], pts: list[tuple[float, float]]) -> Way:
        return Way(osm, "unclassified", f"Linha {osm}", None, "dirt", False, nodes,
                   tuple(p[0] for p in pts), tuple(p[1] for p in pts))  # fmt: skip

    u = steps.build(99, [
        way(1, (1, 2), [(lat0, lon0), (lat0 + north, lon0)]),
        way(2, (2, 3), [(lat0 + north, lon0), (lat0 + north, lon0 + east)]),
        way(3, (3, 4), [(lat0 + north, lon0 + east), (lat0, lon0 + east)]),
    ])  # fmt: skip
    t = datetime(2026, 3, 2, 10, 0, tzinfo=UTC).timestamp()
    fixes = [Fix(datetime.fromtimestamp(t + dt, UTC), lat, lon, speed_kmh=0.0, ignition=True)
             for dt, lat, lon in [(0, lat0 + 0.0005, lon0), (7200, lat0 + 0.0005, lon0 + east)]]  # fmt: skip
    seg = run(Track.of(fixes), u)
    assert seg.method[1] == CHORD
    assert seg.length_m[1] == pytest.approx(300, abs=3)
    # Near the junction the same two roads give a road path well within the cap: believed.
    near = [Fix(f.ts, f.lat + north - 0.002, f.lon, speed_kmh=0.0, ignition=True) for f in fixes]
    seg = run(Track.of(near), u)
    assert seg.method[1] == ROAD
    assert seg.length_m[1] == pytest.approx(2 * 0.0015 * 111_320 + 300, rel=0.02)


@pytest.mark.parametrize("seed", [0, 4])
def test_along_its_route_a_vehicle_s_km_split_paved_and_unpaved_as_driven(seed: int) -> None:
    """With the route assigned, segments are measured along it; their pavement comes from the roads under it."""
    from telemetria.geo.routeline import RouteLine

    s = sim(seed, "plain")
    roads = network(seed)
    track = track_of(s)
    line = RouteLine.of(s.truth.route.line.lon, s.truth.route.line.lat)
    seg = segments(track, keep_mask(track, DEFAULT), [line], [60.0], DEFAULT, roads=roads)
    on_route = seg.method == 1
    assert on_route.sum() > 0.5 * len(track)  # the garage legs and the stops are not along it
    # every metre along the route is on some way of the grid: paved + unpaved is the whole of it
    assert np.allclose(seg.paved_m[on_route] + seg.unpaved_m[on_route], seg.length_m[on_route], rtol=1e-6, atol=0.5)
    share = float(np.sum(seg.paved_m)) / float(np.sum(seg.paved_m + seg.unpaved_m))
    assert share == pytest.approx(true_paved_share(s, roads), abs=0.01)


def test_a_step_with_no_expected_length_is_remembered_too() -> None:
    """Across a gap the expected length is NaN; the step is still found in the remembered ones the second time."""
    roads = steps.build(77, grid_ways(make_grid(2)))
    lat0, lon0 = make_grid(2).node(0, 0)
    lat1, lon1 = make_grid(2).node(1, 1)
    first = roads.step(lat0, lon0, lat1, lon1, 0.0, 50_000.0, float("nan"))
    assert first is not None and len(roads._steps) == 1
    assert roads.step(lat0, lon0, lat1, lon1, 0.0, 50_000.0, float("nan")) is first and len(roads._steps) == 1
