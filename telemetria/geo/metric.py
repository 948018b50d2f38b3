"""Metric planes: the SIRGAS 2000 / UTM zone of the place measured, metres (pure, vectorized).

A route, a line or a grid cell is measured on the UTM zone its longitude lies in, never on one fixed zone: UTM's
scale grows with the square of the distance from the zone's central meridian, so Jaru's zone 20 (EPSG:31980),
used for a municipality of Pernambuco (27° east of its meridian), would stretch offsets by 11 %. Within its own
zone (3° either side of the meridian) a plane's scale is 0.9996-1.0010 in Brazil's latitudes. Brazil spans zones
18-25 (EPSG:31978-31985; zone 17 is EPSG:31977); a longitude outside them gets WGS 84's zone (EPSG:327zz), the
same numbers within centimetres: SIRGAS 2000 and WGS 84 agree to that.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt
from pyproj import Transformer

FloatArray = npt.NDArray[np.float64]

SIRGAS_ZONES = range(17, 26)  # SIRGAS 2000 / UTM zone zS is EPSG:31960+z for these
JARU_ZONE = 20  # Jaru (-62.47) lies in zone 20 (-66..-60); scale error there is under 0.04 %


def zone_of(lon: float) -> int:
    """The UTM zone (1-60) of a longitude in degrees; Jaru's for a non-finite one."""
    if not math.isfinite(lon):
        return JARU_ZONE
    return (math.floor(lon / 6.0) + 30) % 60 + 1  # lon / 6, not (lon + 180) / 6: -1e-300 + 180 rounds to 180


@dataclass(frozen=True, slots=True, eq=False)
class Plane:
    """One UTM zone's plane: easting and northing in metres of points in degrees, and back."""

    zone: int  # 0: a plane of its own (a road network's transverse Mercator on its centre), no UTM zone
    crs: str
    _fwd: Transformer
    _inv: Transformer

    def to_metric(self, lon: npt.ArrayLike, lat: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Easting and northing, metres, of points given in degrees (arrays of any equal shape; NaN for NaN)."""
        x, y = self._fwd.transform(np.asarray(lon, dtype=float), np.asarray(lat, dtype=float))
        return np.asarray(x, dtype=float), np.asarray(y, dtype=float)

    def to_lonlat(self, x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Longitude and latitude, degrees, of points given as easting and northing in metres."""
        lon, lat = self._inv.transform(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
        return np.asarray(lon, dtype=float), np.asarray(lat, dtype=float)


def plane_of_crs(crs: str, zone: int = 0) -> Plane:
    """The plane of a projected CRS (an EPSG code or a PROJ string); `zone` 0 when it is no UTM zone."""
    return Plane(
        zone,
        crs,
        Transformer.from_crs("EPSG:4326", crs, always_xy=True),
        Transformer.from_crs(crs, "EPSG:4326", always_xy=True),
    )


@cache
def zone_plane(zone: int) -> Plane:
    """The plane of UTM zone `zone` (south), built on first use: a Transformer loads the PROJ database."""
    return plane_of_crs(f"EPSG:{31960 + zone}" if zone in SIRGAS_ZONES else f"EPSG:{32700 + zone}", zone)


def plane_at(lon: float) -> Plane:
    """The plane of the UTM zone that `lon` (degrees) lies in."""
    return zone_plane(zone_of(float(lon)))


def plane_of(lon: npt.ArrayLike) -> Plane:
    """One plane for a whole shape (a route, a line): the zone of the middle of its longitudes' extent."""
    lo = np.asarray(lon, dtype=float)
    lo = lo[np.isfinite(lo)]
    return plane_at((float(lo.min()) + float(lo.max())) / 2 if len(lo) else math.nan)
