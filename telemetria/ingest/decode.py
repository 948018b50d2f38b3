"""Our own JSON API body → fixes. Pure: bytes in, `Fix | Rejected` per item out."""

from __future__ import annotations

import json
from typing import Any

import orjson

from telemetria.fix import DecodeError, Fix, Rejected
from telemetria.ingest.timeparse import parse_time

_FLOAT_FIELDS = ("speed_kmh", "heading_deg", "altitude_m", "accuracy_m", "hdop", "odometer_m")
_BOOL_FIELDS = ("ignition", "valid")
KNOWN_FIELDS = frozenset(("ts", "lat", "lon", "satellites", "driver_id", "attributes", *_FLOAT_FIELDS, *_BOOL_FIELDS))


class BodyError(ValueError):
    """The request body as a whole is unusable; `status` is the HTTP answer (400, 413 or 422)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def parse_body(body: bytes, max_items: int) -> tuple[list[Any], bool]:
    """Raw items of a request and whether it was a batch: one object, `{"fixes": [...]}` or an array."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        doc = _lenient_json(body, e)
    if isinstance(doc, dict) and "fixes" in doc:
        items = doc["fixes"]
        if not isinstance(items, list):
            raise BodyError(422, f"fixes: expected an array, got {_kind(items)}")
        batch = True
    elif isinstance(doc, dict):
        items, batch = [doc], False
    elif isinstance(doc, list):
        items, batch = doc, True
    else:
        raise BodyError(422, f'body: expected a fix object or {{"fixes": [...]}}, got {_kind(doc)}')
    if len(items) > max_items:
        raise BodyError(413, f"fixes: {len(items)} items, at most {max_items} per request")
    return items, batch


def _lenient_json(body: bytes, error: Exception) -> Any:
    # orjson refuses the whole body for one 1e999 or NaN; the stdlib parser reads them as
    # non-finite floats, which then reject only their own item, so the good fixes still land.
    try:
        return json.loads(body)
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise BodyError(400, f"body is not valid JSON: {error}") from None


def decode_items(items: list[Any]) -> list[Fix | Rejected]:
    """One result per raw item, in order."""
    out: list[Fix | Rejected] = []
    for i, item in enumerate(items):
        try:
            out.append(decode_fix(item))
        except DecodeError as e:
            out.append(Rejected(i, str(e)))
    return out


def decode_fix(obj: Any) -> Fix:
    """One fix object of our API; unknown keys are kept in `attributes`, never silently lost.

    Types only: the limits on the free fields (driver id, attributes) are every path's, in `ingest.fields`.
    """
    # This runs for every fix of every request: exact type tests first, the general case after.
    if type(obj) is not dict:
        raise DecodeError(f"fix: expected an object, got {_kind(obj)}")
    lat = obj.get("lat")
    lon = obj.get("lon")
    if (lat is None and "lat" not in obj) or (lon is None and "lon" not in obj):
        raise DecodeError("lat/lon: required")
    ts = parse_time(obj.get("ts"), "ts")
    if len(obj) == 3:
        return Fix(ts, _number(lat, "lat"), _number(lon, "lon"))
    get = obj.get
    heading = _optional(get("heading_deg"), "heading_deg")
    fix = Fix(
        ts,
        _number(lat, "lat"),
        _number(lon, "lon"),
        _optional(get("speed_kmh"), "speed_kmh"),
        None if heading is None else heading % 360.0,
        _optional(get("altitude_m"), "altitude_m"),
        _optional(get("accuracy_m"), "accuracy_m"),
        _optional(get("hdop"), "hdop"),
        None,
        _flag(get("ignition"), "ignition"),
        _optional(get("odometer_m"), "odometer_m"),
        None,
        _flag(get("valid"), "valid") is not False,
    )
    sats = get("satellites")
    if sats is not None:
        if type(sats) is not int:
            sats = _number(sats, "satellites")
            if sats != int(sats):
                raise DecodeError("satellites: expected a whole number")
        fix.satellites = int(sats)
    driver = get("driver_id")
    if driver is not None:
        fix.driver_id = _driver(driver)
    if "attributes" in obj or not obj.keys() <= KNOWN_FIELDS:
        fix.attributes = _attributes(obj)
    return fix


def _optional(value: Any, name: str) -> float | None:
    return None if value is None else _number(value, name)


def _flag(value: Any, name: str) -> bool | None:
    if value is None or type(value) is bool:
        return value
    raise DecodeError(f"{name}: expected true or false, got {_kind(value)}")


def _number(value: Any, name: str) -> float:
    if type(value) is float:
        if value - value == 0.0:  # false for inf and NaN
            return value
        raise DecodeError(f"{name}: not a finite number")
    if type(value) is int:
        try:
            return float(value)
        except OverflowError:
            raise DecodeError(f"{name}: number out of range") from None
    raise DecodeError(f"{name}: expected a number, got {_kind(value)}")


def _driver(value: Any) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise DecodeError(f"driver_id: expected text, got {_kind(value)}")
    return value.strip() or None


def _attributes(obj: dict[str, Any]) -> dict[str, Any] | None:
    attrs = obj.get("attributes")
    if attrs is not None and not isinstance(attrs, dict):
        raise DecodeError(f"attributes: expected an object, got {_kind(attrs)}")
    extra = {k: v for k, v in obj.items() if k not in KNOWN_FIELDS}
    if not attrs and not extra:
        return None
    return {**extra, **(attrs or {})}


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "text", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number" if isinstance(value, int | float) else type(value).__name__
    )
