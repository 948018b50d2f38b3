"""What really happened on a simulated run, sampled at 1 Hz, and facts derived from it (pure)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import cache

import numpy as np
import shapely
from pyproj import Transformer

from telemetria.sim.polyline import Polyline
from telemetria.sim.roads import Route


@cache
def _to_utm() -> Transformer:
    # UTM 20S covers Jaru (-62.47); metric geometry for deviation checks only.
    return Transformer.from_crs("EPSG:4326", "EPSG:32720", always_xy=True)


@dataclass(frozen=True, slots=True)
class Stop:
    """The vehicle stood still from t_start_s to t_end_s (seconds from the run's start), at dist_m along its path.

    kind: 'garage' (parked before/after the run), 'boarding', 'school', 'halt' (unplanned traffic halt),
    'turnaround' (end of a detour).
    """

    kind: str
    t_start_s: float
    t_end_s: float
    dist_m: float
    lat: float
    lon: float

    @property
    def duration_s(self) -> float:
        """Seconds stationary."""
        return self.t_end_s - self.t_start_s


@dataclass(frozen=True, slots=True)
class Episode:
    """A run of 1 Hz samples above a speed limit: first and last sample (s from start), top speed, metres driven."""

    t_start_s: float
    t_end_s: float
    max_kmh: float
    dist_m: float

    @property
    def duration_s(self) -> float:
        """Seconds from the first to the last sample above the limit."""
        return self.t_end_s - self.t_start_s


@dataclass(frozen=True, slots=True)
class Detour:
    """An out-and-back excursion off the planned route along a crossing road, reach_m metres long each way."""

    t_start_s: float  # passing the crossing on the way out, seconds from start
    t_end_s: float  # passing it again on the way back
    dist_start_m: float  # distances along the driven path at those moments
    dist_end_m: float
    reach_m: float
    far_lat: float  # where the vehicle turned round
    far_lon: float


@dataclass(frozen=True, slots=True, eq=False)
class Truth:
    """1 Hz ground truth of one run: t_s seconds from `start`; dist_m is the true cumulative distance, metres."""

    start: datetime
    t_s: np.ndarray
    lat: np.ndarray
    lon: np.ndarray
    speed_kmh: np.ndarray
    heading_deg: np.ndarray
    dist_m: np.ndarray
    ignition: np.ndarray
    route: Route  # as planned
    path: Polyline  # as driven: detour included, corners rounded
    stops: tuple[Stop, ...]
    speeding: tuple[Episode, ...]  # above speed_limit_kmh
    speed_limit_kmh: float
    detour: Detour | None

    @property
    def duration_s(self) -> float:
        """Seconds from the first to the last sample."""
        return float(self.t_s[-1])

    @property
    def distance_m(self) -> float:
        """True distance driven in the run, metres."""
        return float(self.dist_m[-1])

    def time(self, t_s: float) -> datetime:
        """Aware UTC datetime of an offset in seconds from the start."""
        return self.start + timedelta(seconds=float(t_s))

    def offset_s(self, when: datetime) -> float:
        """Seconds from the start to `when`."""
        return (when - self.start).total_seconds()

    def distance_between(self, t0_s: float, t1_s: float) -> float:
        """True metres driven between two offsets from the start, seconds."""
        d = np.interp([t0_s, t1_s], self.t_s, self.dist_m)
        return float(d[1] - d[0])


def runs(mask: np.ndarray) -> list[tuple[int, int]]:
    """(first, last) indexes of each maximal run of True values."""
    edges = np.flatnonzero(np.diff(np.concatenate([[False], mask, [False]]).astype(np.int8)))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def speeding_episodes(
    t_s: np.ndarray, speed_kmh: np.ndarray, dist_m: np.ndarray, limit_kmh: float, min_s: float = 0.0
) -> tuple[Episode, ...]:
    """Maximal runs of samples strictly above limit_kmh lasting at least min_s seconds."""
    return tuple(
        Episode(float(t_s[a]), float(t_s[b]), float(speed_kmh[a : b + 1].max()), float(dist_m[b] - dist_m[a]))
        for a, b in runs(speed_kmh > limit_kmh)
        if t_s[b] - t_s[a] >= min_s
    )


def stationary_runs(t_s: np.ndarray, speed_kmh: np.ndarray, min_s: float = 0.0) -> list[tuple[float, float]]:
    """(first, last) offsets of runs of zero-speed samples lasting at least min_s seconds."""
    return [(float(t_s[a]), float(t_s[b])) for a, b in runs(speed_kmh <= 0.0) if t_s[b] - t_s[a] >= min_s]


def off_route_runs(truth: Truth, buffer_m: float = 100.0) -> list[tuple[float, float]]:
    """(first, last) offsets of runs of samples farther than buffer_m metres from the planned route."""
    rx, ry = _to_utm().transform(truth.route.line.lon, truth.route.line.lat)
    px, py = _to_utm().transform(truth.lon, truth.lat)
    dist = shapely.distance(shapely.linestrings(np.column_stack([rx, ry])), shapely.points(px, py))
    return [(float(truth.t_s[a]), float(truth.t_s[b])) for a, b in runs(dist > buffer_m)]
