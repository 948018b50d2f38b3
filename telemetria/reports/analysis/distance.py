"""Distance driven, segment by segment: along the planned route where the fixes follow it, else the chord (pure).

Each segment runs from the previous kept fix to fix i and is attributed to its END fix i, so the metres of a
time window are the sum over the fixes whose t lies inside it. Every decision about a segment looks only at its
two fixes and (through clean.keep_mask) a few neighbours, never at earlier segments: a window computed with a
few context fixes on each side gives exactly the same per-fix lengths as the whole track.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from telemetria.geo.geodesic import GEOD
from telemetria.geo.routeline import RouteLine, angle_deg
from telemetria.reports.analysis.clean import stationary_mask
from telemetria.reports.analysis.roads import NEAR_ROAD_M, RoadSegments, profile
from telemetria.reports.analysis.track import BoolArray, FloatArray, IntArray, Track
from telemetria.reports.knobs import ReportParams
from telemetria.roads.match import match
from telemetria.roads.model import Roads

# Segment methods (Segments.method). ROAD only with a road network in force (analysis/roads.py).
NONE, ROUTE, CHORD, ROAD = 0, 1, 2, 3
METHOD_NAMES = {NONE: "none", ROUTE: "route", CHORD: "chord", ROAD: "road"}

# Along-route progress may fall short of the chord by the two offsets plus this much (UTM-vs-geodesic scale,
# the chord bending over a corner the route line takes square), metres + fraction of the chord.
SHORT_SLACK_M, SHORT_SLACK = 5.0, 0.01
# Where two passes of a line lie on one road (out and back), a segment fits both equally well; its measures
# (for coverage, not its length) are then taken from a pair moving forward along the line, among the pairs as
# well ranked as the chosen one whose progress is within this much of it: metres + fraction of the progress.
SAME_PROGRESS_M, SAME_PROGRESS = 5.0, 0.02
# A fix's heading says which way it travels along a pass only when it moves; beyond this it points the other way.
WRONG_WAY_DEG = 90.0
# A road path between two fixes is never taken longer than this many times the chord plus these metres, whatever
# time passed: across an hours-long gap max_jump_kmh × dt would let the search cover the whole network (seconds per
# gap on a municipality's roads) to find paths no one believes; past the cap the segment stays the chord.
ROAD_DETOUR, ROAD_DETOUR_M = 4.0, 5000.0


@dataclass(frozen=True, slots=True, eq=False)
class Segments:
    """Per fix of the track: the segment ending at it. Metres, seconds; zero/NONE where no segment ends."""

    t: FloatArray  # fix time, epoch s (copied from the track, for windows)
    length_m: FloatArray
    dt_s: FloatArray  # from the previous kept fix; NaN where none
    method: npt.NDArray[np.int8]  # NONE, ROUTE or CHORD
    route: npt.NDArray[np.int16]  # index into the routes given, -1 unless method is ROUTE
    gap: BoolArray  # dt_s > params.gap_s: the tracker missed reports
    stationary_jitter: BoolArray  # zeroed: both ends stood still and stayed within the jitter radius
    # Geodesic metres along `route` of the segment's start and end (NaN unless ROUTE): where on the line the
    # segment ran, forward (m_end > m_start) whenever an equally good pair says so (SAME_PROGRESS_M).
    m_start: FloatArray
    m_end: FloatArray
    # Of length_m, metres on paved and on unpaved ways (both 0 where unknown: a chord, no network); the way the
    # fix lies on (index into the network's ways, -1: none or no network).
    paved_m: FloatArray
    unpaved_m: FloatArray
    way: npt.NDArray[np.int64]

    def by_method_m(self, mask: BoolArray | None = None) -> dict[str, float]:
        """Metres per method name ('route', 'chord'), over all fixes or over `mask`."""
        sel = np.ones(len(self.t), dtype=bool) if mask is None else mask
        return {name: float(np.sum(self.length_m[sel & (self.method == m)])) for m, name in METHOD_NAMES.items() if m}

    def gap_m(self, mask: BoolArray | None = None) -> float:
        """Metres of segments that span a gap (estimated, not observed), over all fixes or over `mask`."""
        sel = self.gap if mask is None else self.gap & mask
        return float(np.sum(self.length_m[sel]))


def segments(
    track: Track, keep: BoolArray, routes: Sequence[RouteLine], tolerances_m: Sequence[float], params: ReportParams,
    still: BoolArray | None = None, roads: Roads | None = None,
) -> Segments:  # fmt: skip
    """Length of every segment between consecutive kept fixes, metres, by the rules in the module docstring.

    still: clean.stationary_mask(track, params, keep) when the caller already has it. roads: the road network in
    force (analysis/roads.py): segments the routes do not explain are then measured along the roads where a road
    path is plausible (method ROAD), and every segment gets its paved and unpaved metres.
    """
    if len(routes) != len(tolerances_m):
        raise ValueError("one tolerance per route")
    n = len(track)
    idx = np.flatnonzero(keep)
    a, b = idx[:-1], idx[1:]
    dt = track.t[b] - track.t[a]
    chord = _chord_m(track, a, b)
    still = stationary_mask(track, params, keep) if still is None else still
    radius = np.fmax(params.jitter_floor_m, np.fmax(track.accuracy_m[a], track.accuracy_m[b]))
    jitter = still[a] & still[b] & (chord <= radius)
    linked = dt <= params.max_link_s
    along, which, m0, m1 = _along_route(track, a, b, dt, chord, routes, tolerances_m, params)
    use_route = linked & ~jitter & (which >= 0)
    use_chord = linked & ~jitter & ~use_route
    road = _roads(roads, track, a, b, dt, chord, use_chord, params)
    use_road = use_chord & np.isfinite(road.length_m)
    use_chord &= ~use_road

    length = np.zeros(n)
    length[b] = np.where(use_route, along, np.where(use_road, road.length_m, np.where(use_chord, chord, 0.0)))
    dt_s = np.full(n, np.nan)
    dt_s[b] = dt
    method = np.full(n, NONE, dtype=np.int8)
    method[b] = np.where(use_route, ROUTE, np.where(use_road, ROAD, np.where(use_chord, CHORD, NONE)))
    route = np.full(n, -1, dtype=np.int16)
    route[b] = np.where(use_route, which, -1)
    gap = np.zeros(n, dtype=bool)
    gap[b] = dt > params.gap_s
    jit = np.zeros(n, dtype=bool)
    jit[b] = jitter & linked
    m_start, m_end = np.full(n, np.nan), np.full(n, np.nan)
    m_start[b] = np.where(use_route, m0, np.nan)
    m_end[b] = np.where(use_route, m1, np.nan)
    paved, unpaved = np.zeros(n), np.zeros(n)
    way = np.full(n, -1, dtype=np.int64)
    if roads is not None:
        paved[b] = np.where(use_road, road.paved_m, 0.0)
        unpaved[b] = np.where(use_road, road.unpaved_m, 0.0)
        way[b] = np.where(use_road, road.way_to, -1)
        _route_pavement(roads, routes, b, use_route, which, m0, m1, length, paved, unpaved)
        rest = keep & (way < 0)
        if rest.any():
            way[rest] = roads.nearest(track.lat[rest], track.lon[rest], NEAR_ROAD_M)
    return Segments(track.t.copy(), length, dt_s, method, route, gap, jit, m_start, m_end, paved, unpaved, way)


def _roads(
    roads: Roads | None, track: Track, a: IntArray, b: IntArray, dt: FloatArray, chord: FloatArray, todo: BoolArray,
    params: ReportParams,
) -> RoadSegments:  # fmt: skip
    """Road metres of the segments in `todo` (NaN where none is plausible or there is no network), matched over the
    kept fixes in fix order (roads/match.py: each segment decided from match.REACH kept fixes on each side).

    Bounds as the route method's: at least the chord less the slack, at most max_jump_kmh × dt (and never more
    than ROAD_DETOUR × the chord + ROAD_DETOUR_M). The reported speeds are soft evidence only where the segment is
    no gap (across a gap the speeds at its ends say nothing of the time between: the path nearest the chord, the
    shortest plausible one, counts).
    """
    m = len(a)
    if roads is None or not todo.any():
        return RoadSegments(np.full(m, np.nan), np.zeros(m), np.zeros(m), np.full(m, -1, dtype=np.int64))
    low = chord * (1 - SHORT_SLACK) - SHORT_SLACK_M
    high = np.minimum(params.max_jump_kmh / 3.6 * dt + SHORT_SLACK_M, ROAD_DETOUR * chord + ROAD_DETOUR_M)
    pts = np.concatenate([a, b[-1:]])  # the kept fixes in order: segment k runs from pts[k] to pts[k + 1]
    speed = track.speed_kmh[pts]
    found = match(
        roads, track.lat[pts], track.lon[pts], speed, track.heading_deg[pts], speed > params.stationary_kmh, dt,
        chord, todo, low, high, dt <= params.gap_s,
    )  # fmt: skip
    paved = np.where(np.isfinite(found.length_m), found.paved_m, 0.0)
    unpaved = np.where(np.isfinite(found.length_m), found.length_m - paved, 0.0)
    return RoadSegments(found.length_m, paved, unpaved, found.way_to)


def _route_pavement(
    roads: Roads, routes: Sequence[RouteLine], b: IntArray, use_route: BoolArray, which: npt.NDArray[np.int16],
    m0: FloatArray, m1: FloatArray, length: FloatArray, paved: FloatArray, unpaved: FloatArray,
) -> None:  # fmt: skip
    """Paved and unpaved metres of the route segments, from the roads under the route line between the measures,
    scaled to the segment's length (its progress along the line)."""
    profiles = {r: profile(routes[r], roads) for r in np.unique(which[use_route]).tolist()}  # one lookup a route
    for k in np.flatnonzero(use_route).tolist():
        i = int(b[k])
        p, u = profiles[int(which[k])].split(float(m0[k]), float(m1[k]))
        span = abs(float(m1[k]) - float(m0[k]))
        if span > 0:
            paved[i], unpaved[i] = p / span * length[i], u / span * length[i]


