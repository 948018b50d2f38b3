"""Per vehicle and period, the additive facts of an analysis (metres, seconds, counts): what km and summary
add up, and what a rollup keeps per vehicle and local day (store/rollup.py) (pure)."""

from __future__ import annotations

from dataclasses import dataclass, fields
from datetime import UTC, datetime
from typing import Any

import numpy as np

from telemetria.reports.analysis import distance
from telemetria.reports.analysis.engine import Analysis


@dataclass(slots=True)
class Facts:
    """Additive figures of a vehicle over some days (metres, seconds, counts)."""

    fixes: int = 0
    kept: int = 0
    route_m: float = 0.0
    chord_m: float = 0.0
    gap_m: float = 0.0
    road_m: float = 0.0  # along the roads, off the routes (a road network in force)
    paved_m: float = 0.0  # of the km, on paved ways (route or road segments; chords are neither)
    unpaved_m: float = 0.0
    moving_s: float = 0.0
    max_kmh: float | None = None
    trips: int = 0
    stops: int = 0
    unauthorized_stops: int = 0
    speeding: int = 0
    deviations: int = 0
    odometer_m: float | None = None
    first_ts: datetime | None = None
    last_ts: datetime | None = None

    @property
    def km(self) -> float:
        return (self.route_m + self.road_m + self.chord_m) / 1000.0

    def add(self, other: Facts) -> None:
        """Fold `other` (a later or earlier period) into these figures."""
        for f in _SUMS:
            setattr(self, f, getattr(self, f) + getattr(other, f))
        self.max_kmh = _opt(max, self.max_kmh, other.max_kmh)
        self.odometer_m = _opt(lambda a, b: a + b, self.odometer_m, other.odometer_m)
        self.first_ts = _opt(min, self.first_ts, other.first_ts)
        self.last_ts = _opt(max, self.last_ts, other.last_ts)

    @classmethod
    def of_row(cls, row: Any) -> Facts:
        return cls(**{f.name: row[f.name] for f in fields(cls)})

    def values(self) -> list[Any]:
        return [getattr(self, f.name) for f in fields(self)]


_SUMS = ("fixes", "kept", "route_m", "chord_m", "gap_m", "road_m", "paved_m", "unpaved_m", "moving_s", "trips",
         "stops", "unauthorized_stops", "speeding", "deviations")  # fmt: skip


def _opt(fn: Any, a: Any, b: Any) -> Any:
    return b if a is None else a if b is None else fn(a, b)


def facts(a: Analysis) -> Facts:
    """The additive figures an analysis owns: its segments, and the events starting in its window."""
    own = a.own
    by = a.seg.by_method_m(own)
    t = a.track.t[own]
    return Facts(
        fixes=int(own.sum()),
        kept=int((own & a.keep).sum()),
        route_m=by["route"],
        chord_m=by["chord"],
        gap_m=a.seg.gap_m(own),
        road_m=by["road"],
        paved_m=float(np.sum(a.seg.paved_m[own])),
        unpaved_m=float(np.sum(a.seg.unpaved_m[own])),
        moving_s=a.moving_s(own),
        max_kmh=a.max_kmh(own),
        trips=len(a.trips),
        stops=len(a.stops),
        unauthorized_stops=sum(not c.authorized for c in a.stops),
        speeding=len(a.speeding),
        deviations=len(a.deviations),
        odometer_m=distance.odometer_delta_m(a.track, a.start, a.end, a.keep),
        first_ts=datetime.fromtimestamp(float(t.min()), UTC) if len(t) else None,
        last_ts=datetime.fromtimestamp(float(np.max(t)), UTC) if len(t) else None,
    )
