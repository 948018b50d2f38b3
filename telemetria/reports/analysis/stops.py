"""Stops, trips between them, authorized stopping points (Art. 38 IX) and time on board (Art. 9 §1) (pure).

Times are epoch seconds; indexes point into the track's arrays (fix-time order); fixes outside `keep` are skipped.

A stop began somewhere between the last fix before it (moving) and its first stationary fix, and ended between its
last stationary fix and the first fix after it. Its `start` and `end` are the midpoints of those two intervals: the
unbiased estimate (a 180 s stop sampled every 30 s reads 180 ± 15 s, where its first and last stationary fixes
alone would read 150 s, one interval short on average), and `start_min`..`start_max`, `end_min`..`end_max` the
bounds, the inner ones being what was observed (the first and last stationary fixes: an inspector checks them
against the raw fixes). A neighbouring fix further than gap_s away (a silence, the start of the day, a fix not
yet received) gives no midpoint: that side keeps the observed instant, never time nobody saw. A stop counts from
stop_min_s of estimated duration, so a 75 s boarding stop sampled every 30 s (two or three stationary fixes, 30
to 60 s observed) is found.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import pairwise

import numpy as np

from telemetria.geo.geodesic import distance_m
from telemetria.reports.analysis.track import IGN_OFF, BoolArray, FloatArray, IntArray
from telemetria.reports.knobs import DEFAULT, ReportParams
from telemetria.reports.model import Point

_EARTH_M = 6_371_008.8  # mean radius: local east/north metres within a stop, where 30 m is all that matters


@dataclass(frozen=True, slots=True)
class Stop:
    """The vehicle stood still from `start` to `end` (its first and last stationary fixes, indexes first..last).

    lat/lon: median of its fixes, degrees; ignition_off: the ignition was reported off at some fix of it.
    """

    first: int
    last: int
    start: float
    end: float
    lat: float
    lon: float
    n_fixes: int
    ignition_off: bool
    # Bounds of start and end: the observed instants, and the fixes around them (None: no fix within gap_s on that
    # side, the start or end of what was received: unbounded there).
    start_min: float | None = None  # the fix before the stop: it had not begun then
    start_max: float | None = None  # its first stationary fix
    end_min: float | None = None  # its last stationary fix
    end_max: float | None = None  # the fix after it: it had ended by then

    @property
    def duration_s(self) -> float:
        """Seconds from the estimated start to the estimated end (the midpoints: module text)."""
        return self.end - self.start

    @property
    def duration_bounds_s(self) -> tuple[float, float]:
        """The least and the most it can have lasted: the observed standstill, and from the fix before to the fix
        after (inf where either is missing)."""
        lo = (self.end if self.end_min is None else self.end_min) - (
            self.start if self.start_max is None else self.start_max
        )
        if self.start_min is None or self.end_max is None:
            return lo, math.inf
        return lo, self.end_max - self.start_min


@dataclass(frozen=True, slots=True)
class Trip:
    """Movement from one stop to the next: fixes first..last, from the stop's last fix to the next one's first.

    km is the sum of per-fix segment lengths over fixes first+1..last. moving_s: seconds of the segments not
    between two stationary fixes (the denominator of the average speed); max_kmh: top reported speed, NaN if none.
    from_stop/to_stop are indexes into the stop list (None at the track's ends or at a gap over max_link_s).
    """

    first: int
    last: int
    start: float
    end: float
    from_stop: int | None
    to_stop: int | None
    moving_s: float
    max_kmh: float
    over_2h: bool = False  # part of an on-board leg of 2 h or more, or itself that long (Art. 9 §1)
    # The estimated departure and arrival (issue 34): the end of the stop it leaves and the start of the one it
    # reaches, the midpoints with the fixes around them (None: no stop at that end; start/end are then the best).
    departed: float | None = None
    arrived: float | None = None

    @property
    def duration_s(self) -> float:
        """Seconds from departure to arrival, as observed: the stop's last stationary fix to the next one's first."""
        return self.end - self.start

    @property
    def estimated_s(self) -> float:
        """Seconds from the estimated departure to the estimated arrival: what Art. 9 §1 measures (duration_s reads
        one fix interval long on average between two stops)."""
        return (self.end if self.arrived is None else self.arrived) - (
            self.start if self.departed is None else self.departed
        )


def _kept(n: int, keep: BoolArray | None) -> IntArray:
    return np.arange(n) if keep is None else np.flatnonzero(np.asarray(keep, dtype=bool))


def stationary(
    speed_kmh: FloatArray, ignition: np.ndarray, params: ReportParams = DEFAULT, still: BoolArray | None = None
) -> BoolArray:
    """Per fix: `still` (default: reported speed ≤ stationary_kmh, NaN is not), or the ignition off."""
    with np.errstate(invalid="ignore"):
        base = speed_kmh <= params.stationary_kmh if still is None else np.asarray(still, dtype=bool)
    return np.asarray(base | (ignition == IGN_OFF), dtype=bool)


def _clusters(lat: FloatArray, lon: FloatArray, radius_m: float) -> list[tuple[int, int]]:
    """Split consecutive positions where one falls farther than radius_m from the mean of the cluster so far."""
    y = np.radians(lat - lat[0]) * _EARTH_M
    x = np.radians(lon - lon[0]) * _EARTH_M * math.cos(math.radians(float(lat[0])))
    out: list[tuple[int, int]] = []
    a, sx, sy = 0, float(x[0]), float(y[0])
    for j in range(1, len(x)):
        cnt = j - a
        if math.hypot(float(x[j]) - sx / cnt, float(y[j]) - sy / cnt) > radius_m:
            out.append((a, j - 1))
            a, sx, sy = j, 0.0, 0.0
        sx += float(x[j])
        sy += float(y[j])
    out.append((a, len(x) - 1))
    return out


def find_stops(
    t: FloatArray,
    lat: FloatArray,
    lon: FloatArray,
    speed_kmh: FloatArray,
    ignition: np.ndarray,
    keep: BoolArray | None = None,
    params: ReportParams = DEFAULT,
    min_s: float | None = None,
    still: BoolArray | None = None,
) -> list[Stop]:
    """Stops: runs of stationary kept fixes within stop_radius_m of their centre lasting ≥ min_s seconds.

    min_s defaults to stop_min_s; for on-board legs pass params.onboard_stop_min_s (0: one stationary fix will
    do), as pupils often board in well under a minute. still: per-fix standing still, e.g. clean.stationary_mask
    (which also judges fixes without a speed); default: reported speed ≤ stationary_kmh. Ignition off always is.

    A run with the ignition off at any fix is a stop whatever its length, so that ignition off always ends a trip.
    Runs do not join fixes more than max_link_s apart. Jitter stays inside the radius; a slow creep beyond it
    splits the run in two.
    """
    least = params.stop_min_s if min_s is None else min_s
    k = _kept(len(t), keep)
    if len(k) == 0:
        return []
    at_rest = stationary(speed_kmh[k], ignition[k], params, None if still is None else still[k])
    linked = np.diff(t[k]) <= params.max_link_s
    joined = at_rest[:-1] & at_rest[1:] & linked
    starts = np.flatnonzero(at_rest & ~np.concatenate([[False], joined]))
    ends = np.flatnonzero(at_rest & ~np.concatenate([joined, [False]]))
    out: list[Stop] = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        run = k[a : b + 1]
        for ca, cb in _clusters(lat[run], lon[run], params.stop_radius_m):
            idx = run[ca : cb + 1]
            p, q = a + ca, a + cb  # positions among the kept fixes
            seen0, seen1 = float(t[idx[0]]), float(t[idx[-1]])
            before = float(t[k[p - 1]]) if p > 0 and seen0 - float(t[k[p - 1]]) <= params.gap_s else None
            after = float(t[k[q + 1]]) if q + 1 < len(k) and float(t[k[q + 1]]) - seen1 <= params.gap_s else None
            start = seen0 if before is None else (before + seen0) / 2
            end = seen1 if after is None else (seen1 + after) / 2
            off = bool(np.any(ignition[idx] == IGN_OFF))
            if end - start >= least or off:
                out.append(
                    Stop(
                        first=int(idx[0]),
                        last=int(idx[-1]),
                        start=start,
                        end=end,
                        lat=float(np.median(lat[idx])),
                        lon=float(np.median(lon[idx])),
                        n_fixes=len(idx),
                        ignition_off=off,
                        start_min=before,
                        start_max=seen0,
                        end_min=seen1,
                        end_max=after,
                    )
                )
    return out


def find_trips(
    t: FloatArray,
    speed_kmh: FloatArray,
    ignition: np.ndarray,
    stops: Sequence[Stop],
    keep: BoolArray | None = None,
    params: ReportParams = DEFAULT,
    still: BoolArray | None = None,
) -> list[Trip]:
    """Trips: the kept fixes between consecutive stops (and before the first, after the last), split at gaps
    longer than max_link_s seconds; a trip has at least two fixes. Short halts stay inside their trip.
    Pass the same keep, params and still as to find_stops.
    """
    k = _kept(len(t), keep)
    if len(k) < 2:
        return []
    pos = np.searchsorted(k, [s.first for s in stops] + [s.last for s in stops])
    firsts, lasts = pos[: len(stops)], pos[len(stops) :]
    # Stretches (positions among the kept fixes) and the stops at either end.
    bounds = [(0, None), *((int(p), i) for i, p in enumerate(lasts))]
    ends = [*((int(p), i) for i, p in enumerate(firsts)), (len(k) - 1, None)]
    at_rest = stationary(speed_kmh[k], ignition[k], params, None if still is None else still[k])
    dt = np.diff(t[k])
    out: list[Trip] = []
    for (a, s_from), (b, s_to) in zip(bounds, ends, strict=True):
        cuts = [a, *(np.flatnonzero(dt[a:b] > params.max_link_s) + a + 1).tolist(), b + 1]
        for n, (p, q) in enumerate(pairwise(cuts)):
            if q - p < 2:
                continue
            idx = k[p:q]
            moving = ~(at_rest[p : q - 1] & at_rest[p + 1 : q])
            speeds = speed_kmh[idx]
            out.append(
                Trip(
                    first=int(idx[0]),
                    last=int(idx[-1]),
                    start=float(t[idx[0]]),
                    end=float(t[idx[-1]]),
                    from_stop=s_from if n == 0 else None,
                    to_stop=s_to if q == b + 1 else None,
                    moving_s=float(dt[p : q - 1][moving].sum()),
                    max_kmh=float(np.nanmax(speeds)) if np.isfinite(speeds).any() else math.nan,
                    departed=stops[s_from].end if n == 0 and s_from is not None else None,
                    arrived=stops[s_to].start if q == b + 1 and s_to is not None else None,
                )
            )
    return out


@dataclass(frozen=True, slots=True)
class Classified:
    """A stop and the nearest authorized point (None if there are none) at distance_m metres from its centre."""

    stop: Stop
    point: Point | None
    distance_m: float
    authorized: bool  # within the radius of that point; otherwise an Art. 38 IX stop

    @property
    def kind(self) -> str | None:
        """The kind of the place if the stop is authorized, else None."""
        return self.point.kind if self.authorized and self.point else None


def classify(stops: Sequence[Stop], points: Sequence[Point], radius_m: float) -> list[Classified]:
    """Each stop with its nearest point; authorized when within radius_m metres (authorized_radius_m)."""
    if not points:
        return [Classified(s, None, math.inf, False) for s in stops]
    if not stops:
        return []
    d = np.asarray(
        distance_m(
            np.array([[s.lon] for s in stops]),
            np.array([[s.lat] for s in stops]),
            np.array([[p.lon for p in points]]),
            np.array([[p.lat for p in points]]),
        )
    ).reshape(len(stops), len(points))
    near = np.argmin(d, axis=1)
    out = []
    for i, s in enumerate(stops):
        dist = float(d[i, near[i]])
        out.append(Classified(s, points[int(near[i])], dist, dist <= radius_m))
    return out


@dataclass(frozen=True, slots=True)
class Leg:
    """Pupils on board (Art. 9 §1): 'to_school' or 'from_school', between two stops (indexes into the stops).

    to_school runs from the arrival at the first boarding stop to the arrival at the school; from_school from the
    departure from the school to the arrival at the last boarding stop before the garage (or at the garage). Each
    instant is the stop's estimate (the midpoint with the fix around it, module text), so neither leg reads one fix
    interval long: from the school's last stationary fix to the drop-off's first did, on average (issue 34).
    """

    kind: str
    from_stop: int
    to_stop: int
    start: float  # estimated: the stops' own estimates (the midpoints with the fixes around them, issue 34)
    end: float
    over: bool  # duration ≥ onboard_max_s: the law wants it "inferior a 2 h"
    # Bounds of start and end: the stops' (Stop.start_min...; None: no fix bounds that side within gap_s).
    start_min: float | None = None
    start_max: float | None = None
    end_min: float | None = None
    end_max: float | None = None

    @property
    def duration_s(self) -> float:
        """Seconds on board."""
        return self.end - self.start


def onboard_legs(stops: Sequence[Classified], trips: Sequence[Trip], max_s: float) -> tuple[list[Leg], list[Trip]]:
    """The on-board legs of each school visit and the trips with over_2h set (max_s = onboard_max_s, seconds).

    stops: classified stops found with min_s=onboard_stop_min_s (see find_stops), in time order; trips: any list
    (usually the trips between stop_min_s stops). Only authorized stops have a kind. Consecutive school stops with
    no boarding or garage stop between them are one visit (two schools, or one school seen as two stops):
    to_school ends at the last, from_school starts at the first. The boarding stops of a visit lie between the
    previous garage or school visit and the next one. A trip is over_2h when it overlaps an over leg or itself
    lasts max_s (Trip.estimated_s: from its estimated departure to its estimated arrival).
    """
    kinds = [c.kind for c in stops]
    visits: list[tuple[int, int]] = []
    for i, kind in enumerate(kinds):
        if kind != "school":
            continue
        if visits and all(kinds[j] not in ("boarding", "garage") for j in range(visits[-1][1] + 1, i)):
            visits[-1] = (visits[-1][0], i)
        else:
            visits.append((i, i))
    garages = [j for j, kind in enumerate(kinds) if kind == "garage"]
    legs: list[Leg] = []
    for v, (s0, s1) in enumerate(visits):
        lo = max([visits[v - 1][1] if v else -1, *(g for g in garages if g < s0)])
        hi = min([visits[v + 1][0] if v + 1 < len(visits) else len(kinds), *(g for g in garages if g > s1)])
        before = [j for j in range(lo + 1, s0) if kinds[j] == "boarding"]
        after = [j for j in range(s1 + 1, hi) if kinds[j] == "boarding"]
        if before:
            a, b = stops[before[0]].stop, stops[s1].stop
            legs.append(
                Leg("to_school", before[0], s1, a.start, b.start, b.start - a.start >= max_s,
                    a.start_min, a.start_max, b.start_min, b.start_max)
            )  # fmt: skip
        end = after[-1] if after else (hi if hi < len(kinds) and kinds[hi] == "garage" else None)
        if end is not None:
            a, b = stops[s0].stop, stops[end].stop
            legs.append(
                Leg("from_school", s0, end, a.end, b.start, b.start - a.end >= max_s,
                    a.end_min, a.end_max, b.start_min, b.start_max)
            )  # fmt: skip
    over = [(leg.start, leg.end) for leg in legs if leg.over]
    marked = [
        replace(trip, over_2h=trip.estimated_s >= max_s or any(trip.start < e and trip.end > s for s, e in over))
        for trip in trips
    ]
    return legs, marked
