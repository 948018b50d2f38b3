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


# A rejection's reason code: a small, fixed set of labels (the metrics count rejections by it), where
# `error` is free text naming the offending value. Besides these, the code of a rejected field is its name.
TS = "ts"
TS_FUTURE = "ts_future"
TS_TOO_OLD = "ts_too_old"
NOT_INSTALLED = "not_installed"
TRACKER_INACTIVE = "tracker_inactive"
UNSTORABLE = "unstorable"
OTHER = "other"
FIELDS = frozenset(
    {"lat/lon", "speed_kmh", "speed", "heading_deg", "bearing", "heading", "altitude_m", "altitude"}
    | {"accuracy_m", "accuracy", "hdop", "satellites", "sat", "odometer_m", "odometer", "ignition", "valid"}
    | {"driver_id", "driverUniqueId", "attributes", "fix", "item", "id", "location"}
)
REASONS = frozenset({TS, TS_FUTURE, TS_TOO_OLD, NOT_INSTALLED, TRACKER_INACTIVE, UNSTORABLE, OTHER}) | FIELDS


def field_reason(error: str) -> str:
    """The code of a decoder's error, from the field it names ("field: what is wrong"; DecodeError), or OTHER."""
    field = error.partition(":")[0] if ":" in error else ""
    if field in ("ts", "timestamp"):
        return TS
    return field if field in FIELDS or field == UNSTORABLE else OTHER


@dataclass(slots=True, frozen=True)
class Rejected:
    """An item of a request that was not stored, with its position in the request and why.

    `error` is the text the client reads; `reason` is its code (one of REASONS). A rejection made
    from a decoder's message, which names its field, may leave `reason` out: it is the field's code.
    """

    index: int
    error: str
    reason: str = ""

    def __post_init__(self) -> None:
        if not self.reason:
            object.__setattr__(self, "reason", field_reason(self.error))

    def as_json(self) -> dict[str, Any]:
        return {"index": self.index, "error": self.error}


class DecodeError(ValueError):
    """A value that cannot be turned into a fix; the message names the field first: "field: what is wrong"."""
