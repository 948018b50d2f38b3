"""A route's runs on a day and what one analysis shows of each: the window, the stretch, the coverage (pure).

The measurement (telemetria/measurement/plans.py, coverage.py) gives these as RunPlan and Observation; they are
computed here, in the analysis, so that a day's rollup keeps them (events.py, kind `runs`) by the same code
(reports may not import the measurement, which builds on reports: tests/unit/test_package_cycles.py).

Runs (docs/contracts.md, "How a run's coverage is measured"):
- One run per route per day, unless the scheduled times (stops in `seq` order, those with a time) have a
  break: a new run starts after a school stop whose next scheduled time is at least SCHOOL_BREAK_S later (the
  morning run out to the school, the midday run back), or after any stop whose next is at least RUN_BREAK_S.
- A run's window is the schedule's (schedule.py): EARLY_S before its first scheduled time to LATE_S after its
  last. Where two consecutive windows would overlap they are cut inside the break, dividing it in the ratio
  LATE_S : EARLY_S. Windows stay inside the local day (its rollup sees all of them); without scheduled times
  the run's window is the whole local day.
- A run's stretch: stops are projected on the line monotonically (each at the first pass at or after the one
  before, so that an out-and-back line's return stops land on the return pass). A single run is the whole
  line [0, length]; several runs split it at the measure of the stop before each break (where the vehicle
  waits), the first from 0, the last to the line's end. A break whose split would not lie strictly inside
  (previous split, line end) joins its runs.
- A run's share of the declared km is its stretch / the line's length, in Decimal to SHARE_PLACES; the last
  run takes what the others leave, so a day's shares sum to exactly 1.

Coverage of a run by one vehicle: the union of the along-route intervals [m_start, m_end] (distance.Segments)
of the segments the distance method measures along the run's route (the route alone: a road it shares with
another route of the vehicle counts for both) and that end inside the run's window, clipped to the stretch,
over the stretch's length. So a gap is bridged exactly when the km report bridges it
(the progress along the route is plausible for the time elapsed), an implausible jump is a chord and covers
nothing, and where an out-and-back line's passes share a road the way back covers the return pass
(distance.SAME_PROGRESS_M). Segments whose two ends both stood still (clean.stationary_mask) and that span at
most STANDING_RADII jitter radii cover nothing: stationary jitter is not progress, though any km it has still
count in route_km.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from itertools import pairwise
from typing import Any

import numpy as np

from telemetria.geo.routeline import RouteLine
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.analysis import distance
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.schedule import EARLY_S, LATE_S, scheduled_at
from telemetria.reports.analysis.track import BoolArray
from telemetria.reports.knobs import DEFAULT, ReportParams
from telemetria.reports.model import Point, Route

SCHOOL_BREAK_S = 3600.0  # a wait this long after a school stop ends a run
RUN_BREAK_S = 90 * 60.0  # a wait this long after any stop does too
SHARE_PLACES = Decimal("0.000001")
STANDING_RADII = 3.0  # a segment between two standing fixes spanning more jitter radii than this is a move


@dataclass(frozen=True, slots=True)
class Stretch:
    """One run of a route on a day: number, window [start, end) (epoch s), stretch [m_from, m_to] (m), share."""

    run_no: int
    start: float
    end: float
    m_from: float
    m_to: float
    share: Decimal


@dataclass(frozen=True, slots=True)
class Seen:
    """What one analysis shows of one run: coverage 0..1, km on and off the route, first/last fix on it (epoch s)."""

    coverage: float
    route_km: float
    off_route_km: float
    first: float | None
    last: float | None


def stop_measures(points: Sequence[Point], line: RouteLine, tolerance_m: float) -> list[float]:
    """Metres along `line` of each point (in the order given), non-decreasing: the first pass within tolerance
    (for a point farther away, its nearest passes) at or after the previous point's measure."""
    if not points:
        return []
    lon = np.array([p.lon for p in points], dtype=float)
    lat = np.array([p.lat for p in points], dtype=float)
    off = line.offset_m(lon, lat)
    out: list[float] = []
    prev = 0.0
    for i in range(len(points)):
        reach = max(tolerance_m, float(off[i]) + 1.0) if np.isfinite(off[i]) else tolerance_m
        c = line.candidates(lon[i : i + 1], lat[i : i + 1], reach).measure_m[0]
        ahead = c[np.isfinite(c) & (c >= prev)]
        prev = float(ahead.min()) if len(ahead) else prev
        out.append(prev)
    return out


