"""A planned route as a line for linear referencing: offsets, per-pass measures and positions (pure, vectorized).

Geometry is done on the plane of the route's own UTM zone (telemetria.geo.metric); measures are GEODESIC metres
along the route: a position inside a segment maps to the vertices' cumulative geodesic length, so that along-route
distances agree with pyproj.Geod lengths rather than with the UTM scale.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import shapely

from telemetria.geo.geodesic import GEOD
from telemetria.geo.metric import Plane, plane_of

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# Two nearest locations on one stretch of the line are separate passes when the route's direction between them
# has turned round (a U-turn at a school, around a block); a right-angle corner keeps them one pass.
REVERSAL_DEG = 135.0


def angle_deg(a: npt.ArrayLike, b: npt.ArrayLike) -> FloatArray:
    """Unsigned difference between two azimuths, degrees in [0, 180] (NaN if either is NaN)."""
    diff: FloatArray = np.abs((np.asarray(a, dtype=float) - np.asarray(b, dtype=float) + 180.0) % 360.0 - 180.0)
    return diff


@dataclass(frozen=True, slots=True, eq=False)
class Candidates:
    """Per point (row), one column per separate pass of the line within tolerance, ordered by measure.

    NaN pads rows with fewer passes; a row of NaN is a point off the route.
    """

    measure_m: FloatArray  # (n, K) geodesic metres from the route's start to the nearest location on the pass
    bearing_deg: FloatArray  # (n, K) route direction there, degrees from north; NaN at a U-turn vertex
    offset_m: FloatArray  # (n, K) distance from the point to that location, metres

    @property
    def count(self) -> IntArray:
        """Number of passes within tolerance, per point."""
        count: IntArray = np.sum(np.isfinite(self.measure_m), axis=1).astype(np.int64)
        return count


@dataclass(frozen=True, slots=True, eq=False)
class RouteLine:
    """Vertices in degrees and in UTM metres, per-segment geodesic lengths and azimuths, and a segment index."""

    lon: FloatArray
    lat: FloatArray
    x: FloatArray
    y: FloatArray
    cum_m: FloatArray  # geodesic metres from the start at each vertex
    seg_m: FloatArray  # geodesic length of each segment
    az_deg: FloatArray  # geodesic azimuth of each segment at its start
    tree: shapely.STRtree  # over the segments as UTM linestrings, in segment order
    plane: Plane  # the UTM zone of the route's middle longitude: points are measured against it on that plane

    @classmethod
    def of(cls, lon: npt.ArrayLike, lat: npt.ArrayLike) -> RouteLine:
        """A route line through vertices in degrees; repeated consecutive vertices are dropped."""
        lo = np.asarray(lon, dtype=float)
        la = np.asarray(lat, dtype=float)
        if lo.shape != la.shape or lo.ndim != 1 or not (np.all(np.isfinite(lo)) and np.all(np.isfinite(la))):
            raise ValueError("route vertices must be finite 1-D arrays of equal length")
        keep = np.concatenate([[True], (np.diff(lo) != 0) | (np.diff(la) != 0)])
        lo, la = lo[keep], la[keep]
        if len(lo) < 2:
            raise ValueError("a route line needs at least two distinct vertices")
        az, _, dist = GEOD.inv(lo[:-1], la[:-1], lo[1:], la[1:])
        seg = np.asarray(dist, dtype=float)
        plane = plane_of(lo)
        x, y = plane.to_metric(lo, la)
        xy = np.column_stack([x, y])
        lines = shapely.linestrings(np.stack([xy[:-1], xy[1:]], axis=1))
        cum = np.concatenate([[0.0], np.cumsum(seg)])
        return cls(lo, la, x, y, cum, seg, np.asarray(az, dtype=float) % 360.0, shapely.STRtree(lines), plane)

    @property
    def length_m(self) -> float:
        """Geodesic length of the whole line, metres."""
        return float(self.cum_m[-1])

    def offset_m(self, lon: npt.ArrayLike, lat: npt.ArrayLike) -> FloatArray:
        """Distance from each point (degrees) to the nearest location on the line, metres; NaN for NaN input."""
        px, py = self.plane.to_metric(np.ravel(lon), np.ravel(lat))
        out = np.full(len(px), np.nan)
        ok = np.flatnonzero(np.isfinite(px) & np.isfinite(py))
        if len(ok):
            pairs, dist = self.tree.query_nearest(
                shapely.points(px[ok], py[ok]), return_distance=True, all_matches=False
            )
            out[ok[pairs[0]]] = dist
        return out

    def point_at(self, measure_m: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Longitude and latitude, degrees, of measures along the line (geodesic metres, clipped to the line)."""
        s = np.clip(np.asarray(measure_m, dtype=float), 0.0, self.length_m)
        k = np.clip(np.searchsorted(self.cum_m, s, side="right") - 1, 0, len(self.seg_m) - 1)
        lon, lat, _ = GEOD.fwd(self.lon[k], self.lat[k], self.az_deg[k], s - self.cum_m[k])
        return np.asarray(lon, dtype=float), np.asarray(lat, dtype=float)

    def candidates(self, lon: npt.ArrayLike, lat: npt.ArrayLike, tolerance_m: float) -> Candidates:
        """Every separate pass of the line within tolerance_m metres of each point (degrees): see Candidates."""
        px, py = self.plane.to_metric(np.ravel(lon), np.ravel(lat))
        n = len(px)
        finite = np.isfinite(px) & np.isfinite(py)
        pts = shapely.points(np.where(finite, px, 0.0), np.where(finite, py, 0.0))
        pi, sk = self.tree.query(pts, predicate="dwithin", distance=tolerance_m)
        hit = finite[pi]
        pi, sk = pi[hit], sk[hit]
        order = np.lexsort((sk, pi))
        pi, sk = pi[order].astype(np.int64), sk[order].astype(np.int64)
        # Foot of each point on each nearby segment, by the planar projection parameter t in [0, 1].
        ax, ay = self.x[sk], self.y[sk]
        dx, dy = self.x[sk + 1] - ax, self.y[sk + 1] - ay
        qx, qy = px[pi] - ax, py[pi] - ay
        t = np.clip((qx * dx + qy * dy) / (dx * dx + dy * dy), 0.0, 1.0)
        dist = np.hypot(qx - t * dx, qy - t * dy)
        to_end = np.hypot(qx - dx, qy - dy)  # to the vertex shared with the next segment
        same_prev = np.concatenate([[False], (pi[1:] == pi[:-1]) & (sk[1:] == sk[:-1] + 1)])
        prev_t = np.concatenate([[np.nan], t[:-1]])
        # Local minima of the distance along the line: feet inside a segment, a vertex both neighbours clamp
        # to (counted on the segment leaving it), and the line's two ends.
        last = len(self.seg_m) - 1
        at_vertex = (t == 0.0) & ((sk == 0) | (same_prev & (prev_t == 1.0)))
        is_min = ((t > 0.0) & (t < 1.0)) | at_vertex | ((t == 1.0) & (sk == last))
        # A stretch is a run of consecutive segments whose shared vertices all stay within tolerance.
        breaks = ~same_prev | (np.concatenate([[np.inf], to_end[:-1]]) > tolerance_m)
        stretch = np.cumsum(breaks, dtype=np.int64)
        # At a vertex the route's direction is halfway through the turn, and unknown at a U-turn.
        az_in, az_out = self.az_deg[np.maximum(sk - 1, 0)], self.az_deg[sk]
        turn = (az_out - az_in + 180.0) % 360.0 - 180.0
        inner = at_vertex & (sk > 0)
        bearing = np.where(inner, (az_in + turn / 2) % 360.0, az_out)
        bearing[inner & (np.abs(turn) > REVERSAL_DEG)] = np.nan
        measure = self.cum_m[sk] + t * self.seg_m[sk]
        rows = np.flatnonzero(is_min & (dist <= tolerance_m))
        if len(rows) == 0:
            return _pad(n, rows, np.zeros(0), np.zeros(0), np.zeros(0))
        group = _passes(stretch[rows], bearing[rows])
        # One candidate per pass: its nearest location (stable sort keeps segment order among equal distances).
        by = np.lexsort((dist[rows], group))
        first = np.concatenate([[True], group[by][1:] != group[by][:-1]])
        pick = rows[by[first]]
        return _pad(n, pi[pick], measure[pick], bearing[pick], dist[pick])


