"""What the analysis computes per fix, and computing it again only for a track's changed end (pure).

Cleaning, standing still, the distance of each segment, the speed, the offset from the routes and the applicable
limit are each decided from a fix and a few neighbours (clean.py and distance.py say how few): for a track that
shares its first `changed` fixes with one already computed, the values of the fixes well before `changed` are the
same, and the rest can be computed over the track's end with enough context before it. The live detector
analyses a vehicle's whole day every round for the one or two fixes that arrived (occurrences/detection/trackcache.py
keeps the day's values), and most of an analysis' time is this part. Episodes, stops, trips and legs are
computed over the whole arrays as before (engine.analyze).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import numpy.typing as npt

from telemetria.geo.routeline import RouteLine
from telemetria.reports.analysis import clean, distance, limits
from telemetria.reports.analysis.track import BoolArray, FloatArray, IntArray, Track
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Route, SpeedZone, Vehicle
from telemetria.roads.match import REACH
from telemetria.roads.model import Roads

# Usable fixes before the first changed one whose values are computed again, and usable fixes of context before
# those: a keep decision looks at clean.SPIKE_REACH usable fixes on each side, a segment at the kept fix before it.
MARGIN = clean.SPIKE_REACH + 1


@dataclass(frozen=True, slots=True, eq=False)
class PerFix:
    """Per fix of a track: engine.analyze's values that depend on the fix and a few neighbours only."""

    keep: BoolArray
    still: BoolArray
    seg: distance.Segments
    speed_kmh: FloatArray
    offset_m: FloatArray
    near: IntArray
    limit_kmh: FloatArray

    def cut(self, start: int) -> PerFix:
        """The values of fixes start.. (a suffix)."""
        seg = distance.Segments(*(getattr(self.seg, f.name)[start:] for f in fields(distance.Segments)))
        return PerFix(self.keep[start:], self.still[start:], seg, self.speed_kmh[start:], self.offset_m[start:],
                      self.near[start:], self.limit_kmh[start:])  # fmt: skip


@dataclass(frozen=True, slots=True, eq=False)
class Prior:
    """PerFix values computed earlier for a track whose first `changed` fixes the new track shares, with the road
    network they were measured on (compared by identity: the same network as built then)."""

    values: PerFix
    changed: int
    roads: Roads | None


def join(head: PerFix, tail: PerFix, upto: int) -> PerFix:
    """head's values of fixes ..upto-1, then tail's."""

    def cat(a: npt.NDArray[Any], b: npt.NDArray[Any]) -> npt.NDArray[Any]:
        return np.concatenate([a[:upto], b])

    seg = distance.Segments(*(cat(getattr(head.seg, f.name), getattr(tail.seg, f.name))
                              for f in fields(distance.Segments)))  # fmt: skip
    return PerFix(
        cat(head.keep, tail.keep), cat(head.still, tail.still), seg, cat(head.speed_kmh, tail.speed_kmh),
        cat(head.offset_m, tail.offset_m), cat(head.near, tail.near), cat(head.limit_kmh, tail.limit_kmh),
    )  # fmt: skip


def compute(
    track: Track, vehicle: Vehicle, routes: Sequence[Route], lines: Sequence[RouteLine], zones: Sequence[SpeedZone],
    params: ReportParams, roads: Roads | None = None,
) -> PerFix:  # fmt: skip
    """The per-fix values of the whole track."""
    keep = clean.keep_mask(track, params)
    still = clean.stationary_mask(track, params, keep)
    tolerances = [r.tolerance_m for r in routes]
    seg = distance.segments(track, keep, lines, tolerances, params, still, roads)
    speed = effective_speed(track, seg)
    offset, near = offsets(track, lines)
    tol = np.array([tolerances[i] if i >= 0 else np.nan for i in near.tolist()], dtype=float)
    on_route = np.isfinite(offset) & (offset <= tol)
    route_limit = (
        np.where(on_route, [routes[i].limit_kmh if i >= 0 else np.nan for i in near.tolist()], np.nan)
        if routes
        else None
    )
    limit = limits.applicable_limit_kmh(
        track.lat, track.lon, zones, route_limit, vehicle.limit_kmh, params.default_limit_kmh
    )
    return PerFix(keep, still, seg, speed, offset, near, limit)


def compute_after(
    prior: PerFix, changed: int, track: Track, vehicle: Vehicle, routes: Sequence[Route],
    lines: Sequence[RouteLine], zones: Sequence[SpeedZone], params: ReportParams, roads: Roads | None = None,
) -> PerFix:  # fmt: skip
    """compute(track, ...), given `prior`: compute's values of a track whose first `changed` fixes are track's
    first `changed` fixes, with the same registry and parameters. Only the fixes from MARGIN usable fixes before
    `changed` are computed again, over the track from MARGIN usable fixes before the kept fix preceding them."""
    if changed >= len(track) == len(prior.keep):
        return prior  # the same track
    usable = np.flatnonzero(clean.usable_mask(track))
    first = int(np.searchsorted(usable, changed)) - MARGIN  # the first usable fix whose keep may change
    if first <= 0 or changed > len(prior.keep):
        return compute(track, vehicle, routes, lines, zones, params, roads)
    # A road segment is matched over match.REACH kept fixes on each side (roads/match.py): the values of the
    # REACH kept fixes before that one may change too, and their matching needs REACH + 1 more before them.
    kept = np.flatnonzero(prior.keep[: int(usable[first])])
    if len(kept) < 2 * REACH + 2:
        return compute(track, vehicle, routes, lines, zones, params, roads)
    b = int(kept[-REACH]) if REACH else int(usable[first])
    context = int(np.searchsorted(usable, kept[-2 * REACH - 2])) - MARGIN
    if context < 0:
        return compute(track, vehicle, routes, lines, zones, params, roads)
    a = int(usable[context])
    tail = compute(track.take(np.arange(a, len(track))), vehicle, routes, lines, zones, params, roads)
    return join(prior, tail.cut(b - a), b)


def effective_speed(track: Track, seg: distance.Segments) -> FloatArray:
    """Reported speed, km/h; where a tracker sent none, the mean speed of the segment ending at the fix.

    Gaps are left unknown: a mean over minutes says nothing about the speed at the fix.
    """
    with np.errstate(invalid="ignore", divide="ignore"):
        implied = np.where((seg.dt_s > 0) & ~seg.gap, seg.length_m / seg.dt_s * 3.6, np.nan)
    return np.where(np.isfinite(track.speed_kmh), track.speed_kmh, implied)


def offsets(track: Track, lines: Sequence[RouteLine]) -> tuple[FloatArray, IntArray]:
    """Each fix's distance from the nearest of the routes' lines, and which (NaN, -1: no line)."""
    if not lines or not len(track):
        return np.full(len(track), np.nan), np.full(len(track), -1, dtype=np.int64)
    off = np.vstack([line.offset_m(track.lon, track.lat) for line in lines])
    filled = np.where(np.isfinite(off), off, np.inf)
    near = np.argmin(filled, axis=0)
    best = filled[near, np.arange(len(track))]
    return np.where(np.isfinite(best), best, np.nan), np.where(np.isfinite(best), near, -1)
