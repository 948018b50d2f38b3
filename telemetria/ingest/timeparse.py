"""Fix timestamps as trackers send them: RFC 3339 / ISO 8601 text, epoch seconds or epoch milliseconds."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, tzinfo

from telemetria.fix import DecodeError

# Epoch values at or above this are milliseconds: 1e11 s is the year 5138, 1e11 ms is March 1973,
# so no real fix time is ambiguous between the two readings.
MS_THRESHOLD = 100_000_000_000
_MIN_EPOCH_S = 0.0
_MAX_EPOCH_S = 253_402_300_799.0  # 9999-12-31T23:59:59Z
# A leap second is refused, not moved onto 23:59:59 or the next 00:00:00: fixes are keyed by (vehicle, time),
# so a moved fix could be dropped as a duplicate of the one really taken in that second.
_LEAP_SECOND = re.compile(r"\d\d:\d\d:60(?!\d)")
# Epoch text is plain ASCII decimal: float() would also take "nan", "inf", "1_000" and non-ASCII digits.
_DECIMAL = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def from_epoch(value: float, field: str = "ts") -> datetime:
    """Epoch seconds or milliseconds (told apart by magnitude) to an aware UTC datetime."""
    try:
        seconds = value / 1000.0 if abs(value) >= MS_THRESHOLD else float(value)
    except OverflowError:  # an integer too wide for a float
        raise DecodeError(f"{field}: epoch value out of range") from None
    if isinstance(value, bool) or not math.isfinite(seconds):
        raise DecodeError(f"{field}: not a finite number")
    if not _MIN_EPOCH_S <= seconds <= _MAX_EPOCH_S:
        raise DecodeError(f"{field}: epoch value {value!r} out of range")
    return datetime.fromtimestamp(seconds, tz=UTC)


def from_text(value: str, field: str = "ts", *, naive_tz: tzinfo | None = None) -> datetime:
    """ISO 8601 / RFC 3339 text to an aware UTC datetime; a numeric string is read as epoch.

    A time without an offset is refused, unless `naive_tz` says which zone it is in.
    """
    text = value.strip()
    if not text:
        raise DecodeError(f"{field}: empty")
    if _looks_numeric(text):
        return from_epoch(float(text), field)
    try:
        parsed = datetime.fromisoformat(text.replace("z", "Z"))
    except ValueError:
        if _LEAP_SECOND.search(text):
            raise DecodeError(f"{field}: {value[:40]!r} is a leap second (second 60), which is not accepted") from None
        raise DecodeError(f"{field}: {value[:40]!r} is not an RFC 3339 time or epoch number") from None
    if parsed.tzinfo is None:
        if naive_tz is None:
            raise DecodeError(f"{field}: time {value[:40]!r} has no UTC offset")
        parsed = parsed.replace(tzinfo=naive_tz)
    try:
        return parsed.astimezone(UTC)
    except OverflowError:  # e.g. 0001-01-01T00:00:00+05:00 falls before year 1 in UTC
        raise DecodeError(f"{field}: {value[:40]!r} is out of range") from None


def parse_time(value: object, field: str = "ts", *, naive_tz: tzinfo | None = None) -> datetime:
    """Any accepted time representation to an aware UTC datetime, or DecodeError naming the field."""
    # Fast path for the common RFC 3339 text with an offset (the ingest hot path).
    if type(value) is str and len(value) >= 20 and value[4] == "-":
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            parsed = None
        if parsed is not None and parsed.tzinfo is not None:
            if parsed.tzinfo is UTC:
                return parsed
            try:
                return parsed.astimezone(UTC)
            except OverflowError:
                raise DecodeError(f"{field}: {value[:40]!r} is out of range") from None
    if isinstance(value, bool) or value is None:
        raise DecodeError(f"{field}: required, as RFC 3339 text or epoch seconds/milliseconds")
    if isinstance(value, int | float):
        return from_epoch(value, field)
    if isinstance(value, str):
        return from_text(value, field, naive_tz=naive_tz)
    raise DecodeError(f"{field}: expected RFC 3339 text or an epoch number, got {type(value).__name__}")


def _looks_numeric(text: str) -> bool:
    return _DECIMAL.fullmatch(text) is not None