def _passes(stretch: IntArray, bearing: FloatArray) -> IntArray:
    """Pass number of each local minimum (rows in line order): a new pass per stretch and per reversal in one."""
    new = np.concatenate([[True], stretch[1:] != stretch[:-1]])
    # Minima sharing a stretch with the one before are few (corners, U-turns): walk only those stretches,
    # comparing with the first minimum of the current pass so that two 90° turns still make a U-turn.
    shared = np.isin(stretch, stretch[~new])
    ref = np.nan
    for j in np.flatnonzero(shared):
        if new[j] or not angle_deg(ref, bearing[j]) <= REVERSAL_DEG:  # NaN (a U-turn vertex) starts a pass too
            new[j] = True
            ref = bearing[j]
    return np.cumsum(new)


def _pad(n: int, point: IntArray, measure: FloatArray, bearing: FloatArray, dist: FloatArray) -> Candidates:
    """Scatter one row per (point, pass) into NaN-padded (n, K) arrays, each row ordered by measure."""
    order = np.lexsort((measure, point))
    point, measure, bearing, dist = point[order], measure[order], bearing[order], dist[order]
    starts = np.concatenate([[0], np.flatnonzero(point[1:] != point[:-1]) + 1]) if len(point) else np.zeros(0, int)
    rank = np.arange(len(point)) - np.repeat(starts, np.diff(np.concatenate([starts, [len(point)]])))
    k = int(rank.max()) + 1 if len(rank) else 1
    out = [np.full((n, k), np.nan) for _ in range(3)]
    for arr, val in zip(out, (measure, bearing, dist), strict=True):
        arr[point, rank] = val
    return Candidates(*out)
