"""Fixes → facts for one vehicle and one window: the single pipeline every report and rollup runs (pure).

Order: clean → distance per segment → distance from the routes → applicable limit → speeding →
deviations → stops → trips → on-board legs. Everything is computed over the window's track with
its context fixes, and the window owns the segments ending in it and the events starting in it, so
a day computed alone or inside a month, live or rolled up, gives the same figures.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from telemetria.geo.routeline import RouteLine
from telemetria.reports.analysis import distance, episodes, perfix, stops
from telemetria.reports.analysis.perfix import PerFix
from telemetria.reports.analysis.stops import Classified, Leg, Stop, Trip
from telemetria.reports.analysis.track import BoolArray, FloatArray, IntArray, Track
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Point, Route, SpeedZone, Vehicle
from telemetria.roads.model import Roads


@dataclass(frozen=True, slots=True, eq=False)
class Analysis:
    """One vehicle over [start, end) (epoch s); index arrays refer to `track`, which includes context fixes."""

    vehicle: Vehicle
    start: float
    end: float
    track: Track
    own: BoolArray  # fixes inside the window: the segments it owns
    keep: BoolArray
    still: BoolArray  # standing still (clean.stationary_mask)
    speed_kmh: FloatArray  # reported, else implied by the segment ending at the fix (trackers without speed)
    seg: distance.Segments
    routes: Sequence[Route]
    lines: Sequence[RouteLine]
    offset_m: FloatArray  # from the nearest route of the day, NaN without routes
    near: IntArray  # index of that route in `routes`, -1 without routes
    limit_kmh: FloatArray
    stops: list[Classified]  # stops of at least stop_min_s, starting inside
    short_stops: list[Stop]  # every stop of at least onboard_stop_min_s, context included (legs, schedule)
    trips: list[Trip]
    legs: list[Leg]
    speeding: list[episodes.Speeding]
    deviations: list[episodes.Deviation]
    roads: Roads | None = None  # the road network the segments were measured on (None: none in force)

    def owns(self, t: float) -> bool:
        return self.start <= t < self.end

    def per_fix(self) -> PerFix:
        """Its per-fix values (perfix.py), to compute a longer track's from."""
        return PerFix(self.keep, self.still, self.seg, self.speed_kmh, self.offset_m, self.near, self.limit_kmh)

    def km_between(self, first: int, last: int) -> float:
        """Kilometres of the segments ending at fixes first+1..last."""
        return float(np.sum(self.seg.length_m[first + 1 : last + 1])) / 1000.0

    def moving_s(self, mask: BoolArray) -> float:
        """Seconds of the segments in `mask` along which the vehicle moved (jitter and standing excluded)."""
        moved = mask & (self.seg.length_m > 0)
        return float(np.nansum(self.seg.dt_s[moved]))

    def max_kmh(self, mask: BoolArray) -> float | None:
        """Top speed among the kept fixes in `mask`, km/h."""
        v = self.speed_kmh[mask & self.keep]
        v = v[np.isfinite(v)]
        return float(v.max()) if len(v) else None


def points_of(routes: Sequence[Route]) -> list[Point]:
    """The authorized points of the routes: their registered stops (boarding, school, garage)."""
    return [p for r in routes for p in r.points]


@lru_cache(maxsize=256)
def _line(route_id: int, lon: tuple[float, ...], lat: tuple[float, ...]) -> RouteLine:
    return RouteLine.of(lon, lat)


def line(route: Route) -> RouteLine:
    """The route's line for linear referencing, built once per geometry."""
    return _line(route.id, tuple(route.lon), tuple(route.lat))


def analyze(
    track: Track,
    vehicle: Vehicle,
    routes: Sequence[Route],
    lines: Sequence[RouteLine],
    zones: Sequence[SpeedZone],
    start: float,
    end: float,
    params: ReportParams,
    roads: Roads | None = None,
    per_fix: PerFix | None = None,
) -> Analysis:
    """Every derived fact of the vehicle in [start, end), from its fixes (with context) and the day's registry;
    `roads`: the road network in force that day, if any (distance.segments). `per_fix`: perfix.compute's values
    for this track and registry, already computed (the live detector's, perfix.compute_after)."""
    t = track.t
    if per_fix is None:
        per_fix = perfix.compute(track, vehicle, routes, lines, zones, params, roads)
    keep, still, seg, speed = per_fix.keep, per_fix.still, per_fix.seg, per_fix.speed_kmh
    offset, near, limit = per_fix.offset_m, per_fix.near, per_fix.limit_kmh
    tol = np.array([routes[i].tolerance_m if i >= 0 else np.nan for i in near.tolist()], dtype=float)
    speeding = episodes.speeding(t, speed, limit, keep, params)
    deviations = episodes.deviations(t, offset, tol, keep, params) if routes else []
    points = points_of(routes)
    found = stops.find_stops(t, track.lat, track.lon, track.speed_kmh, track.ignition, keep, params, still=still)
    trips = stops.find_trips(t, speed, track.ignition, found, keep, params, still=still)
    short = stops.find_stops(
        t, track.lat, track.lon, track.speed_kmh, track.ignition, keep, params, min_s=params.onboard_stop_min_s,
        still=still,
    )  # fmt: skip
    legs, trips = stops.onboard_legs(
        stops.classify(short, points, params.authorized_radius_m), trips, params.onboard_max_s
    )
    classified = stops.classify(found, points, params.authorized_radius_m)

    def inside(x: float) -> bool:
        return start <= x < end

    return Analysis(
        vehicle=vehicle,
        start=start,
        end=end,
        track=track,
        own=(t >= start) & (t < end),
        keep=keep,
        still=still,
        speed_kmh=speed,
        seg=seg,
        routes=routes,
        lines=lines,
        offset_m=offset,
        near=near,
        limit_kmh=limit,
        stops=[c for c in classified if inside(c.stop.start) and c.stop.duration_s >= params.stop_min_s],
        short_stops=short,
        trips=[x for x in trips if inside(x.start)],
        legs=[x for x in legs if inside(x.start)],
        speeding=[x for x in speeding if inside(x.start)],
        deviations=[x for x in deviations if inside(x.start)],
        roads=roads,
    )
