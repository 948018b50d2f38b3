"""OsmAnd (Traccar Client, many GPS devices) to `Fix`; pure, after Traccar's OsmAndProtocolDecoder."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from functools import partial
from typing import Any
from urllib.parse import parse_qsl

from telemetria.fix import DecodeError, Fix, Rejected
from telemetria.ingest.fields import MAX_DEVICE_ID
from telemetria.ingest.storable import MAX_EXACT_INT, text_problem
from telemetria.ingest.timeparse import parse_time

KNOT_KMH = 1.852  # query/form `speed` is in knots (Traccar Client: m/s × 1.943844)
MPS_KMH = 3.6  # JSON `coords.speed` is in m/s (transistorsoft background geolocation)
ID_KEYS = ("id", "deviceid", "device_id")
# Keys a flat (query, form or flat JSON) position turns into Fix fields; every other key is an attribute.
FLAT_KEYS = frozenset(
    {*ID_KEYS, "timestamp", "lat", "lon", "location", "speed", "bearing", "heading", "altitude", "accuracy"}
    | {"hdop", "sat", "satellites", "odometer", "ignition", "driverUniqueId", "valid", "batt", "battery"}
)

# Plain decimal text only: float() would also take "nan", "inf", "1_0" and non-ASCII digits.
_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
# Attribute text becomes a number only in JSON's grammar, so "007" or "+5" (ids, codes) stay text, and only
# when it can be stored exactly (storable.MAX_EXACT_INT): a wider one (an ICCID, say) stays text as sent.
_ATTR_INT = re.compile(r"-?(?:0|[1-9][0-9]{0,15})")
_ATTR_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+(?:[eE][+-]?[0-9]+)?|[eE][+-]?[0-9]+)")

Attr = Callable[[Any], Any]


@dataclass(slots=True)
class OsmAndRequest:
    """One OsmAnd request: the device's unique id and one item per position, in request order."""

    unique_id: str
    items: list[Fix | Rejected]


@dataclass(slots=True, frozen=True)
class _Clock:
    """The request's arrival time (for a position sent without one) and the zone of a time without offset."""

    now: datetime
    naive_tz: tzinfo


class _NoCoords(DecodeError):
    """A position without lat/lon: rejected alone, but fails the request when no position has them."""


def decode_osmand(
    method: str,
    query: Mapping[str, str],
    content_type: str | None,
    body: bytes,
    *,
    now: datetime,
    naive_tz: tzinfo = UTC,
) -> OsmAndRequest:
    """An OsmAnd request (query, form, JSON object or array) as fixes: km/h, UTC, `now` if no time sent.

    A `timestamp` without an offset is read in `naive_tz` (Traccar reads it in its server's zone).
    """
    clock = _Clock(now, naive_tz)
    del method  # like Traccar, the same fields are read whatever the method: trackers use both GET and POST
    multi = getattr(query, "multi_items", None)  # starlette's QueryParams.get() returns the *last* value
    params = _first_values(multi() if callable(multi) else query.items())
    text = body.decode("utf-8", errors="replace").lstrip("\ufeff \t\r\n")
    if text.startswith(("{", "[")):  # sniffed, not left to the header: JSON under any content type is JSON
        return _decode_json(body, params, clock)
    media = (content_type or "").split(";")[0].strip().lower()
    if text and (media == "application/json" or media.endswith("+json")) and "=" not in text:
        raise DecodeError("body is not valid JSON")  # a form sent with a JSON content type is still read
    # Traccar reads the body only when the URL has no parameters; merging keeps an id given in the URL
    # together with a fix sent as a form, and the URL wins a conflict as it does in Traccar.
    fields: dict[str, Any] = dict(params)
    for key, value in _first_values(parse_qsl(text, keep_blank_values=True)).items():
        fields.setdefault(key, value)
    unique_id = _required_id(_device_id(fields))
    return OsmAndRequest(unique_id, _collect([partial(_flat_fix, fields, clock, False, _text_attr)]))