def _chord_m(track: Track, a: IntArray, b: IntArray) -> FloatArray:
    """Geodesic metres on WGS84 from fix a to fix b."""
    if len(a) == 0:
        return np.zeros(0)
    _, _, d = GEOD.inv(track.lon[a], track.lat[a], track.lon[b], track.lat[b])
    return np.asarray(d, dtype=float)


def _along_route(
    track: Track,
    a: IntArray,
    b: IntArray,
    dt: FloatArray,
    chord: FloatArray,
    routes: Sequence[RouteLine],
    tolerances_m: Sequence[float],
    params: ReportParams,
) -> tuple[FloatArray, npt.NDArray[np.int16], FloatArray, FloatArray]:
    """Best along-route metres per segment, the route giving them (-1: no plausible pair on any route), and the
    measures of the segment's start and end on that route (NaN where none).

    Among all candidate pairs (start pass, end pass) on one route, a pair is plausible when its progress
    |Δmeasure| is at least the chord less both offsets and slack, and at most max_jump_kmh × dt plus both
    offsets. Plausible pairs are ranked by (1) how many moving ends point the wrong way along their pass for the
    pair's direction of travel, (2) closeness of |Δmeasure| to the reported speeds × dt when both are known,
    else the shorter progress. A start on the way in and an end on the way back count both sides of a U-turn,
    because both passes are measures of one line.

    The measures come from the chosen pair, unless it moves backward along the line and a pair of the same
    wrong-way count with the same progress (SAME_PROGRESS_M) moves forward: then from the best such pair. The
    length is always the chosen pair's.
    """
    m = len(a)
    best_len = np.zeros(m)
    best_key = np.full((m, 2), np.inf)
    best_route = np.full(m, -1, dtype=np.int16)
    best_m0, best_m1 = np.full(m, np.nan), np.full(m, np.nan)
    if m == 0:
        return best_len, best_route, best_m0, best_m1
    pts = np.concatenate([a, b[-1:]])  # fixes in segment order: segment k runs from pts[k] to pts[k + 1]
    speed = track.speed_kmh[pts]
    moving = speed > params.stationary_kmh
    heading = np.where(moving, track.heading_deg[pts], np.nan)  # standing, a tracker's heading is stale or noise
    v = speed / 3.6
    expected = (v[:-1] + v[1:]) / 2 * dt  # NaN unless both speeds are known
    for r, (line, tol) in enumerate(zip(routes, tolerances_m, strict=True)):
        c = line.candidates(track.lon[pts], track.lat[pts], tol)
        s0, s1 = c.measure_m[:-1, :, None], c.measure_m[1:, None, :]
        off = c.offset_m[:-1, :, None] + c.offset_m[1:, None, :]
        delta = s1 - s0  # (m, K, K)
        progress = np.abs(delta)
        with np.errstate(invalid="ignore"):
            lo = chord[:, None, None] * (1 - SHORT_SLACK) - off - SHORT_SLACK_M
            hi = params.max_jump_kmh / 3.6 * dt[:, None, None] + off + SHORT_SLACK_M
            ok = (progress >= lo) & (progress <= hi)
            back = np.where(delta < 0, 180.0, 0.0)
            wrong_in = angle_deg(heading[:-1, None, None], c.bearing_deg[:-1, :, None] + back) > WRONG_WAY_DEG
            wrong_out = angle_deg(heading[1:, None, None], c.bearing_deg[1:, None, :] + back) > WRONG_WAY_DEG
            wrong = wrong_in.astype(float) + wrong_out  # NaN heading or bearing (unknown) is never wrong
            near = np.abs(progress - expected[:, None, None])
        tie = np.where(np.isfinite(near), near, progress)
        wrong = np.where(ok, wrong, np.inf)
        flat = wrong.reshape(m, -1) * 1e9 + np.where(ok, tie, np.inf).reshape(m, -1)
        k = np.argmin(flat, axis=1)  # first of equals: candidates are in measure order, so ties are stable
        rows = np.arange(m)
        key = np.column_stack([wrong.reshape(m, -1)[rows, k], tie.reshape(m, -1)[rows, k]])
        better = np.isfinite(key[:, 0]) & (
            (key[:, 0] < best_key[:, 0]) | ((key[:, 0] == best_key[:, 0]) & (key[:, 1] < best_key[:, 1]))
        )
        best_key[better] = key[better]
        best_len[better] = progress.reshape(m, -1)[rows, k][better]
        best_route[better] = r
        m0, m1 = _forward_measures(k, s0, s1, delta, progress, wrong, tie)
        best_m0[better], best_m1[better] = m0[better], m1[better]
    return best_len, best_route, best_m0, best_m1


