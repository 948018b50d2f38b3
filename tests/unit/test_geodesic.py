"""WGS84 geodesics: known answers and hand computations with explicit tolerances."""

from __future__ import annotations

import math

import numpy as np
import pytest

from telemetria.geo.geodesic import GEOD, distance_m, line_length_m

A = 6378137.0  # WGS84 semi-major axis, m
F = 1 / 298.257223563
E2 = F * (2 - F)


def radii_m(lat_deg: float) -> tuple[float, float]:
    """Meridional (M) and prime-vertical (N) radii of curvature at a latitude, metres."""
    s2 = math.sin(math.radians(lat_deg)) ** 2
    return A * (1 - E2) / (1 - E2 * s2) ** 1.5, A / math.sqrt(1 - E2 * s2)


def test_one_degree_of_latitude_at_the_equator() -> None:
    assert distance_m(0.0, 0.0, 0.0, 1.0) == pytest.approx(110574.0, abs=1.0)


def test_one_degree_of_longitude_on_the_equator_is_a_times_one_degree() -> None:
    assert distance_m(0.0, 0.0, 1.0, 0.0) == pytest.approx(A * math.pi / 180, abs=0.01)


def test_jaru_north_south_block_matches_the_meridian_arc() -> None:
    # 0.01° of latitude through downtown Jaru (lon -62.466): over ~1.1 km the meridian arc equals M at the
    # mid-latitude times the angle to well under a millimetre.
    m, _ = radii_m(-10.44)
    hand = m * math.radians(0.01)
    assert hand == pytest.approx(1106.107, abs=0.001)
    assert distance_m(-62.466, -10.435, -62.466, -10.445) == pytest.approx(hand, abs=0.01)


def test_jaru_east_west_street_matches_the_parallel_arc() -> None:
    # 0.01° of longitude along the -10.44 parallel: the geodesic is shorter than the parallel arc
    # N·cosφ·Δλ only by terms of order d³/R² (micrometres here).
    _, n = radii_m(-10.44)
    hand = n * math.cos(math.radians(-10.44)) * math.radians(0.01)
    assert hand == pytest.approx(1094.887, abs=0.001)
    assert distance_m(-62.470, -10.44, -62.460, -10.44) == pytest.approx(hand, abs=0.01)


def test_distance_is_symmetric_and_zero_for_the_same_point() -> None:
    assert distance_m(-62.47, -10.44, -62.47, -10.44) == 0.0
    assert distance_m(-62.47, -10.44, -62.40, -10.50) == pytest.approx(distance_m(-62.40, -10.50, -62.47, -10.44))


def test_distance_vectorized_and_broadcast() -> None:
    d = distance_m(np.array([0.0, 0.0]), np.array([0.0, 0.0]), np.array([0.0, 1.0]), np.array([1.0, 0.0]))
    assert isinstance(d, np.ndarray) and d.shape == (2,)
    np.testing.assert_allclose(d, [110574.3886, A * math.pi / 180], atol=0.01)
    # one origin against many destinations
    grid = distance_m(0.0, 0.0, np.zeros((2, 3)), np.ones((2, 3)))
    assert isinstance(grid, np.ndarray) and grid.shape == (2, 3)
    np.testing.assert_allclose(grid, 110574.3886, atol=0.01)
    assert isinstance(distance_m(0.0, 0.0, 0.0, 1.0), float)


def test_line_length_is_the_sum_of_its_segments() -> None:
    lons = [-62.470, -62.460, -62.460, -62.450]
    lats = [-10.440, -10.440, -10.450, -10.452]
    parts = distance_m(np.array(lons[:-1]), np.array(lats[:-1]), np.array(lons[1:]), np.array(lats[1:]))
    assert line_length_m(lons, lats) == pytest.approx(float(np.sum(parts)), abs=1e-6)
    assert line_length_m(lons, lats) == pytest.approx(GEOD.line_length(lons, lats), abs=1e-6)
    assert line_length_m(lons[:2], lats[:2]) == pytest.approx(1094.887, abs=0.01)


def test_line_length_of_degenerate_lines_is_zero() -> None:
    assert line_length_m([], []) == 0.0
    assert line_length_m([-62.47], [-10.44]) == 0.0
    assert line_length_m([-62.47, -62.47], [-10.44, -10.44]) == 0.0


def test_line_length_rejects_mismatched_arrays() -> None:
    with pytest.raises(ValueError, match="equal length"):
        line_length_m([1.0, 2.0], [1.0])
