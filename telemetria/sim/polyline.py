"""Geodesic polylines on WGS84: lengths, positions at a distance along them, rounded corners (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from pyproj import Geod

GEOD = Geod(ellps="WGS84")


@dataclass(frozen=True, slots=True, eq=False)
class Polyline:
    """Vertices (degrees) joined by geodesics; `az`: azimuth at each segment start; `cum_m`: metres at vertices."""

    lat: np.ndarray
    lon: np.ndarray
    az: np.ndarray
    cum_m: np.ndarray

    @classmethod
    def of(cls, lat: np.ndarray, lon: np.ndarray) -> Polyline:
        """A polyline through the given vertices (degrees); needs at least two distinct points."""
        lat = np.asarray(lat, dtype=float)
        lon = np.asarray(lon, dtype=float)
        az, _, dist = GEOD.inv(lon[:-1], lat[:-1], lon[1:], lat[1:])
        return cls(lat, lon, np.asarray(az, dtype=float), np.concatenate([[0.0], np.cumsum(dist)]))

    @property
    def length_m(self) -> float:
        """Total geodesic length, metres."""
        return float(self.cum_m[-1])

    def segment(self, s_m: np.ndarray) -> np.ndarray:
        """Index of the segment holding each distance along (a vertex belongs to the segment leaving it)."""
        k = np.searchsorted(self.cum_m, s_m, side="right") - 1
        return np.clip(k, 0, len(self.az) - 1)

    def at(self, s_m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Latitude, longitude and heading (degrees, 0 = north, clockwise) at distances along, metres."""
        s = np.asarray(s_m, dtype=float)
        k = self.segment(s)
        lon, lat, back = GEOD.fwd(self.lon[k], self.lat[k], self.az[k], s - self.cum_m[k])
        return np.asarray(lat), np.asarray(lon), (np.asarray(back) + 180.0) % 360.0


def path_length_m(lat: np.ndarray, lon: np.ndarray) -> float:
    """Geodesic length of a sequence of points, metres."""
    if len(lat) < 2:
        return 0.0
    _, _, dist = GEOD.inv(lon[:-1], lat[:-1], lon[1:], lat[1:])
    return float(np.sum(dist))


def offset(lat: float, lon: float, az_deg: float, dist_m: float) -> tuple[float, float]:
    """The point `dist_m` metres from (lat, lon) along azimuth `az_deg`, degrees."""
    lon2, lat2, _ = GEOD.fwd(lon, lat, az_deg, dist_m)
    return float(lat2), float(lon2)


def turn_deg(az_in: float, az_out: float) -> float:
    """Signed heading change from az_in to az_out in [-180, 180), degrees; positive turns right."""
    return (az_out - az_in + 180.0) % 360.0 - 180.0


@dataclass(frozen=True, slots=True, eq=False)
class Rounded:
    """A polyline whose corners were replaced by arcs, and how distances on the original map onto it."""

    line: Polyline
    arcs: list[tuple[float, float]]  # (start, end) of each arc along the new line, metres
    source: Polyline
    anchor_m: np.ndarray  # where each original segment's straight part begins on the new line, metres
    trim_m: np.ndarray  # how much of each original segment's start the arc before it ate, metres

    def remap(self, s_m: float) -> float:
        """Distance along the rounded line of a point on a straight part of the original, metres."""
        k = int(self.source.segment(np.asarray([s_m]))[0])
        return float(self.anchor_m[k] + (s_m - self.source.cum_m[k] - self.trim_m[k]))


def round_corners(line: Polyline, radius_m: float, max_turn_deg: float = 135.0, step_deg: float = 15.0) -> Rounded:
    """Replace each turn between 1° and max_turn_deg by a circular arc of radius_m metres (U-turns stay sharp)."""
    n = len(line.lat)
    back_az, _, _ = GEOD.inv(line.lon[1:], line.lat[1:], line.lon[:-1], line.lat[:-1])
    seg_len = np.diff(line.cum_m)
    lat_out: list[float] = [float(line.lat[0])]
    lon_out: list[float] = [float(line.lon[0])]
    trims = np.zeros(n)  # trims[k]: metres of straight road the arc at vertex k takes from each side
    arc_pts: dict[int, list[tuple[float, float]]] = {}
    for k in range(1, n - 1):
        az_in = (float(back_az[k - 1]) + 180.0) % 360.0  # travel direction arriving at vertex k
        delta = turn_deg(az_in, float(line.az[k]))
        if not 1.0 <= abs(delta) <= max_turn_deg:
            continue
        half = math.radians(abs(delta)) / 2
        # Never let an arc eat more than a third of a neighbouring segment.
        r = min(radius_m, min(seg_len[k - 1], seg_len[k]) / 3 / math.tan(half))
        trims[k] = r * math.tan(half)
        arc_pts[k] = _arc(float(line.lat[k]), float(line.lon[k]), az_in, delta, r, trims[k], step_deg)
    # Build the new vertex list; the straight part of original segment k starts after vertex k's arc.
    starts: list[int] = []
    for k in range(1, n):
        starts.append(len(lat_out) - 1)
        pts = arc_pts.get(k, [(float(line.lat[k]), float(line.lon[k]))])
        for la, lo in pts:
            lat_out.append(la)
            lon_out.append(lo)
    new = Polyline.of(np.asarray(lat_out), np.asarray(lon_out))
    anchor = new.cum_m[np.asarray(starts)]
    arcs: list[tuple[float, float]] = []
    for k in sorted(arc_pts):
        first = starts[k - 1] + 1  # index of the arc's first point on the new line
        arcs.append((float(new.cum_m[first]), float(new.cum_m[first + len(arc_pts[k]) - 1])))
    return Rounded(new, arcs, line, anchor, trims[:-1])


def _arc(
    lat: float, lon: float, az_in: float, delta: float, r: float, t: float, step_deg: float
) -> list[tuple[float, float]]:
    """Points of the arc replacing the corner at (lat, lon), in a local east/north plane centred there."""
    sgn = 1.0 if delta > 0 else -1.0

    def unit(az: float) -> np.ndarray:
        a = math.radians(az)
        return np.array([math.sin(a), math.cos(a)])

    centre = -t * unit(az_in) + r * unit(az_in + 90.0 * sgn)
    steps = max(2, math.ceil(abs(delta) / step_deg))
    out: list[tuple[float, float]] = []
    for h in np.linspace(az_in, az_in + delta, steps + 1):
        e, nn = centre + r * unit(float(h) - 90.0 * sgn)
        out.append(offset(lat, lon, math.degrees(math.atan2(e, nn)), math.hypot(e, nn)))
    return out