def _forward_measures(
    k: IntArray, s0: FloatArray, s1: FloatArray, delta: FloatArray, progress: FloatArray, wrong: FloatArray,
    tie: FloatArray,
) -> tuple[FloatArray, FloatArray]:  # fmt: skip
    """Start and end measures per segment of pair k (flat index into K × K), or of the best forward pair as good.

    s0 (m, K, 1) and s1 (m, 1, K) are the passes' measures; delta, progress, wrong and tie are (m, K, K).
    """
    m, kk = delta.shape[0], delta.shape[1] * delta.shape[2]
    rows = np.arange(m)
    d, p, w, t = (x.reshape(m, kk) for x in (delta, progress, wrong, tie))
    with np.errstate(invalid="ignore"):
        same = (
            np.isfinite(w)
            & (w == w[rows, k][:, None])
            & (np.abs(p - p[rows, k][:, None]) <= SAME_PROGRESS_M + SAME_PROGRESS * p[rows, k][:, None])
            & (d >= 0)
        )
    alt = np.argmin(np.where(same, t, np.inf), axis=1)
    pick = np.where((d[rows, k] < 0) & same.any(axis=1), alt, k)
    start = np.broadcast_to(s0, delta.shape).reshape(m, kk)[rows, pick]
    end = np.broadcast_to(s1, delta.shape).reshape(m, kk)[rows, pick]
    return start, end


def odometer_steps_m(track: Track, keep: BoolArray | None = None) -> FloatArray:
    """Odometer increase from the previous fix with a reading to each fix, metres (cross-check only, never billed).

    Attributed to the end fix like segment lengths, so windows add up; NaN where the fix has no reading, 0 for
    the first reading and where the odometer went backwards (a reset or a replaced tracker).
    """
    sel = np.isfinite(track.odometer_m) & (np.ones(len(track), dtype=bool) if keep is None else keep)
    idx = np.flatnonzero(sel)
    out = np.full(len(track), np.nan)
    if len(idx):
        out[idx] = np.maximum(np.diff(track.odometer_m[idx], prepend=track.odometer_m[idx[0]]), 0.0)
    return out


def odometer_delta_m(track: Track, t0: float, t1: float, keep: BoolArray | None = None) -> float | None:
    """Odometer metres over fixes with t0 ≤ t < t1 (epoch s); None if none of them has a reading."""
    steps = odometer_steps_m(track, keep)
    inside = (track.t >= t0) & (track.t < t1) & np.isfinite(steps)
    return float(np.sum(steps[inside])) if inside.any() else None
