"""Metric plane for Jaru/RO: SIRGAS 2000 / UTM zone 20S (EPSG:31980), metres (pure, vectorized)."""

from __future__ import annotations

from functools import cache

import numpy as np
import numpy.typing as npt
from pyproj import Transformer

FloatArray = npt.NDArray[np.float64]

METRIC_CRS = "EPSG:31980"  # Jaru (-62.47) lies in zone 20 (-66..-60); scale error there is under 0.04 %


@cache
def _forward() -> Transformer:
    # Built on first use, not at import: a Transformer loads the PROJ database.
    return Transformer.from_crs("EPSG:4326", METRIC_CRS, always_xy=True)


@cache
def _inverse() -> Transformer:
    return Transformer.from_crs(METRIC_CRS, "EPSG:4326", always_xy=True)


def to_metric(lon: npt.ArrayLike, lat: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Easting and northing, metres, of points given in degrees (arrays of any equal shape)."""
    x, y = _forward().transform(np.asarray(lon, dtype=float), np.asarray(lat, dtype=float))
    return np.asarray(x, dtype=float), np.asarray(y, dtype=float)


def to_lonlat(x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
    """Longitude and latitude, degrees, of points given as easting and northing in metres."""
    lon, lat = _inverse().transform(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    return np.asarray(lon, dtype=float), np.asarray(lat, dtype=float)
