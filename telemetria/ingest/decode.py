"""Our own JSON API body → fixes. Pure: bytes in, `Fix | Rejected` per item out.

Two paths with one answer. `decode_body` first tries a typed decoder compiled by msgspec: the JSON
is parsed straight into fix structs, types, required fields and finite numbers checked in C, with no
dict per fix. It takes only what it can answer exactly as the general path would (an object with our
known fields, each of the type the general path accepts without a word); anything else (a wrong type,
a missing field, an unknown key, 1e999, a body that is not JSON) makes it give up on the whole body,
which then goes the general way: orjson (or the stdlib parser for NaN and 1e999) into dicts, and
`decode_fix` per item, which names what is wrong with each item and keeps the good ones of a batch.
So the fast path changes no answer, only how soon the common, well-formed body gets it
(tests/unit/test_native_decode.py compares the two on every edge case and on generated bodies).

Why msgspec: it parses and type-checks against a declared type in one C pass. `python -m bench.decode`
(best of 7, one run): on a 1,000-fix batch msgspec alone took 0.27 µs a fix, pydantic-core's TypeAdapter
1.13 µs (leaving a dict per fix still), the general path 3.6 µs, the typed path 1.5 µs: most of what
is left is building the `Fix` per item and parsing its time.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime
from typing import Annotated, Any

import msgspec
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


# A finite float: msgspec refuses 1e999 ("number out of range") by itself; ints wider than a float too.
_Finite = Annotated[float, msgspec.Meta(ge=-sys.float_info.max, le=sys.float_info.max)]
# orjson reads an integer beyond 64 bits as a float, msgspec as an int: such a value leaves the fast path.
_Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class _TypedFix(msgspec.Struct, forbid_unknown_fields=True, gc=False):
    """One fix as the fast path takes it: our fields only, each of the type `decode_fix` takes as is."""

    ts: str | _Int64 | float  # parsed by timeparse.parse_time, as on the general path
    lat: _Finite
    lon: _Finite
    speed_kmh: _Finite | None = None
    heading_deg: _Finite | None = None
    altitude_m: _Finite | None = None
    accuracy_m: _Finite | None = None
    hdop: _Finite | None = None
    satellites: _Int64 | None = None
    ignition: bool | None = None
    odometer_m: _Finite | None = None
    driver_id: str | _Int64 | None = None
    valid: bool | None = None
    attributes: dict[str, Any] | None = None


class _TypedBatch(msgspec.Struct, gc=False):
    """`{"fixes": [...]}`; other keys are ignored, as on the general path."""

    fixes: list[_TypedFix]


_ONE = msgspec.json.Decoder(_TypedFix)
_BATCH = msgspec.json.Decoder(_TypedBatch)
_ARRAY = msgspec.json.Decoder(list[_TypedFix])


def decode_body(body: bytes, max_items: int) -> tuple[list[Fix | Rejected], bool]:
    """A request body's items decoded, one result per item in order, and whether it was a batch.

    The same answer as `decode_items(*parse_body(body, max_items))`, faster for well-formed bodies;
    raises BodyError for a body unusable as a whole.
    """
    typed = _typed(body)
    if typed is None:
        items, batch = parse_body(body, max_items)
        return decode_items(items), batch
    fixes, batch = typed
    if len(fixes) > max_items:
        raise BodyError(413, f"fixes: {len(fixes)} items, at most {max_items} per request")
    return _from_typed_all(fixes), batch


_fromisoformat = datetime.fromisoformat


def _from_typed_all(typed: list[_TypedFix]) -> list[Fix | Rejected]:
    """`_from_typed` for every item, with the common item (UTC RFC 3339 text) built inline.

    One `Fix` per item and nothing else: the time parsed here (the same first step as
    `timeparse.parse_time`'s fast path, which answers a UTC time with exactly this datetime), the
    other fields taken from the struct once. Any other time (an offset, epoch numbers, text that
    is not RFC 3339) goes through `_from_typed`, so the answer never differs.
    """
    out: list[Fix | Rejected] = []
    append = out.append
    for i, t in enumerate(typed):
        ts = t.ts
        if type(ts) is not str or len(ts) < 20 or ts[4] != "-":
            append(_from_typed(i, t))
            continue
        try:
            parsed = _fromisoformat(ts)
        except ValueError:
            append(_from_typed(i, t))
            continue
        if parsed.tzinfo is not UTC:
            append(_from_typed(i, t))
            continue
        heading = t.heading_deg
        driver = t.driver_id
        append(Fix(
            parsed, t.lat, t.lon, t.speed_kmh, None if heading is None else heading % 360.0, t.altitude_m,
            t.accuracy_m, t.hdop, t.satellites, t.ignition, t.odometer_m,
            None if driver is None else _driver(driver), t.valid is not False, t.attributes or None,
        ))  # fmt: skip
    return out


def _typed(body: bytes) -> tuple[list[_TypedFix], bool] | None:
    """The body's fixes as typed structs and whether it was a batch, or None: not for the fast path."""
    # Each decoder gives up at the first token that does not fit, so trying the shapes in turn is cheap.
    # Deep nesting ends in RecursionError, which the general path answers too.
    try:
        return [_ONE.decode(body)], False
    except (msgspec.DecodeError, RecursionError):
        pass
    try:
        return _BATCH.decode(body).fixes, True
    except (msgspec.DecodeError, RecursionError):
        pass
    try:
        return _ARRAY.decode(body), True
    except (msgspec.DecodeError, RecursionError):
        return None


def _from_typed(index: int, t: _TypedFix) -> Fix | Rejected:
    """`decode_fix` for an item whose fields are already known to be of the right types and finite."""
    try:
        ts = parse_time(t.ts, "ts")
    except DecodeError as e:
        return Rejected(index, str(e))
    heading = t.heading_deg
    driver = t.driver_id
    return Fix(
        ts,
        t.lat,
        t.lon,
        t.speed_kmh,
        None if heading is None else heading % 360.0,
        t.altitude_m,
        t.accuracy_m,
        t.hdop,
        t.satellites,
        t.ignition,
        t.odometer_m,
        None if driver is None else _driver(driver),
        t.valid is not False,
        t.attributes or None,
    )


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
