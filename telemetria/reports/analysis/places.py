"""Where a fix was, in words people use: the nearest registered point, else the route and km along it."""

from __future__ import annotations

from typing import Any

import numpy as np

from telemetria.geo.geodesic import distance_m
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.roads import NEAR_ROAD_M
from telemetria.reports.model import Point

NEAR_POINT_M = 300.0


def _km(x: float) -> str:
    return f"{x:.1f}".replace(".", ",")


def route_km(a: Analysis, i: int) -> tuple[str, float] | None:
    """(route code, km along it) of fix i when it lies within its nearest route's tolerance."""
    r = int(a.near[i])
    if r < 0 or not a.offset_m[i] <= a.routes[r].tolerance_m:
        return None
    cand = a.lines[r].candidates(a.track.lon[i : i + 1], a.track.lat[i : i + 1], a.routes[r].tolerance_m)
    measures = cand.measure_m[0][np.isfinite(cand.measure_m[0])]
    return (a.routes[r].code, float(measures[0]) / 1000.0) if len(measures) else None


def road(a: Analysis, i: int) -> str | None:
    """The road fix i lies on (name, else ref) when a road network is in force and the fix is on a named way."""
    w = int(a.seg.way[i])
    return a.roads.ways[w].label if a.roads is not None and w >= 0 else None


def locality(a: Analysis, lat: float, lon: float) -> tuple[str, float] | None:
    """(name, metres) of the imported locality (village, hamlet...) nearest a point, None without one near."""
    return a.roads.locality(lat, lon) if a.roads is not None else None


def _distance(m: float) -> str:
    return f"{m:.0f} m" if round(m) < 1000 else f"{_km(m / 1000)} km"


def place(a: Analysis, i: int) -> dict[str, Any]:
    """`place` (text), `road`, `locality`, `route_code` and `route_km` of fix i; what is unknown is None."""
    lat, lon = float(a.track.lat[i]), float(a.track.lon[i])
    along = route_km(a, i)
    on = road(a, i)
    near = locality(a, lat, lon)
    words = [on] if on else []
    if near:
        words.append(f"{near[0]} (a {_distance(near[1])})")
    points = [p for r in a.routes for p in r.points]
    if points:
        d = np.asarray(distance_m(lon, lat, [p.lon for p in points], [p.lat for p in points]))
        k = int(np.argmin(d))
        if d[k] <= NEAR_POINT_M:
            words.append(f"{points[k].name} (a {d[k]:.0f} m)")
    if along:
        words.append(f"rota {along[0]}, km {_km(along[1])}")
    return {
        "place": "; ".join(words) or None,
        "road": on,
        "locality": near[0] if near else None,
        "route_code": along[0] if along else None,
        "route_km": round(along[1], 2) if along else None,
    }


def passed_points(a: Analysis, radius_m: float = 50.0) -> list[tuple[Point, int]]:
    """Registered points of the day's routes the vehicle came within radius_m of: (point, first fix of each visit)."""
    idx = np.flatnonzero(a.own & a.keep)
    out: list[tuple[Point, int]] = []
    if not len(idx):
        return out
    lon, lat = a.track.lon[idx], a.track.lat[idx]
    for p in (p for r in a.routes for p in r.points):
        near = np.asarray(distance_m(lon, lat, p.lon, p.lat)) <= radius_m
        starts = np.flatnonzero(near & ~np.concatenate([[False], near[:-1]]))
        out += [(p, int(idx[k])) for k in starts.tolist()]
    return out


def road_near(a: Analysis, lat: float, lon: float) -> str | None:
    """The road nearest a place (a stop's centre) within the matching distance, None without a network."""
    if a.roads is None:
        return None
    w = int(a.roads.nearest(np.array([lat]), np.array([lon]), NEAR_ROAD_M)[0])
    return a.roads.ways[w].label if w >= 0 else None


def locality_name(a: Analysis, lat: float, lon: float) -> str | None:
    """The name alone of `locality`."""
    return (locality(a, lat, lon) or (None,))[0]
