"""Traccar's forwarded positions to `Fix`; pure.

Two shapes, both read from Traccar's source (org.traccar.forward, tests/payloads/traccar):
- `forward.type=json` (v5.5+; `forward.json=true` up to v5.4): POST `{"position": {...}, "device": {...}}`,
  Jackson-serialized: dates as ISO 8601 text, "+0000" up to Traccar 4.11 (Jackson ≤ 2.10), "+00:00" after;
- `forward.type=url` (the default): GET with the URL's `{uniqueId}`, `{fixTime}` (epoch ms), `{latitude}`, ...
  placeholders filled in, `{attributes}` as URL-encoded JSON.
Speed is in knots in both; the tracker is `device.uniqueId`; `position.id` is always 0 and is ignored.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson

from telemetria.fix import DecodeError, Fix
from telemetria.ingest.fields import DEFAULT_MAX_ATTRIBUTES_BYTES, MAX_ATTRIBUTES, MAX_DEVICE_ID
from telemetria.ingest.storable import MAX_EXACT_INT, text_problem
from telemetria.ingest.timeparse import parse_time

KNOT_KMH = 1.852  # Traccar keeps speed in knots (UnitsConverter.knotsFromKph), whatever the protocol sent
# Attributes that become a fix's own fields (Position.KEY_*): they carry meaning our reports use.
FIELD_ATTRIBUTES = frozenset({"ignition", "odometer", "driverUniqueId", "sat", "hdop"})
# Kept first when a position carries more attributes than a fix may hold (Teltonika sends io1..io250):
# the ones a servidor or an occurrence reads; the rest are kept in name order while they fit.
PRIORITY = (
    "alarm", "event", "totalDistance", "distance", "motion", "protocol", "power", "battery", "batteryLevel",
    "charge", "blocked", "rssi", "status", "input", "output", "fuel", "rpm", "obdSpeed", "obdOdometer", "hours",
)  # fmt: skip
# Plain decimal text only (URL mode): float() would also take "nan", "inf", "1_0" and non-ASCII digits.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


@dataclass(slots=True)
class Forwarded:
    """One forwarded position: the tracker's unique id (Traccar's device.uniqueId) and the fix."""

    unique_id: str
    fix: Fix


def decode_json(body: bytes) -> Forwarded:
    """A `forward.type=json` body as a fix; DecodeError names the field ("device.uniqueId: ...")."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise DecodeError(f"body: not JSON ({e})") from None
    if not isinstance(doc, dict):
        raise DecodeError('body: expected Traccar\'s {"position": {...}, "device": {...}}')
    position = doc.get("position")
    if not isinstance(position, dict):
        raise DecodeError("position: required, a JSON object (Traccar's forward.type=json body)")
    device = doc.get("device")
    unique_id = device.get("uniqueId") if isinstance(device, dict) else None
    fix = Fix(
        ts=_time(position.get("fixTime"), "position.fixTime"),
        lat=_coord(position.get("latitude"), "position.latitude"),
        lon=_coord(position.get("longitude"), "position.longitude"),
    )
    _common(fix, position, "position.")
    attributes = position.get("attributes")
    if attributes is not None and not isinstance(attributes, dict):
        raise DecodeError(f"position.attributes: expected a JSON object, got {type(attributes).__name__}")
    _attributes(fix, attributes or {}, position.get("protocol"))
    return Forwarded(_unique_id(unique_id), fix)


def decode_url(query: Mapping[str, str]) -> Forwarded:
    """A `forward.type=url` request as a fix: `fixTime` in epoch ms, `attributes` as JSON text."""
    fix = Fix(
        ts=_time(_present(query.get("fixTime")), "fixTime"),
        lat=_coord(_present(query.get("latitude")), "latitude"),
        lon=_coord(_present(query.get("longitude")), "longitude"),
    )
    _common(fix, {k: v for k, v in query.items() if _present(v) is not None}, "")
    attributes: Any = {}
    if (text := _present(query.get("attributes"))) is not None:
        try:
            attributes = orjson.loads(text)
        except orjson.JSONDecodeError:
            raise DecodeError("attributes: not JSON (the URL's {attributes} placeholder)") from None
        if not isinstance(attributes, dict):
            raise DecodeError("attributes: expected a JSON object")
    _attributes(fix, attributes, _present(query.get("protocol")))
    return Forwarded(_unique_id(query.get("uniqueId")), fix)