# Where a route's stops fall along its line depends on the route version, never on the day: a month's boletim
# asks for it once per route-day, so it is kept per version (the digest covers line, stops and tolerance).
_MEASURES: dict[tuple[str, float], tuple[float, ...]] = {}
_MEASURES_MAX = 4096


def _route_measures(route: Route, points: Sequence[Point], line: RouteLine) -> list[float]:
    key = (route.digest, line.length_m)
    got = _MEASURES.get(key)
    if got is None:
        if len(_MEASURES) >= _MEASURES_MAX:
            _MEASURES.clear()
        got = _MEASURES[key] = tuple(stop_measures(points, line, route.tolerance_m))
    return list(got)


def _breaks(timed: Sequence[tuple[int, float]], points: Sequence[Point]) -> set[int]:
    """Positions j in `timed` after which a new run starts."""
    out = set()
    for j in range(len(timed) - 1):
        wait = timed[j + 1][1] - timed[j][1]
        if wait >= RUN_BREAK_S or (points[timed[j][0]].kind == "school" and wait >= SCHOOL_BREAK_S):
            out.add(j)
    return out


def _shares(stretches: Sequence[float], length_m: float) -> list[Decimal]:
    shares = [(Decimal(repr(s)) / Decimal(repr(length_m))).quantize(SHARE_PLACES) for s in stretches[:-1]]
    return [*shares, Decimal(1) - sum(shares, Decimal(0))]


def stretches(route: Route, line: RouteLine, day: date) -> list[Stretch]:
    """The runs `route` makes on local date `day` over `line` (its geometry), by the rules in the docstring."""
    d0, d1 = (b.timestamp() for b in day_bounds(day))
    length = line.length_m
    points = sorted(route.points, key=lambda p: p.seq)
    timed = [(i, t) for i, p in enumerate(points) if (t := scheduled_at(p, day)) is not None]
    if not timed:
        return [Stretch(1, d0, d1, 0.0, length, Decimal(1))]
    measures = _route_measures(route, points, line)
    groups: list[list[float]] = [[]]
    splits: list[float] = []
    cuts = _breaks(timed, points)
    for j, (i, t) in enumerate(timed):
        groups[-1].append(t)
        if j in cuts and (splits[-1] if splits else 0.0) < measures[i] < length:
            splits.append(measures[i])
            groups.append([])
    edges = [0.0, *splits, length]
    firsts, lasts = [min(g) for g in groups], [max(g) for g in groups]
    starts = [max(d0, f - EARLY_S) for f in firsts]
    ends = [min(d1, last + LATE_S) for last in lasts]
    for k in range(len(groups) - 1):
        if ends[k] > starts[k + 1]:
            cut = lasts[k] + (firsts[k + 1] - lasts[k]) * LATE_S / (LATE_S + EARLY_S)
            ends[k], starts[k + 1] = cut, cut
    shares = _shares([b - a for a, b in pairwise(edges)], length)
    return [Stretch(k + 1, starts[k], ends[k], edges[k], edges[k + 1], shares[k]) for k in range(len(groups))]


def _union_m(lo: np.ndarray, hi: np.ndarray, m_from: float, m_to: float) -> float:
    """Metres of [m_from, m_to] covered by the union of the intervals [lo_i, hi_i]."""
    lo, hi = np.clip(lo, m_from, m_to), np.clip(hi, m_from, m_to)
    order = np.argsort(lo, kind="stable")
    total, reach = 0.0, m_from
    for a, b in zip(lo[order].tolist(), hi[order].tolist(), strict=True):
        if b > reach:
            total += b - max(a, reach)
            reach = b
    return total