def _decode_json(body: bytes, params: Mapping[str, str], clock: _Clock) -> OsmAndRequest:
    try:
        root = json.loads(body.decode("utf-8-sig"))
    except (ValueError, RecursionError):  # bad UTF-8, bad JSON, absurdly long ints, absurd nesting
        raise DecodeError("body is not valid JSON") from None
    if isinstance(root, list):  # a batch of flat objects, one position each (Traccar itself rejects these)
        found = (_device_id(item) for item in root if isinstance(item, dict))
        unique_id = _device_id(params) or next((i for i in found if i), None)
        batch = len(root) > 1
        builders = [partial(_array_fix, item, unique_id, clock, batch) for item in root]
    elif isinstance(root, dict):
        unique_id = _device_id(root) or _device_id(params)
        location = root.get("location")
        if isinstance(location, dict):  # Traccar Client (transistorsoft): one location per request
            builders = [partial(_location_fix, location, clock, False)]
        elif isinstance(location, list):  # the same client with batchSync: several locations per request
            builders = [partial(_location_fix, loc, clock, len(location) > 1) for loc in location]
        else:
            builders = [partial(_flat_fix, root, clock, False, _json_attr)]
    else:
        raise DecodeError(f"body is JSON {type(root).__name__}, expected an object or an array")
    return OsmAndRequest(_required_id(unique_id), _collect(builders))


def _required_id(unique_id: str | None) -> str:
    if unique_id is None:
        raise DecodeError("missing device id (id or deviceid)")
    if problem := text_problem(unique_id):  # (the id itself is not repeated: answers end up in device logs)
        raise DecodeError(f"device id: {problem}")
    if len(unique_id) > MAX_DEVICE_ID:
        raise DecodeError(f"device id: {len(unique_id)} characters, at most {MAX_DEVICE_ID}")
    return unique_id


def _collect(builders: Sequence[Callable[[], Fix]]) -> list[Fix | Rejected]:
    items: list[Fix | Rejected] = []
    without_coords = 0
    for index, build in enumerate(builders):
        try:
            items.append(build())
        except DecodeError as error:
            without_coords += isinstance(error, _NoCoords)
            items.append(Rejected(index, str(error)))
    if without_coords == len(items):  # nothing in the request is a position: the request itself is wrong
        first = items[0].error if items and isinstance(items[0], Rejected) else "missing lat/lon"
        raise DecodeError(first if len(items) == 1 else f"missing lat/lon in every position ({first})")
    return items


def _array_fix(item: Any, unique_id: str | None, clock: _Clock, batch: bool) -> Fix:
    if not isinstance(item, dict):
        raise _NoCoords(f"item: expected a JSON object, got {type(item).__name__}")
    own_id = _device_id(item)
    if own_id is not None and own_id != unique_id:  # never file one device's fix under another's id
        raise DecodeError(f"id: {own_id[:40]!r} is not the request's device {str(unique_id)[:40]!r}")
    if isinstance(item.get("location"), dict):
        return _location_fix(item["location"], clock, batch)
    return _flat_fix(item, clock, batch, _json_attr)


def _flat_fix(fields: Mapping[str, Any], clock: _Clock, batch: bool, attr: Attr) -> Fix:
    """One position from query/form fields or a flat JSON object: speed in knots, odometer/altitude in m."""
    lat, lon = _flat_coords(fields)
    fix = Fix(ts=_time(fields.get("timestamp"), clock, batch), lat=lat, lon=lon)
    speed = _opt_num(fields, "speed")
    fix.speed_kmh = speed * KNOT_KMH if speed is not None and speed >= 0 else None
    if fix.speed_kmh is not None and not math.isfinite(fix.speed_kmh):  # 9.8E307 knots overflows
        raise DecodeError(f"speed: {speed} knots is out of range")
    bearing = "bearing" if _present(fields.get("bearing")) else "heading"
    fix.heading_deg = _heading(_opt_num(fields, bearing))
    fix.altitude_m = _opt_num(fields, "altitude")
    accuracy = _opt_num(fields, "accuracy")
    fix.accuracy_m = accuracy if accuracy is not None and accuracy >= 0 else None
    fix.hdop = _opt_num(fields, "hdop")
    sat = "sat" if _present(fields.get("sat")) else "satellites"
    fix.satellites = _int(fields[sat], sat) if _present(fields.get(sat)) else None
    fix.odometer_m = _opt_num(fields, "odometer")
    fix.ignition = _bool(fields["ignition"], "ignition") if _present(fields.get("ignition")) else None
    fix.driver_id = _text(fields.get("driverUniqueId"), "driverUniqueId")
    if _present(valid := fields.get("valid")):  # Traccar: "true" (any case) or "1"; anything else is invalid
        fix.valid = valid if isinstance(valid, bool) else str(valid).strip().lower() in ("true", "1")
    attributes: dict[str, Any] = {}
    battery = next((fields[k] for k in ("batt", "battery") if _present(fields.get(k))), None)
    if battery is not None and (value := attr(battery)) is not None:
        attributes["batt"] = value  # percent, kept as sent: an attribute never costs the fix
    for key, raw in fields.items():
        if key not in FLAT_KEYS and (value := attr(raw)) is not None:
            attributes[key] = value
    fix.attributes = _storable(attributes)
    return fix