def _common(fix: Fix, p: Mapping[str, Any], prefix: str) -> None:
    speed = _opt_num(p.get("speed"), prefix + "speed")
    if speed is not None and speed >= 0:
        fix.speed_kmh = speed * KNOT_KMH
        if not math.isfinite(fix.speed_kmh):
            raise DecodeError(f"{prefix}speed: {speed} knots is out of range")
    course = _opt_num(p.get("course"), prefix + "course")
    fix.heading_deg = None if course is None else (0.0 if (d := course % 360.0) >= 360.0 else d)
    fix.altitude_m = _opt_num(p.get("altitude"), prefix + "altitude")
    accuracy = _opt_num(p.get("accuracy"), prefix + "accuracy")
    fix.accuracy_m = accuracy if accuracy is not None and accuracy > 0 else None  # 0.0: Traccar's "not known"
    valid = p.get("valid")
    if valid is not None:
        fix.valid = _bool(valid, prefix + "valid")


def _attributes(fix: Fix, attributes: Mapping[str, Any], protocol: Any) -> None:
    """Traccar's attributes: the ones with meaning onto fields, the rest kept as scalars (a bad one is dropped)."""
    if (ignition := attributes.get("ignition")) is not None:
        fix.ignition = _bool(ignition, "attributes.ignition")
    # The device's own odometer (metres), else the distance Traccar adds up from positions (metres).
    for key in ("odometer", "totalDistance"):
        odometer = _opt_num(attributes.get(key), f"attributes.{key}")
        if odometer is not None and odometer >= 0:
            fix.odometer_m = odometer
            break
    driver = attributes.get("driverUniqueId")
    if isinstance(driver, int) and not isinstance(driver, bool):
        driver = str(driver)
    if isinstance(driver, str) and driver.strip():
        fix.driver_id = driver.strip()  # the card; whose it is is decided at read time (fix_driver, 0004)
    sat = _opt_num(attributes.get("sat"), "attributes.sat")
    fix.satellites = int(sat) if sat is not None and sat.is_integer() and 0 <= sat <= 255 else None
    hdop = _opt_num(attributes.get("hdop"), "attributes.hdop")
    fix.hdop = hdop if hdop is not None and hdop >= 0 else None
    kept: dict[str, Any] = {}
    if isinstance(protocol, str) and protocol and not text_problem(protocol):
        kept["protocol"] = protocol[:40]
    rank = {k: i for i, k in enumerate(PRIORITY)}
    size = 2
    for key in sorted(attributes, key=lambda k: (rank.get(k, len(rank)), k)):
        value = _scalar(attributes[key])
        if key in FIELD_ATTRIBUTES or value is None or text_problem(key) or key in kept:
            continue
        item = len(orjson.dumps({key: value}))
        if len(kept) >= MAX_ATTRIBUTES or size + item > DEFAULT_MAX_ATTRIBUTES_BYTES:
            continue  # over the bounds a fix's attributes have (ingest.fields): dropped, never the fix
        kept[key] = value
        size += item
    fix.attributes = kept or None


def _scalar(value: Any) -> Any:
    """A JSON scalar as stored; None for null, "" and nested values; a number too wide as its text."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        return value if value.strip() and not text_problem(value) and len(value) <= 500 else None
    if isinstance(value, int | float):
        return value if abs(value) <= MAX_EXACT_INT else str(value)
    return None


def _unique_id(value: Any) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not value.strip():
        raise DecodeError("device.uniqueId: required (the tracker's unique id, as registered here)")
    unique_id = value.strip()
    if len(unique_id) > MAX_DEVICE_ID or text_problem(unique_id):
        raise DecodeError(f"device.uniqueId: not a tracker id (at most {MAX_DEVICE_ID} printable characters)")
    return unique_id


def _time(value: Any, field: str) -> datetime:
    if value is None:
        raise DecodeError(f"{field}: required")
    try:
        return parse_time(value, field)
    except DecodeError:
        raise
    except (OverflowError, ValueError):
        raise DecodeError(f"{field}: {str(value)[:40]!r} is out of range") from None


def _coord(value: Any, field: str) -> float:
    number = _opt_num(value, field)
    if number is None:
        raise DecodeError(f"{field}: required")
    return number  # the range is checked in validate, as for every path


def _opt_num(value: Any, field: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool):
        raise DecodeError(f"{field}: expected a number, got a boolean")
    if isinstance(value, str):
        if not _NUMBER.fullmatch(value.strip()):
            raise DecodeError(f"{field}: {value[:40]!r} is not a number")
        value = float(value)
    if not isinstance(value, int | float):
        raise DecodeError(f"{field}: expected a number, got {type(value).__name__}")
    number = float(value)
    if not math.isfinite(number):
        raise DecodeError(f"{field}: not a finite number")
    return number


def _bool(value: Any, field: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower() if isinstance(value, str | int) else None
    if text in ("true", "1"):
        return True
    if text in ("false", "0"):
        return False
    raise DecodeError(f"{field}: {str(value)[:40]!r} is not true/false")


def _present(value: str | None) -> str | None:
    """A URL placeholder's value, or None when Traccar had nothing for it ("", "null")."""
    return None if value is None or not value.strip() or value.strip() == "null" else value
