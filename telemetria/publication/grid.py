"""Boarding places on a grid of N metres: each point moved to the centre of its cell of the UTM plane (pure).

A boarding point near a home identifies a child (LGPD Art. 14), so the public area shows the cell a point
falls in, not the point: every point of one cell is published as the same place, and none moves more than
half the cell's diagonal (N·√2/2 metres in the plane; the plane's scale error here is under 0.04 %).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from telemetria.geo.metric import to_lonlat, to_metric

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
    x, y = to_metric(lon, lat)
    gx, gy = snap_xy(x, y, cell_m)
    glon, glat = to_lonlat(gx, gy)
    return [(round(float(a), PLACES), round(float(o), PLACES)) for a, o in zip(glat, glon, strict=True)]