def _previous_kept(a: Analysis) -> np.ndarray:
    """Per fix, the index of the kept fix before it (-1: none), where its segment starts."""
    idx = np.flatnonzero(a.keep)
    prev = np.full(len(a.track), -1, dtype=np.int64)
    prev[idx[1:]] = idx[:-1]
    return prev


def along(a: Analysis, route_index: int, params: ReportParams = DEFAULT) -> distance.Segments:
    """The analysis's segments measured by the distance method with its route number `route_index` alone.

    With several routes the km report gives a segment on a road two routes share to the first of them; a run
    of either has covered it all the same.
    """
    line, route = a.lines[route_index], a.routes[route_index]
    return distance.segments(a.track, a.keep, [line], [route.tolerance_m], params, a.still)


def _standing(a: Analysis, seg: distance.Segments, prev: np.ndarray, params: ReportParams) -> BoolArray:
    """Segments that are stationary jitter: both ends stood still and it spans at most STANDING_RADII jitter
    radii (max(jitter_floor_m, either fix's accuracy)). A long one between two standing fixes (across a gap
    in reporting, say) is a move all the same."""
    has = prev >= 0
    p = np.maximum(prev, 0)
    acc = np.fmax(a.track.accuracy_m, np.where(has, a.track.accuracy_m[p], np.nan))
    radius = np.fmax(params.jitter_floor_m, acc)
    standing: BoolArray = has & a.still & a.still[p] & (seg.length_m <= STANDING_RADII * radius)
    return standing


def _leaving(
    a: Analysis, seg: distance.Segments, prev: np.ndarray, inside: BoolArray, line: RouteLine, params: ReportParams
) -> tuple[np.ndarray, np.ndarray]:
    """Along-route intervals driven on the route inside the segments that leave it or come back to it.

    A segment from a fix on the route (the segment before it was measured along it, ending at measure m_a) to one
    off it (or back) was driven along the route from m_a up to where the vehicle turned off, somewhere before the
    foot of the off-route fix on the line (m_b). That point is estimated from the distance driven in the segment,
    L (the reported speeds × time when both are known and it is no gap, else its measured length), less both
    fixes' distances from the line: exact for a road turning square off the route at a steady speed,
    and clamped to [m_a, m_b]. The return is the mirror image. Without these, coverage loses about half an
    interval's driving at every departure and every return (one point and more on a 24 km run at 30 s fixes).
    """
    los: list[float] = []
    his: list[float] = []
    t, v = a.track.t, a.track.speed_kmh
    route = seg.method == distance.ROUTE
    idx = np.flatnonzero(inside & ~route & (seg.length_m > 0) & (prev >= 0))
    nxt = np.full(len(t), -1, dtype=np.int64)
    kept = np.flatnonzero(a.keep)
    nxt[kept[:-1]] = kept[1:]
    for j in idx.tolist():
        i = int(prev[j])
        dt = float(t[j] - t[i])
        pace = (v[i] + v[j]) / 2 / 3.6 * dt
        driven = float(pace) if np.isfinite(pace) and dt <= params.gap_s else float(seg.length_m[j])
        if route[i] and np.isfinite(seg.m_end[i]):  # departure: i on the route, j off it
            m_a, forward = float(seg.m_end[i]), bool(seg.m_end[i] >= seg.m_start[i])
            foot = _foot(line, a.track.lon[j], a.track.lat[j], m_a, forward, driven)
            if foot is not None:
                m_b, off = foot
                reach = min(max(driven - off - _offset(line, a, i), 0.0), abs(m_b - m_a))
                los.append(min(m_a, m_a + (reach if forward else -reach)))
                his.append(max(m_a, m_a + (reach if forward else -reach)))
        n = int(nxt[j])
        if n >= 0 and route[n] and np.isfinite(seg.m_start[n]):  # return: i off the route, j back on it
            m_b, forward = float(seg.m_start[n]), bool(seg.m_end[n] >= seg.m_start[n])
            foot = _foot(line, a.track.lon[i], a.track.lat[i], m_b, not forward, driven)
            if foot is not None:
                m_a, off = foot
                reach = min(max(driven - off - _offset(line, a, j), 0.0), abs(m_b - m_a))
                los.append(min(m_b, m_b - (reach if forward else -reach)))
                his.append(max(m_b, m_b - (reach if forward else -reach)))
    return np.asarray(los, dtype=float), np.asarray(his, dtype=float)


