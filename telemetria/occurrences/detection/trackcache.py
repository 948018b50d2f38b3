"""What a detector process last read of each vehicle's local day, so that its next window reads only the fixes
stored since (pure: no database; chunkread.Shared.prefetch reads and uses it).

A vehicle reporting every 30 s is recomputed every round, and its window analyses the whole local day: reading
the day's fixes again each round was a quarter of a window's cost, and grew through the day. The ingest path marks
every stored fix in the vehicle's dirty_from (the least fix time stored since the detector last cleared the
mark), so the fixes kept from a read after the mark was read, cut at the new mark's dirty_from, plus those read
from dirty_from on, are exactly the fixes a read of the whole day gives now. That holds while no other process
cleared the mark in between (several service processes' detectors take turns by slice): every clear gives the row
a new random stamp (migrations/0025), and what is kept is used only under the stamp it was read with (or that
this process's own clear gave it).

It also keeps the analysis' per-fix values of the day (reports/analysis/perfix.py) with the basis of the registry
they were computed with, so that the next analysis computes them again only for the day's changed end.

Bounded by MAX_FIXES fixes in all (the setting detector_keep_fixes; about 170 bytes each with their values):
earlier dates go first; past that, new days are not kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

import numpy as np

from telemetria.reports.analysis.perfix import PerFix
from telemetria.reports.analysis.track import Track
from telemetria.roads.model import Roads

FIX_BYTES = 170  # a kept fix and its analysis' values, about (bench.soak checks a detector's growth against it)
MAX_FIXES = 8_000_000  # ~1.4 GB a detector process; the setting detector_keep_fixes sets it in a detector process


@dataclass(slots=True)
class _Kept:
    track: Track
    stamp: UUID
    per_fix: PerFix | None = None  # the analysis' per-fix values of `track` (perfix.py)
    basis: str | None = None  # of the registry and parameters they were computed with (Vehicle.basis)
    roads: Roads | None = None  # and the road network


@dataclass(frozen=True, slots=True)
class Computed:
    """What is kept of a day's analysis: its per-fix values, the basis and road network they were computed with."""

    per_fix: PerFix
    basis: str
    roads: Roads | None


class TrackCache:
    """(vehicle, start of its local day) → the day's Track as last read, under the stamp it is valid for."""

    def __init__(self, max_fixes: int = MAX_FIXES) -> None:
        self.max_fixes = max_fixes
        self._kept: dict[tuple[int, datetime], _Kept] = {}
        self._days: dict[int, set[datetime]] = {}
        self._fixes = 0

    def __len__(self) -> int:
        return len(self._kept)

    @property
    def fixes(self) -> int:
        return self._fixes

    def get(self, vehicle_id: int, d0: datetime, stamp: UUID | None) -> Track | None:
        """The day's Track as kept, if kept under `stamp` (None: the vehicle has no row: nothing is kept)."""
        key = (vehicle_id, d0)
        kept = self._kept.get(key)
        if kept is None or stamp is None or kept.stamp != stamp:
            return None
        return kept.track

    def computed(self, vehicle_id: int, d0: datetime, stamp: UUID | None) -> Computed | None:
        """The analysis' values kept with the day's Track, if kept under `stamp` and any were kept."""
        kept = self._kept.get((vehicle_id, d0))
        if kept is None or stamp is None or kept.stamp != stamp or kept.per_fix is None or kept.basis is None:
            return None
        return Computed(kept.per_fix, kept.basis, kept.roads)

    def put(self, vehicle_id: int, d0: datetime, track: Track, stamp: UUID) -> None:
        """Keeps the day's Track (its analysis' values go; `keep_computed` gives the new ones). Past the bound,
        the days of earlier dates go first; if that is not enough, this one is not kept (a round goes through
        the fleet in turn: evicting the least recently used would evict each day just before its next use)."""
        key = (vehicle_id, d0)
        self._remove(key)
        self._kept[key] = _Kept(track, stamp)
        self._days.setdefault(vehicle_id, set()).add(d0)
        self._fixes += len(track)
        if self._fixes > self.max_fixes:
            for old in [k for k in self._kept if k[1] < d0]:
                self._remove(old)
                if self._fixes <= self.max_fixes:
                    return
        if self._fixes > self.max_fixes:  # the rest are in use every round: dropping one to keep another gains nothing
            self._remove(key)

    def keep_computed(self, vehicle_id: int, d0: datetime, computed: Computed) -> None:
        """The analysis' values of the day's Track as kept (nothing when the day is not kept)."""
        kept = self._kept.get((vehicle_id, d0))
        if kept is not None and len(computed.per_fix.keep) == len(kept.track):
            kept.per_fix, kept.basis, kept.roads = computed.per_fix, computed.basis, computed.roads

    def restamp(self, vehicle_id: int, stamp: UUID) -> None:
        """This process cleared the vehicle's mark, which gave its row `stamp`: what it keeps of it stays valid."""
        for d0 in self._days.get(vehicle_id, ()):
            self._kept[(vehicle_id, d0)].stamp = stamp

    def drop(self, vehicle_id: int) -> None:
        for d0 in list(self._days.get(vehicle_id, ())):
            self._remove((vehicle_id, d0))

    def _remove(self, key: tuple[int, datetime]) -> None:
        kept = self._kept.pop(key, None)
        if kept is None:
            return
        self._fixes -= len(kept.track)
        days = self._days[key[0]]
        days.discard(key[1])
        if not days:
            del self._days[key[0]]


def extend(kept: Track, since: float, new: Track) -> Track:
    """The fixes of `kept` before `since` (epoch s) followed by `new` (all at or after it, sorted)."""
    head = kept.take(kept.t < since)
    return Track(*(np.concatenate([getattr(head, f), getattr(new, f)]) for f in Track.__slots__))
