"""Boarding places on a grid of N metres: each point moved to the centre of its cell of its UTM zone's plane (pure).

A boarding point near a home identifies a child (LGPD Art. 14), so the public area shows the cell a point
falls in, not the point: every point of one cell is published as the same place, and none moves more than
half the cell's diagonal (N·√2/2 metres in the plane; within its own zone the plane's scale error is under 0.1 %).
Each point is snapped on the plane of the zone its own longitude lies in, so a point's cell never depends on the
other points published with it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from telemetria.geo.metric import zone_of, zone_plane

PLACES = 6  # decimals of the published degrees (~0.1 m): the cell's centre, not a false precision of the point


def max_shift_m(cell_m: float) -> float:
    """How far, in metres of the plane, a point may be moved on a grid of `cell_m` metres."""
    return cell_m * math.sqrt(2) / 2


def snap_xy(x: np.ndarray, y: np.ndarray, cell_m: float) -> tuple[np.ndarray, np.ndarray]:
    """Plane coordinates (metres) moved to the centre of their `cell_m` cell; as they are when `cell_m` ≤ 0."""
    if cell_m <= 0:
        return x, y
    return (np.floor(x / cell_m) + 0.5) * cell_m, (np.floor(y / cell_m) + 0.5) * cell_m


def snap(lat: Sequence[float], lon: Sequence[float], cell_m: float) -> list[tuple[float, float]]:
    """(lat, lon) degrees of each point on the grid of `cell_m` metres (0: as given), to PLACES decimals."""
    if len(lat) == 0:
        return []
    if cell_m <= 0:
        return [(round(float(a), PLACES), round(float(o), PLACES)) for a, o in zip(lat, lon, strict=True)]
    lo, la = np.asarray(lon, dtype=float), np.asarray(lat, dtype=float)
    glon, glat = np.empty(len(lo)), np.empty(len(lo))
    zones = np.array([zone_of(float(v)) for v in lo])
    for zone in np.unique(zones):
        at = zones == zone
        plane = zone_plane(int(zone))
        gx, gy = snap_xy(*plane.to_metric(lo[at], la[at]), cell_m)
        glon[at], glat[at] = plane.to_lonlat(gx, gy)
    return [(round(float(a), PLACES), round(float(o), PLACES)) for a, o in zip(glat, glon, strict=True)]