def _location_fix(location: Any, clock: _Clock, batch: bool) -> Fix:
    """One transistorsoft `location`: coords.speed in m/s (-1 unknown), heading -1 unknown, odometer in m."""
    if not isinstance(location, dict):
        raise _NoCoords(f"location: expected a JSON object, got {type(location).__name__}")
    coords = location.get("coords")
    if not isinstance(coords, dict) or not (_present(coords.get("latitude")) and _present(coords.get("longitude"))):
        raise _NoCoords("missing lat/lon (location.coords.latitude/longitude)")
    lat, lon = _num(coords["latitude"], "latitude"), _num(coords["longitude"], "longitude")
    fix = Fix(ts=_time(location.get("timestamp"), clock, batch), lat=lat, lon=lon)
    speed = _opt_num(coords, "speed")
    fix.speed_kmh = speed * MPS_KMH if speed is not None and speed >= 0 else None
    fix.heading_deg = _heading(_opt_num(coords, "heading"))
    accuracy = _opt_num(coords, "accuracy")
    fix.accuracy_m = accuracy if accuracy is not None and accuracy >= 0 else None
    fix.altitude_m = _opt_num(coords, "altitude")
    fix.odometer_m = _opt_num(location, "odometer")
    # Attribute names as Traccar stores them; these are extras, so a bad one is dropped, not the fix.
    attributes: dict[str, Any] = {}
    for key, name in (("event", "event"), ("is_moving", "motion"), ("mock", "mock"), ("alarm", "alarm")):
        if (value := _json_attr(location.get(key))) is not None:
            attributes[name] = value
    activity = location.get("activity")
    if isinstance(activity, dict) and isinstance(activity.get("type"), str):
        attributes["activity"] = activity["type"]
    battery = location.get("battery")
    if isinstance(battery, dict):
        level = _json_attr(battery.get("level"))
        if isinstance(level, int | float) and not isinstance(level, bool) and 0 <= level <= 1:
            attributes["batt"] = round(level * 100)  # 0..1, -1 unknown; Traccar's int() makes 0.57 → 56
        if isinstance(battery.get("is_charging"), bool):
            attributes["charge"] = battery["is_charging"]
    extras = location.get("extras")
    for key, raw in (extras if isinstance(extras, dict) else {}).items():
        if key == "alarm" and "alarm" in location:
            continue  # Traccar lets location.alarm win over extras.alarm
        if key == "ignition" and raw is not None:  # Traccar keeps extras as attributes of these names,
            fix.ignition = _bool(raw, "ignition")  # where ignition and the driver carry their meaning
        elif key == "driverUniqueId" and raw is not None:
            fix.driver_id = _text(raw, "driverUniqueId")
        elif (value := _json_attr(raw)) is not None:
            attributes[key] = value
    fix.attributes = _storable(attributes)
    return fix


def _flat_coords(fields: Mapping[str, Any]) -> tuple[float, float]:
    if _present(fields.get("lat")) and _present(fields.get("lon")):
        return _num(fields["lat"], "lat"), _num(fields["lon"], "lon")
    location = fields.get("location")
    if isinstance(location, str) and location.strip():
        parts = location.split(",")
        if len(parts) != 2:  # Traccar reads the first two parts, so "60,5,30,2" would become 60, 5
            raise DecodeError(f"location: {location[:40]!r} is not 'lat,lon'")
        return _num(parts[0], "location"), _num(parts[1], "location")
    raise _NoCoords("missing lat/lon")


