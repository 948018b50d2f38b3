"""One vehicle's fixes as arrays in fix-time order: the single input of every report algorithm (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

import numpy as np
import numpy.typing as npt

from telemetria.fix import Fix

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

# Ignition codes in Track.ignition.
IGN_UNKNOWN, IGN_OFF, IGN_ON = -1, 0, 1


@dataclass(frozen=True, slots=True, eq=False)
class Track:
    """Arrays of equal length, sorted by fix time `t` (strictly increasing: one fix per vehicle and instant).

    t and received are UTC epoch seconds; NaN marks a value the tracker did not send.
    """

    t: FloatArray
    lat: FloatArray
    lon: FloatArray
    speed_kmh: FloatArray
    heading_deg: FloatArray
    accuracy_m: FloatArray
    ignition: npt.NDArray[np.int8]
    odometer_m: FloatArray
    valid: BoolArray
    received: FloatArray

    def __len__(self) -> int:
        return len(self.t)

    def take(self, idx: npt.ArrayLike) -> Track:
        """The fixes at `idx` (an index array or a boolean mask), in their order."""
        return Track(*(getattr(self, f)[idx] for f in Track.__slots__))

    @classmethod
    def of(cls, fixes: Sequence[Fix], received: Sequence[datetime] | None = None) -> Track:
        """From decoded fixes (any order; the first of two at the same instant wins, like the database)."""
        seen: dict[float, int] = {}
        for i, f in enumerate(fixes):
            seen.setdefault(f.ts.timestamp(), i)
        order = [seen[k] for k in sorted(seen)]
        fs = [fixes[i] for i in order]
        rec = [received[i].timestamp() for i in order] if received is not None else [f.ts.timestamp() for f in fs]

        def floats(name: str) -> FloatArray:
            return np.array([np.nan if getattr(f, name) is None else getattr(f, name) for f in fs], dtype=float)

        ign = [IGN_UNKNOWN if f.ignition is None else (IGN_ON if f.ignition else IGN_OFF) for f in fs]
        return cls(
            t=np.array([f.ts.timestamp() for f in fs], dtype=float),
            lat=floats("lat"),
            lon=floats("lon"),
            speed_kmh=floats("speed_kmh"),
            heading_deg=floats("heading_deg"),
            accuracy_m=floats("accuracy_m"),
            ignition=np.array(ign, dtype=np.int8),
            odometer_m=floats("odometer_m"),
            valid=np.array([f.valid for f in fs], dtype=bool),
            received=np.array(rec, dtype=float),
        )


def utc(t: float) -> datetime:
    """Aware UTC datetime of epoch seconds."""
    return datetime.fromtimestamp(float(t), UTC)
