"""A position report as every decoder produces it and every later step (ingest, reports, simulator) takes it.

The bottom floor of the package: it imports nothing of telemetria, so any package may import it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(slots=True)
class Fix:
    """One position report. `ts` is timezone-aware UTC; units are in the field names."""

    ts: datetime
    lat: float
    lon: float
    speed_kmh: float | None = None
    heading_deg: float | None = None
    altitude_m: float | None = None
    accuracy_m: float | None = None
    hdop: float | None = None
    satellites: int | None = None
    ignition: bool | None = None
    odometer_m: float | None = None
    driver_id: str | None = None
    valid: bool = True
    attributes: dict[str, Any] | None = None


@dataclass(slots=True, frozen=True)
class Rejected:
    """An item of a request that was not stored, with its position in the request and why."""

    index: int
    error: str

    def as_json(self) -> dict[str, Any]:
        return {"index": self.index, "error": self.error}


class DecodeError(ValueError):
    """A value that cannot be turned into a fix; the message names the field."""