def _time(value: Any, clock: _Clock, batch: bool) -> datetime:
    if not _present(value):
        if batch:  # one `now` for several fixes would collide on (vehicle, ts) and keep only one of them
            raise DecodeError("timestamp: required for each position of a batch")
        return clock.now  # as Traccar: the server's time
    try:
        return parse_time(value, "timestamp", naive_tz=clock.naive_tz)
    except DecodeError:
        raise
    except (OverflowError, ValueError):  # e.g. year 1 with a +05:00 offset, or an epoch wider than a float
        raise DecodeError(f"timestamp: {str(value)[:40]!r} is out of range") from None


def _num(value: Any, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise DecodeError(f"{field}: expected a number, got {type(value).__name__}")
    if isinstance(value, str) and not _NUMBER.fullmatch(value.strip()):
        raise DecodeError(f"{field}: {value[:40]!r} is not a number")
    try:
        number = float(value)
    except OverflowError:
        number = math.inf
    if not math.isfinite(number):
        raise DecodeError(f"{field}: {str(value)[:40]!r} is not a finite number")
    return number


def _opt_num(fields: Mapping[str, Any], key: str) -> float | None:
    value = fields.get(key)
    return _num(value, key) if _present(value) else None


def _int(value: Any, field: str) -> int:
    number = _num(value, field)
    if not number.is_integer():
        raise DecodeError(f"{field}: {str(value)[:40]!r} is not a whole number")
    return int(number)


def _bool(value: Any, field: str) -> bool:
    text = str(value).strip().lower() if isinstance(value, str | int | float) else None
    if isinstance(value, bool) or text in ("true", "false", "1", "0", "1.0", "0.0"):
        return value if isinstance(value, bool) else text in ("true", "1", "1.0")
    raise DecodeError(f"{field}: {str(value)[:40]!r} is not true/false/1/0")


def _text(value: Any, field: str) -> str | None:
    if not _present(value):
        return None
    if isinstance(value, str):
        return value.strip()  # its limits are every path's (ingest.fields), checked in validate
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    raise DecodeError(f"{field}: expected text, got {type(value).__name__}")


def _heading(value: float | None) -> float | None:
    """Degrees in [0, 360); -1 is how clients say "unknown"."""
    if value is None or value == -1:
        return None
    degrees = value % 360.0
    return 0.0 if degrees >= 360.0 else degrees  # -1e-20 % 360 rounds up to 360.0


def _text_attr(value: Any) -> Any:
    """A query/form value as Traccar stores it: true/false as bool, numbers as numbers, else the text."""
    text = value.strip() if isinstance(value, str) else ""
    if text in ("true", "false"):
        return text == "true"
    if _ATTR_INT.fullmatch(text) and abs(number := int(text)) <= MAX_EXACT_INT:
        return number
    if _ATTR_FLOAT.fullmatch(text) and abs(real := float(text)) <= MAX_EXACT_INT:  # (false for inf and NaN)
        return real
    return _json_attr(value)


def _storable(attributes: dict[str, Any]) -> dict[str, Any] | None:
    """The attributes jsonb can hold: a key or text with a NUL or a lone surrogate is dropped, not the fix."""
    kept = {k: v for k, v in attributes.items() if not text_problem(k) and not (isinstance(v, str) and text_problem(v))}
    return kept or None


def _json_attr(value: Any) -> Any:
    """A JSON scalar kept as sent; None for null, "" and nested values (Traccar skips those too).

    A number that cannot be stored exactly (NaN, infinite, beyond ±(2^53 − 1)) is kept as its text:
    an odd attribute value never costs an OsmAnd position (the bounds on size and count in `fields` do).
    """
    if isinstance(value, bool | str):
        return value if _present(value) else None
    if isinstance(value, int | float):
        return value if abs(value) <= MAX_EXACT_INT else str(value)  # (false for NaN)
    return None


def _device_id(fields: Mapping[str, Any]) -> str | None:
    for key in ID_KEYS:
        value = fields.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    return None


def _present(value: Any) -> bool:
    """Traccar skips empty values; JSON null is absent too."""
    return value is not None and not (isinstance(value, str) and not value.strip())


def _first_values(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    fields: dict[str, str] = {}
    for key, value in pairs:
        if key not in fields and isinstance(value, str) and value.strip():
            fields[key] = value
    return fields
