"""Properties of the geo functions over generated points and lines, each with an explicit tolerance.

Contracts for input that is not a number (read from the modules): `distance_m`, `line_length_m`, `to_metric` and
`RouteLine.offset_m` give NaN (never a finite number, never an exception) for non-finite coordinates;
`RouteLine.of` raises ValueError; `RouteLine.point_at` clips infinite measures to the line's ends and gives NaN
for a NaN measure; `RouteLine.candidates` leaves a non-finite point's row empty (all NaN).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from telemetria.geo.geodesic import GEOD, distance_m, line_length_m
from telemetria.geo.metric import JARU_ZONE, plane_at, zone_of, zone_plane
from telemetria.geo.routeline import RouteLine

PLANE = zone_plane(JARU_ZONE)  # Jaru's UTM zone, 20S

# PROJ loads its database on first use: no per-example deadline.
GEO = settings(deadline=None, max_examples=200)

lats = st.floats(-90.0, 90.0)
lons = st.floats(-180.0, 180.0)
points = st.tuples(lons, lats)
# Rondônia's bounding box (lon -66.8..-59.8, lat -13.7..-7.9), all of it in UTM zone 20 but for a sliver.
ro_points = st.tuples(st.floats(-66.8, -59.8), st.floats(-13.7, -7.9))
# Within half a degree of Jaru, where every route of the municipality lies.
jaru_points = st.tuples(st.floats(-62.97, -61.97), st.floats(-10.93, -9.93))
non_finite = st.sampled_from([math.nan, math.inf, -math.inf])

# Karney's geodesics are accurate to ~15 nm; a micrometre leaves room for summing three of them.
GEODESIC_ABS_M = 1e-6


def d(p: tuple[float, float], q: tuple[float, float]) -> float:
    return distance_m(p[0], p[1], q[0], q[1])


# --- geodesic distances ----------------------------------------------------------------------------------------


@GEO
@given(points, points)
def test_distance_is_symmetric_and_not_negative(p: tuple[float, float], q: tuple[float, float]) -> None:
    pq, qp = d(p, q), d(q, p)
    assert pq >= 0.0
    assert pq == pytest.approx(qp, abs=GEODESIC_ABS_M)
    assert pq <= 20_003_931.5  # half the WGS84 meridian: no two points are farther apart


@GEO
@given(points)
def test_distance_to_itself_is_zero(p: tuple[float, float]) -> None:
    assert d(p, p) == 0.0


@GEO
@given(points, points, points)
def test_triangle_inequality(p: tuple[float, float], q: tuple[float, float], r: tuple[float, float]) -> None:
    assert d(p, r) <= d(p, q) + d(q, r) + GEODESIC_ABS_M


@GEO
@given(st.lists(points, min_size=2, max_size=20))
def test_line_length_is_the_sum_of_its_segments(pts: list[tuple[float, float]]) -> None:
    lon, lat = np.array(pts).T
    total = sum(d(pts[i], pts[i + 1]) for i in range(len(pts) - 1))
    assert line_length_m(lon, lat) == pytest.approx(total, rel=1e-12, abs=GEODESIC_ABS_M)
    assert line_length_m(lon, lat) >= d(pts[0], pts[-1]) - GEODESIC_ABS_M


@GEO
@given(ro_points, st.floats(0.0, 360.0), st.floats(1.0, 10_000.0))
def test_utm_distance_agrees_with_geodesic_in_rondonia(p: tuple[float, float], az: float, dist: float) -> None:
    # The UTM point scale k0·(1 + (Δλ·cos φ)²/2) runs from 0.9996 on the central meridian (-63°) to 1.0019 10 km
    # beyond Rondônia's western edge (3.9° away): planar metres are geodesic metres times a factor in that range.
    lon2, lat2, _ = GEOD.fwd(p[0], p[1], az, dist)
    x, y = PLANE.to_metric([p[0], lon2], [p[1], lat2])
    ratio = math.hypot(x[1] - x[0], y[1] - y[0]) / dist
    assert 0.9996 - 1e-6 <= ratio <= 1.0019


@GEO
@given(jaru_points, st.floats(0.0, 360.0), st.floats(1.0, 10_000.0))
def test_utm_scale_error_near_jaru_is_under_0_04_percent(p: tuple[float, float], az: float, dist: float) -> None:
    lon2, lat2, _ = GEOD.fwd(p[0], p[1], az, dist)
    x, y = PLANE.to_metric([p[0], lon2], [p[1], lat2])
    assert math.hypot(x[1] - x[0], y[1] - y[0]) == pytest.approx(dist, rel=4e-4)


# Brazil's bounding box: zones 18 (Acre) to 25 (Fernando de Noronha's meridian is in 25 too).
brazil_points = st.tuples(st.floats(-73.99, -34.8), st.floats(-33.7, 5.2))


@GEO
@given(brazil_points, st.floats(0.0, 360.0), st.floats(1.0, 10_000.0))
def test_the_plane_of_a_place_anywhere_in_brazil_keeps_metres_within_0_11_percent(
    p: tuple[float, float], az: float, dist: float
) -> None:
    # On its own zone a point is at most 3° from the central meridian (the far end of 10 km, 0.09° more):
    # k0·(1 + (Δλ·cos φ)²/2) ≤ 0.9996 · 1.00146. Jaru's zone for all of Brazil stretched Recife's metres by 12 %.
    lon2, lat2, _ = GEOD.fwd(p[0], p[1], az, dist)
    plane = plane_at(p[0])
    assert 18 <= plane.zone <= 25 and plane.crs == f"EPSG:{31960 + plane.zone}"
    x, y = plane.to_metric([p[0], lon2], [p[1], lat2])
    ratio = math.hypot(x[1] - x[0], y[1] - y[0]) / dist
    assert 0.9996 - 1e-6 <= ratio <= 1.0011


@given(st.floats(-180.0, 180.0))
def test_a_longitude_lies_in_its_zone(lon: float) -> None:
    zone = zone_of(lon)
    west = -180.0 + 6.0 * (zone - 1)
    # Within a nanodegree of its zone: -5e-324 / 6 underflows to -0.0, a zone boundary by a denormal's width.
    assert 1 <= zone <= 60 and (west - 1e-9 <= lon < west + 6.0 + 1e-9 or (lon == 180.0 and zone == 1))


@GEO
@given(st.tuples(st.floats(-74.0, -52.0), st.floats(-20.0, 0.0)))
def test_metric_projection_round_trips(p: tuple[float, float]) -> None:
    # Rondônia and well beyond (up to 11° from zone 20's central meridian): back within 1e-9° (0.1 mm).
    x, y = PLANE.to_metric(*p)
    lon, lat = PLANE.to_lonlat(x, y)
    assert float(lon) == pytest.approx(p[0], abs=1e-9) and float(lat) == pytest.approx(p[1], abs=1e-9)


@GEO
@given(points, non_finite, st.integers(0, 3))
def test_non_finite_coordinates_give_nan_not_a_number(p: tuple[float, float], bad: float, where: int) -> None:
    args = [p[0], p[1], p[0], p[1]]
    args[where] = bad
    assert math.isnan(distance_m(*args))
    lon, lat = [p[0], p[0]], [p[1], p[1]]
    (lon if where % 2 == 0 else lat)[where // 2] = bad
    assert math.isnan(line_length_m(lon, lat))
    x, y = PLANE.to_metric(lon[where // 2], lat[where // 2])
    assert not (math.isfinite(x) and math.isfinite(y))


@GEO
@given(points, st.floats(90.0, 1e300, exclude_min=True) | st.floats(-1e300, -90.0, exclude_max=True))
def test_latitude_beyond_the_poles_gives_nan(p: tuple[float, float], lat: float) -> None:
    assert math.isnan(distance_m(p[0], p[1], p[0], lat))


# --- route lines ---------------------------------------------------------------------------------------------


@st.composite
def route_lines(draw: st.DrawFn, turn_deg: float = 180.0) -> RouteLine:
    """A line near Jaru: 2-30 vertices, steps of 5 m to 2 km, each turning at most turn_deg from the last."""
    lon, lat = draw(jaru_points)
    az = draw(st.floats(0.0, 360.0))
    lons, lats = [lon], [lat]
    for _ in range(draw(st.integers(1, 29))):
        az += draw(st.floats(-turn_deg, turn_deg))
        lon, lat, _ = GEOD.fwd(lon, lat, az, draw(st.floats(5.0, 2000.0)))
        lons.append(lon)
        lats.append(lat)
    return RouteLine.of(lons, lats)


# Along a 2 km segment the geodesic and the planar chord between its projected ends part by under 5 mm.
ON_LINE_M = 0.01


@GEO
@given(route_lines())
def test_length_is_the_geodesic_length_of_the_vertices(line: RouteLine) -> None:
    assert line.length_m == pytest.approx(line_length_m(line.lon, line.lat), rel=1e-12)
    assert np.all(np.diff(line.cum_m) > 0)  # consecutive duplicates are dropped: measures strictly increase


@GEO
@given(route_lines(), st.lists(jaru_points, min_size=1, max_size=20))
def test_offsets_are_not_negative_and_zero_at_vertices(line: RouteLine, pts: list[tuple[float, float]]) -> None:
    lon, lat = np.array(pts).T
    off = line.offset_m(lon, lat)
    assert np.all(off >= 0.0)
    assert np.all(line.offset_m(line.lon, line.lat) <= 1e-6)
    # Nearest distance on the plane is never more than the planar distance to any vertex.
    x, y = line.plane.to_metric(lon, lat)
    to_vertices = np.hypot(x[:, None] - line.x[None, :], y[:, None] - line.y[None, :]).min(axis=1)
    assert np.all(off <= to_vertices + 1e-6)


@GEO
@given(route_lines(), st.lists(st.floats(0.0, 1.0), min_size=1, max_size=20))
def test_points_at_measures_lie_on_the_line(line: RouteLine, fractions: list[float]) -> None:
    lon, lat = line.point_at(np.array(fractions) * line.length_m)
    assert np.all(line.offset_m(lon, lat) <= ON_LINE_M)


@GEO
@given(route_lines(), st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_the_chord_between_two_measures_is_no_longer_than_the_line(line: RouteLine, f1: float, f2: float) -> None:
    m = np.array([f1, f2]) * line.length_m
    lon, lat = line.point_at(m)
    assert distance_m(lon[0], lat[0], lon[1], lat[1]) <= abs(m[1] - m[0]) + 1e-6


@GEO
@given(route_lines(), st.lists(jaru_points, min_size=1, max_size=20), st.floats(1.0, 500.0))
def test_candidates_lie_within_tolerance_and_on_the_line(
    line: RouteLine, pts: list[tuple[float, float]], tolerance_m: float
) -> None:
    lon, lat = np.array(pts).T
    c = line.candidates(lon, lat, tolerance_m)
    found = np.isfinite(c.measure_m)
    assert np.all((c.measure_m[found] >= 0.0) & (c.measure_m[found] <= line.length_m + 1e-6))
    assert np.all((c.offset_m[found] >= 0.0) & (c.offset_m[found] <= tolerance_m))
    # The nearest candidate of each point is the line's nearest location: its offset is offset_m's.
    near = found.any(axis=1)
    assert np.nanmin(np.where(found, c.offset_m, np.inf), axis=1)[near] == pytest.approx(
        line.offset_m(lon, lat)[near], abs=1e-6
    )
    assert np.all(np.diff(c.measure_m, axis=1)[found[:, 1:]] > 0)  # NaN pads the end: ordered by measure


@GEO
@given(route_lines(turn_deg=60.0), st.lists(st.floats(0.0, 1.0), min_size=2, max_size=30, unique=True))
def test_measures_of_points_along_the_line_come_back_in_order(line: RouteLine, fractions: list[float]) -> None:
    m = np.sort(np.array(fractions)) * line.length_m
    assume(np.all(np.diff(m) > 0.1))
    c = line.candidates(*line.point_at(m), tolerance_m=5.0)
    assert np.all(c.count >= 1)
    # Of each point's passes, the one nearest its own measure is within a centimetre of it ...
    nearest = np.nanargmin(np.abs(c.measure_m - m[:, None]), axis=1)
    got = c.measure_m[np.arange(len(m)), nearest]
    assert got == pytest.approx(m, abs=ON_LINE_M)
    # ... and those measures run along the line in the order the points do.
    assert np.all(np.diff(got) > 0)


@GEO
@given(route_lines(), st.sampled_from([math.nan, math.inf, -math.inf]))
def test_non_finite_measures_and_points(line: RouteLine, bad: float) -> None:
    lon, lat = line.point_at([bad])
    if math.isnan(bad):
        assert np.isnan(lon).all() and np.isnan(lat).all()
    else:  # clipped to the line's end (or start)
        end = -1 if bad > 0 else 0
        assert (lon[0], lat[0]) == pytest.approx((line.lon[end], line.lat[end]), abs=1e-9)
    assert np.isnan(line.offset_m([bad, line.lon[0]], [line.lat[0], bad])).all()
    c = line.candidates([bad, line.lon[0]], [line.lat[0], bad], 100.0)
    assert c.count.tolist() == [0, 0]


@GEO
@given(st.lists(jaru_points, min_size=2, max_size=5), st.integers(0, 9), non_finite)
def test_a_route_line_refuses_non_finite_vertices(pts: list[tuple[float, float]], at: int, bad: float) -> None:
    lon, lat = (list(v) for v in zip(*pts, strict=True))
    (lon if at % 2 == 0 else lat)[at // 2 % len(pts)] = bad
    with pytest.raises(ValueError, match="finite"):
        RouteLine.of(lon, lat)
