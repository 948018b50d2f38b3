"""Geodesic distances and polyline lengths on the WGS84 ellipsoid (pure, vectorized)."""

from __future__ import annotations

from typing import overload

import numpy as np
import numpy.typing as npt
from pyproj import Geod

GEOD = Geod(ellps="WGS84")

FloatArray = npt.NDArray[np.float64]


def line_length_m(lons: npt.ArrayLike, lats: npt.ArrayLike) -> float:
    """Geodesic length of the polyline through (lon, lat) vertices in degrees, metres; 0.0 for fewer than 2."""
    lon = np.asarray(lons, dtype=float)
    lat = np.asarray(lats, dtype=float)
    if lon.shape != lat.shape or lon.ndim != 1:
        raise ValueError(f"lons and lats must be 1-D and of equal length, got shapes {lon.shape} and {lat.shape}")
    if len(lon) < 2:
        return 0.0
    _, _, dist = GEOD.inv(lon[:-1], lat[:-1], lon[1:], lat[1:])
    return float(np.sum(dist))


@overload
def distance_m(lon1: float, lat1: float, lon2: float, lat2: float) -> float: ...
@overload
def distance_m(
    lon1: npt.ArrayLike, lat1: npt.ArrayLike, lon2: npt.ArrayLike, lat2: npt.ArrayLike
) -> float | FloatArray: ...
def distance_m(
    lon1: npt.ArrayLike, lat1: npt.ArrayLike, lon2: npt.ArrayLike, lat2: npt.ArrayLike
) -> float | FloatArray:
    """Geodesic distance between points given in degrees, metres; a float for scalars, else an array (broadcast)."""
    a, b, c, d = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (lon1, lat1, lon2, lat2)))
    _, _, dist = GEOD.inv(a.ravel(), b.ravel(), c.ravel(), d.ravel())
    out = np.asarray(dist, dtype=float).reshape(a.shape)
    return float(out) if out.ndim == 0 else out
