"""The applicable speed limit per fix: zone (lowest wins), else route, else vehicle, else the default."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from telemetria.reports.analysis.limits import applicable_limit_kmh, zone_limit_kmh
from telemetria.reports.model import SpeedZone

NAN = np.nan


def box(lon0: float, lat0: float, lon1: float, lat1: float) -> list[list[float]]:
    return [[lon0, lat0], [lon1, lat0], [lon1, lat1], [lon0, lat1], [lon0, lat0]]


def polygon(*rings: list[list[float]]) -> dict[str, Any]:
    return {"type": "Polygon", "coordinates": list(rings)}


# Around Jaru: zone A covers lon -62.50..-62.46, lat -10.45..-10.41; B overlaps its east half.
ZONE_A = SpeedZone(40.0, polygon(box(-62.50, -10.45, -62.46, -10.41)), name="A")
ZONE_B = SpeedZone(30.0, polygon(box(-62.48, -10.45, -62.44, -10.41)), name="B")
FAST = SpeedZone(80.0, polygon(box(-62.30, -10.30, -62.20, -10.20)), name="highway")


def test_precedence_zone_then_route_then_vehicle_then_default() -> None:
    lat = np.array([-10.43, -10.43, -10.25, -10.25, -10.60, -10.60])
    lon = np.array([-62.49, -62.47, -62.25, -62.25, -62.70, -62.70])
    route = np.array([50.0, 50.0, 50.0, NAN, 45.0, NAN])
    got = applicable_limit_kmh(lat, lon, [ZONE_A, ZONE_B, FAST], route, 55.0, 60.0)
    # A only; A and B (the lowest); a zone wins over the route even when higher; vehicle; route; vehicle.
    assert got.tolist() == [40.0, 30.0, 80.0, 80.0, 45.0, 55.0]
    assert applicable_limit_kmh(lat, lon, [], route, None, 60.0).tolist() == [50, 50, 50, 60, 45, 60]
    assert applicable_limit_kmh(lat, lon, [], None, NAN, 60.0).tolist() == [60.0] * 6
    assert applicable_limit_kmh(lat, lon, [], 70.0, None, 60.0).tolist() == [70.0] * 6  # one route limit for all


def test_inactive_zones_holes_multipolygons_and_boundaries() -> None:
    inactive = SpeedZone(10.0, ZONE_A.geometry, active=False)
    lat = np.array([-10.43, -10.43, -10.25, -10.45, NAN])
    lon = np.array([-62.49, -62.47, -62.25, -62.49, -62.49])
    assert np.isnan(zone_limit_kmh(lat, lon, [inactive])).all()
    holed = SpeedZone(40.0, polygon(box(-62.50, -10.45, -62.46, -10.41), box(-62.475, -10.435, -62.465, -10.425)))
    multi = SpeedZone(
        35.0,
        {
            "type": "MultiPolygon",
            "coordinates": [[box(-62.30, -10.30, -62.20, -10.20)], [box(-62.5, -10.44, -62.48, -10.42)]],
        },
    )
    np.testing.assert_array_equal(zone_limit_kmh(lat, lon, [holed]), [40.0, NAN, NAN, 40.0, NAN])  # edge inside
    np.testing.assert_array_equal(zone_limit_kmh(lat, lon, [multi]), [35.0, NAN, 35.0, NAN, NAN])
    np.testing.assert_array_equal(zone_limit_kmh(lat, lon, [holed, multi]), [35.0, NAN, 35.0, 40.0, NAN])


def test_empty_and_bad_input() -> None:
    assert applicable_limit_kmh(np.zeros(0), np.zeros(0), [ZONE_A], np.zeros(0), None, 60.0).shape == (0,)
    with pytest.raises(ValueError, match="Polygon"):
        zone_limit_kmh([-10.43], [-62.49], [SpeedZone(40.0, {"type": "Point", "coordinates": [-62.49, -10.43]})])


def test_many_fixes_and_zones_at_once() -> None:
    rng = np.random.default_rng(1)
    n = 50_000
    lat = rng.uniform(-10.46, -10.40, n)
    lon = rng.uniform(-62.51, -62.43, n)
    got = applicable_limit_kmh(lat, lon, [ZONE_A, ZONE_B, FAST], None, None, 60.0)
    in_a = (lon >= -62.50) & (lon <= -62.46) & (lat >= -10.45) & (lat <= -10.41)
    in_b = (lon >= -62.48) & (lon <= -62.44) & (lat >= -10.45) & (lat <= -10.41)
    expect = np.where(in_b, 30.0, np.where(in_a, 40.0, 60.0))
    np.testing.assert_array_equal(got, expect)
