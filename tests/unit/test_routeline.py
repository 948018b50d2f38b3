"""Route lines for linear referencing: offsets, per-pass measures and positions, with known answers."""

from __future__ import annotations

import numpy as np
import pytest

from telemetria.geo.geodesic import GEOD, line_length_m
from telemetria.geo.metric import JARU_ZONE, zone_plane
from telemetria.geo.routeline import RouteLine

PLANE = zone_plane(JARU_ZONE)  # Jaru's UTM zone, 20S

LON0, LAT0 = -62.47, -10.43  # Jaru


def fwd(lon: float, lat: float, az: float, dist: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    d = np.asarray(dist, dtype=float)
    lo, la, _ = GEOD.fwd(np.full(d.shape, lon), np.full(d.shape, lat), np.full(d.shape, az), d)
    return np.asarray(lo), np.asarray(la)


def east_line(length_m: float = 10_000.0) -> tuple[float, float]:
    lo, la = fwd(LON0, LAT0, 90.0, np.array([length_m]))
    return float(lo[0]), float(la[0])


def test_metric_projection_is_utm_20s_and_round_trips() -> None:
    x, y = PLANE.to_metric(LON0, LAT0)
    # Easting from the zone's central meridian (-63°) plus the false easting; northing with the 10,000 km offset.
    assert float(x) == pytest.approx(558_008.4, abs=0.5) and float(y) == pytest.approx(8_846_996.0, abs=0.5)
    lon, lat = PLANE.to_lonlat(x, y)
    assert float(lon) == pytest.approx(LON0, abs=1e-9) and float(lat) == pytest.approx(LAT0, abs=1e-9)


def test_offsets_of_points_at_known_distances_from_a_straight_line() -> None:
    lon1, lat1 = east_line()
    line = RouteLine.of([LON0, lon1], [LAT0, lat1])
    base_lon, base_lat = fwd(LON0, LAT0, 90.0, np.array([2000.0, 5000.0, 8000.0]))
    for d in (0.0, 10.0, 50.0, 300.0):
        lo, la, _ = GEOD.fwd(base_lon, base_lat, np.zeros(3), np.full(3, d))
        # UTM scale at Jaru is 0.99964: 0.04 % of the offset, plus a millimetre.
        assert line.offset_m(lo, la) == pytest.approx(np.full(3, d), rel=5e-4, abs=1e-3)
    assert np.isnan(line.offset_m([np.nan], [LAT0])[0])


def test_measures_on_a_straight_line_are_geodesic_metres() -> None:
    lon1, lat1 = east_line()
    line = RouteLine.of([LON0, lon1], [LAT0, lat1])
    assert line.length_m == pytest.approx(line_length_m([LON0, lon1], [LAT0, lat1]), abs=1e-6)
    along = np.array([0.0, 1234.5, 5000.0, 9999.0])
    lo, la = fwd(LON0, LAT0, 90.0, along)
    lo, la, _ = GEOD.fwd(lo, la, np.full(4, 180.0), np.full(4, 20.0))  # 20 m south of the road
    c = line.candidates(lo, la, 100.0)
    assert c.measure_m.shape == (4, 1)
    assert c.measure_m[:, 0] == pytest.approx(along, abs=0.05)
    assert c.offset_m[:, 0] == pytest.approx(np.full(4, 20.0), abs=0.05)
    assert c.bearing_deg[:, 0] == pytest.approx(np.full(4, 90.0), abs=0.2)
    back_lon, back_lat = line.point_at(along)
    ref_lon, ref_lat = fwd(LON0, LAT0, 90.0, along)
    assert back_lon == pytest.approx(ref_lon, abs=1e-9) and back_lat == pytest.approx(ref_lat, abs=1e-9)


def test_out_and_back_line_gives_two_passes_in_opposite_directions() -> None:
    lon1, lat1 = east_line()
    line = RouteLine.of([LON0, lon1, LON0], [LAT0, lat1, LAT0])
    lo, la = fwd(LON0, LAT0, 90.0, np.array([3000.0, 9950.0, 10_000.0, 10_040.0, -20.0]))
    lo, la, _ = GEOD.fwd(lo, la, np.zeros(5), np.array([30.0, 5.0, 0.0, 0.0, 0.0]))
    c = line.candidates(lo, la, 100.0)
    assert c.count.tolist() == [2, 2, 1, 1, 2]
    assert c.measure_m[0] == pytest.approx([3000.0, 17_000.0], abs=0.05)
    assert c.bearing_deg[0] == pytest.approx([90.0, 270.0], abs=0.2)
    # 50 m before the turnaround: both sides of the U-turn are separate passes, 100 m apart along the line.
    assert c.measure_m[1] == pytest.approx([9950.0, 10_050.0], abs=0.05)
    # At or beyond the U-turn vertex: one location, direction unknown.
    assert c.measure_m[2:4, 0] == pytest.approx([10_000.0, 10_000.0], abs=1e-6)
    assert np.isnan(c.bearing_deg[2:4, 0]).all()
    assert c.offset_m[3, 0] == pytest.approx(40.0, rel=5e-4)
    # Before the start: both ends of the line.
    assert c.measure_m[4] == pytest.approx([0.0, 20_000.0], abs=1e-6)
    far = line.candidates(*fwd(LON0, LAT0, 0.0, np.array([500.0])), 100.0)
    assert far.count.tolist() == [0]


def test_a_right_angle_corner_is_one_pass() -> None:
    lon1, lat1 = east_line(2000.0)
    lo2, la2 = fwd(lon1, lat1, 0.0, np.array([2000.0]))
    line = RouteLine.of([LON0, lon1, lo2[0]], [LAT0, lat1, la2[0]])
    # Inside the corner, 10 m from both roads: two nearest feet, one pass.
    lo, la = fwd(lon1, lat1, 270.0, np.array([10.0]))
    lo, la, _ = GEOD.fwd(lo, la, np.zeros(1), np.full(1, 10.0))
    c = line.candidates(lo, la, 100.0)
    assert c.count.tolist() == [1]
    assert c.measure_m[0, 0] == pytest.approx(1990.0, abs=0.1) or c.measure_m[0, 0] == pytest.approx(2010.0, abs=0.1)
    # Outside the corner the vertex itself is nearest, heading halfway through the turn.
    lo, la = fwd(lon1, lat1, 135.0, np.array([20.0]))
    c = line.candidates(lo, la, 100.0)
    assert c.measure_m[0, 0] == pytest.approx(2000.0, abs=0.01)
    assert c.bearing_deg[0, 0] == pytest.approx(45.0, abs=0.5)
    assert c.offset_m[0, 0] == pytest.approx(20.0, rel=5e-4)


def test_a_route_needs_two_distinct_finite_vertices() -> None:
    with pytest.raises(ValueError):
        RouteLine.of([LON0, LON0], [LAT0, LAT0])
    with pytest.raises(ValueError):
        RouteLine.of([LON0, np.nan], [LAT0, LAT0])


def test_a_route_far_from_jaru_is_measured_on_its_own_zone() -> None:
    # Recife (-34.9°, zone 25): a point 100 m north of an east-west street is 100 m from it, not the 111.7 m that
    # Jaru's zone 20 (28° west of here) made of it.
    lon0, lat0 = -34.90, -8.05
    (lo1,), (la1,) = fwd(lon0, lat0, 90.0, np.array([2_000.0]))
    line = RouteLine.of([lon0, lo1], [lat0, la1])
    (mid_lon,), (mid_lat,) = fwd(lon0, lat0, 90.0, np.array([1_000.0]))
    (plon,), (plat,) = fwd(mid_lon, mid_lat, 0.0, np.array([100.0]))
    assert line.plane.zone == 25
    assert float(line.offset_m([plon], [plat])[0]) == pytest.approx(100.0, rel=1e-3)
    measure = line.candidates([plon], [plat], 150.0).measure_m[0, 0]
    assert float(measure) == pytest.approx(1_000.0, rel=1e-3)