def _offset(line: RouteLine, a: Analysis, i: int) -> float:
    """Metres fix i lies off the line: within the route's tolerance it is on the route, yet that far from it."""
    off = float(line.offset_m(a.track.lon[i : i + 1], a.track.lat[i : i + 1])[0])
    return off if np.isfinite(off) else 0.0


def _foot(
    line: RouteLine, lon: float, lat: float, m_from: float, forward: bool, driven: float
) -> tuple[float, float] | None:
    """The pass of the line nearest a point (its measure and the point's distance from it) within `driven` metres
    of m_from in the direction of travel, None when none is."""
    c = line.candidates([lon], [lat], max(driven, 1.0))
    m, off = c.measure_m[0], c.offset_m[0]
    ok = np.isfinite(m) & ((m >= m_from) if forward else (m <= m_from)) & (np.abs(m - m_from) <= driven)
    if not ok.any():
        return None
    k = int(np.argmin(np.where(ok, off, np.inf)))
    return float(m[k]), float(off[k])


def seen(
    a: Analysis, seg: distance.Segments, s: Stretch, params: ReportParams = DEFAULT, line: RouteLine | None = None
) -> Seen:
    """What analysis `a` shows of run `s`, from its segments measured with the run's route alone (`along`);
    with the route's `line`, the departures from it and returns to it are interpolated (_leaving)."""
    t = a.track.t
    inside: BoolArray = (t >= s.start) & (t < s.end)
    on = inside & (seg.method == distance.ROUTE)
    prev = _previous_kept(a)
    standing = _standing(a, seg, prev, params)
    moved = np.flatnonzero(on & ~standing & (seg.length_m > 0))
    lo = np.fmin(seg.m_start[moved], seg.m_end[moved])
    hi = np.fmax(seg.m_start[moved], seg.m_end[moved])
    if line is not None:
        extra_lo, extra_hi = _leaving(a, seg, prev, inside, line, params)
        lo, hi = np.concatenate([lo, extra_lo]), np.concatenate([hi, extra_hi])
    stretch = s.m_to - s.m_from
    covered = _union_m(lo, hi, s.m_from, s.m_to) if stretch > 0 else 0.0
    ends = np.concatenate([t[moved], t[prev[moved]]])
    ends = ends[ends >= s.start]
    return Seen(
        coverage=min(1.0, covered / stretch) if stretch > 0 else 0.0,
        route_km=float(np.sum(seg.length_m[on])) / 1000.0,
        off_route_km=float(np.sum(seg.length_m[inside & ~on])) / 1000.0,
        first=float(ends.min()) if len(ends) else None,
        last=float(ends.max()) if len(ends) else None,
    )


def local_day(a: Analysis) -> date:
    """The local day an analysis of one day (or a piece of it) is about."""
    return datetime.fromtimestamp(a.start, LOCAL_TZ).date()


def rows(a: Analysis) -> list[dict[str, Any]]:
    """The runs of every route of analysis `a` (one local day) as this vehicle made them, neutral (rollups).

    Each row carries its run's window and stretch, so that a reader can tell it is the run it plans."""
    day = local_day(a)
    out = []
    for r, (route, line) in enumerate(zip(a.routes, a.lines, strict=True)):
        seg = along(a, r)
        for s in stretches(route, line, day):
            x = seen(a, seg, s, line=line)
            out.append(
                {
                    "route_id": route.id,
                    "run_no": s.run_no,
                    "start": s.start,
                    "end": s.end,
                    "m_from": s.m_from,
                    "m_to": s.m_to,
                    "coverage": x.coverage,
                    "route_km": x.route_km,
                    "off_route_km": x.off_route_km,
                    "first": x.first,
                    "last": x.last,
                }
            )
    return out
