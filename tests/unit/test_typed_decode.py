"""The typed (msgspec) fast path of our JSON API decoder gives every body the general path's answer.

`decode_body` must answer exactly as `decode_items(*parse_body(...))` did before it existed: the same
fixes, the same rejections with the same texts (they reach the client as the 422's detail or the batch's
`rejected` list), the same BodyError status and message. Pure, no database.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from telemetria.fix import Fix, Rejected
from telemetria.ingest.decode import (
    BodyError,
    _from_typed,
    _from_typed_all,
    _typed,
    decode_body,
    decode_items,
    parse_body,
)
from telemetria.ingest.validate import Limits, validate

T = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
TS = "2026-11-30T14:00:00Z"
NOW = T + timedelta(minutes=1)


def general(body: bytes, max_items: int = 100) -> object:
    """The answer of the general path alone (what ingest answered before the fast path)."""
    try:
        items, batch = parse_body(body, max_items)
    except BodyError as e:
        return ("BodyError", e.status, str(e))
    return decode_items(items), batch


def answer(body: bytes, max_items: int = 100) -> object:
    try:
        return decode_body(body, max_items)
    except BodyError as e:
        return ("BodyError", e.status, str(e))


def settled(result: object) -> object:
    """What ingest makes of a decoded body: the fixes to store and the rejections, after validation.

    Used where the decoders may differ in a value no fix can be stored with: orjson reads an integer
    beyond 64 bits inside `attributes` as a float, msgspec as an int; both are refused, in the same words.
    """
    if isinstance(result, tuple) and len(result) == 2:
        return validate(result[0], NOW, Limits()), result[1]
    return result


def fix(**fields: object) -> dict[str, object]:
    return {"ts": TS, "lat": -10.43, "lon": -62.47, **fields}


GOOD = [
    fix(),
    fix(ts=1796047200),
    fix(ts=1796047200123),
    fix(ts=1796047200.5),
    fix(ts="1796047200"),
    fix(ts="2026-11-30T10:00:00-04:00"),
    fix(lat=-10, lon=-62),
    fix(speed_kmh=55, heading_deg=-90, altitude_m=120.5, accuracy_m=3, hdop=0.9, satellites=8, odometer_m=1000),
    fix(ignition=True, valid=False, driver_id="  ABC123  "),
    fix(driver_id=1234),
    fix(driver_id="   "),
    fix(attributes={"batt": 90, "nested": {"a": [1, 2.5, "x", None, True]}}),
    fix(attributes={}),
    fix(attributes=None),
    fix(speed_kmh=None, heading_deg=None, satellites=None, ignition=None, valid=None, driver_id=None),
    fix(heading_deg=720.5),
]


@pytest.mark.parametrize("item", GOOD)
def test_well_formed_fixes_take_the_fast_path_with_the_same_result(item: dict[str, object]) -> None:
    for body in (orjson.dumps(item), orjson.dumps({"fixes": [item, item]}), orjson.dumps([item])):
        assert _typed(body) is not None
        assert answer(body) == general(body)
        items, _ = decode_body(body, 100)
        assert len(items) in (1, 2) and all(isinstance(x, Fix) for x in items)


def test_the_fast_path_decodes_units_and_defaults() -> None:
    body = orjson.dumps(fix(speed_kmh=55, heading_deg=-90, satellites=8, driver_id=1234, attributes={"b": 1}))
    assert decode_body(body, 10) == (
        [
            Fix(
                T,
                -10.43,
                -62.47,
                speed_kmh=55.0,
                heading_deg=270.0,
                satellites=8,
                driver_id="1234",
                valid=True,
                attributes={"b": 1},
            )
        ],
        False,
    )


# Each of these is refused by the fast path (or rejects its item there) and must be answered word for word
# as before, with the status the HTTP edge turns it into.
EDGES: list[tuple[bytes, object]] = [
    # bad types
    (orjson.dumps(fix(lat="-10.4")), [Rejected(0, "lat: expected a number, got text")]),
    (orjson.dumps(fix(lon=True)), [Rejected(0, "lon: expected a number, got a boolean")]),
    (orjson.dumps(fix(speed_kmh=[1])), [Rejected(0, "speed_kmh: expected a number, got an array")]),
    (orjson.dumps(fix(satellites=8.5)), [Rejected(0, "satellites: expected a whole number")]),
    (orjson.dumps(fix(ignition="yes")), [Rejected(0, "ignition: expected true or false, got text")]),
    (orjson.dumps(fix(valid=1)), [Rejected(0, "valid: expected true or false, got a number")]),
    (orjson.dumps(fix(driver_id=True)), [Rejected(0, "driver_id: expected text, got a boolean")]),
    (orjson.dumps(fix(attributes=[1])), [Rejected(0, "attributes: expected an object, got an array")]),
    (orjson.dumps(fix(ts=True)), [Rejected(0, "ts: required, as RFC 3339 text or epoch seconds/milliseconds")]),
    (orjson.dumps(fix(ts=None)), [Rejected(0, "ts: required, as RFC 3339 text or epoch seconds/milliseconds")]),
    (b"7", ("BodyError", 422, 'body: expected a fix object or {"fixes": [...]}, got a number')),
    (b'{"fixes": null}', ("BodyError", 422, "fixes: expected an array, got null")),
    (b'{"fixes": {}}', ("BodyError", 422, "fixes: expected an array, got an object")),
    # missing fields
    (b'{"ts": 1796047200, "lat": 1}', [Rejected(0, "lat/lon: required")]),
    (b'{"lat": 1, "lon": 2}', [Rejected(0, "ts: required, as RFC 3339 text or epoch seconds/milliseconds")]),
    (b"{}", [Rejected(0, "lat/lon: required")]),
    # NaN and infinities (the stdlib parser reads them; they reject their own item only)
    (b'{"ts": 1796047200, "lat": NaN, "lon": 2}', [Rejected(0, "lat: not a finite number")]),
    (b'{"ts": 1796047200, "lat": 1, "lon": 2, "speed_kmh": Infinity}', [Rejected(0, "speed_kmh: not a finite number")]),
    (b'{"ts": 1796047200, "lat": 1, "lon": 2, "odometer_m": 1e999}', [Rejected(0, "odometer_m: not a finite number")]),
    (
        b'{"ts": 1796047200, "lat": 1, "lon": 2, "heading_deg": -1e999}',
        [Rejected(0, "heading_deg: not a finite number")],
    ),
    (b'{"ts": 1e999, "lat": 1, "lon": 2}', [Rejected(0, "ts: not a finite number")]),
    # huge numbers
    (b'{"ts": 1796047200, "lat": 1' + b"0" * 400 + b', "lon": 2}', [Rejected(0, "lat: number out of range")]),
    (b'{"ts": 1' + b"0" * 30 + b', "lat": 1, "lon": 2}', [Rejected(0, "ts: epoch value 1e+30 out of range")]),
    (b'{"ts": 1796047200, "lat": 1, "lon": 2, "satellites": 1' + b"0" * 30 + b"}", None),
    (b'{"ts": 1796047200, "lat": 1, "lon": 2, "attributes": {"n": 1' + b"0" * 30 + b"}}", "settled"),
    (b'{"ts": 1796047200, "lat": 1, "lon": 2, "driver_id": 1' + b"0" * 5000 + b"}", None),
    # wrong timestamps
    (orjson.dumps(fix(ts="2026-11-30T14:00:00")), [Rejected(0, "ts: time '2026-11-30T14:00:00' has no UTC offset")]),
    (orjson.dumps(fix(ts="yesterday")), [Rejected(0, "ts: 'yesterday' is not an RFC 3339 time or epoch number")]),
    (orjson.dumps(fix(ts="2026-12-31T23:59:60Z")), None),
    (orjson.dumps(fix(ts="")), [Rejected(0, "ts: empty")]),
    (orjson.dumps(fix(ts=-5)), [Rejected(0, "ts: epoch value -5 out of range")]),
    (orjson.dumps(fix(ts="0001-01-01T00:00:00+05:00")), None),
    (orjson.dumps(fix(ts="nan")), None),
    # unknown keys are kept in attributes, so they leave the fast path
    (orjson.dumps(fix(rssi=-70, attributes={"batt": 1})), None),
    # nested past any parser's depth
    (b'{"ts": 1796047200, "lat": 1, "lon": 2, "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", None),
    (b'{"fixes": [' + b"[" * 100_000 + b"]" * 100_000 + b"]}", None),
    (b"[" * 100_000 + b"]" * 100_000, None),
    # not JSON at all
    (b"{", None),
    (b"\xef\xbb\xbf{}", None),
    (b'{"ts": "\xff", "lat": 1, "lon": 2}', None),
    # too many items
    (orjson.dumps({"fixes": [fix()] * 3}), ("BodyError", 413, "fixes: 3 items, at most 2 per request")),
    (orjson.dumps([fix()] * 3), ("BodyError", 413, "fixes: 3 items, at most 2 per request")),
]


@pytest.mark.parametrize(("body", "expected"), EDGES)
def test_edge_cases_are_answered_as_before(body: bytes, expected: object) -> None:
    got = answer(body, max_items=2)
    if expected == "settled":
        assert settled(got) == settled(general(body, max_items=2))
        outcome: Any = settled(got)
        assert outcome[0][:2] == ([], [])
        assert [r.error[:27] for r in outcome[0][2]] == ["attributes: a number beyond"]
        return
    assert got == general(body, max_items=2)
    if isinstance(expected, list):
        assert isinstance(got, tuple) and got[0] == expected
    elif expected is not None:
        assert got == expected


def test_one_bad_item_keeps_the_good_ones_of_a_batch() -> None:
    body = orjson.dumps({"fixes": [fix(), fix(lat="x"), fix(ts="2026-11-30T14:00:00")]})
    items, batch = decode_body(body, 10)
    assert batch
    assert isinstance(items[0], Fix)
    assert items[1:] == [
        Rejected(1, "lat: expected a number, got text"),
        Rejected(2, "ts: time '2026-11-30T14:00:00' has no UTC offset"),
    ]
    assert (items, batch) == general(body)
    # A bad time alone does not push the batch off the fast path: only its own item is rejected.
    only_ts = orjson.dumps([fix(), fix(ts="soon")])
    assert _typed(only_ts) is not None
    assert answer(only_ts) == general(only_ts)


def test_batch_keys_besides_fixes_are_ignored_as_before() -> None:
    body = orjson.dumps({"fixes": [fix()], "device": "x", "ts": 5})
    assert _typed(body) is not None
    assert answer(body) == general(body)


def test_duplicate_keys_keep_the_last_as_before() -> None:
    body = b'{"ts": 1796047200, "lat": "x", "lon": 2, "lat": 3}'
    assert answer(body) == general(body)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
numbers = st.integers() | st.floats() | st.integers(min_value=-(10**30), max_value=10**30)
times = (
    st.datetimes(timezones=st.just(UTC)).map(lambda d: d.isoformat())
    | st.datetimes().map(lambda d: d.isoformat())
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=30)
)
fields = {
    "ts": times,
    "lat": numbers | json_values,
    "lon": numbers | json_values,
    "speed_kmh": numbers | json_values,
    "heading_deg": numbers,
    "altitude_m": numbers,
    "accuracy_m": numbers,
    "hdop": numbers,
    "odometer_m": numbers,
    "satellites": numbers | json_values,
    "ignition": st.booleans() | json_values,
    "valid": st.booleans() | st.none(),
    "driver_id": st.text(max_size=10) | st.integers() | json_values,
    "attributes": st.dictionaries(st.text(max_size=5), json_values, max_size=3) | json_values,
    "extra": json_values,
}
fix_like = st.fixed_dictionaries(
    {"ts": times, "lat": numbers, "lon": numbers}, optional={k: v for k, v in fields.items() if k not in "ts lat lon"}
) | st.fixed_dictionaries({}, optional=fields)


def dumps(value: object) -> bytes:
    # The stdlib writer: NaN and infinities come out as NaN/Infinity, which the general path reads.
    import json

    return json.dumps(value).encode()


@settings(max_examples=400, deadline=None)
@given(st.lists(fix_like, max_size=4), st.sampled_from(["one", "batch", "array"]))
def test_generated_bodies_are_answered_as_before(items: list[dict[str, object]], shape: str) -> None:
    doc: object = items[0] if shape == "one" and items else {"fixes": items} if shape == "batch" else items
    body = dumps(doc)
    got, before = answer(body, max_items=3), general(body, max_items=3)
    assert settled(got) == settled(before)
    if "attributes" not in body.decode() and "extra" not in body.decode():
        assert got == before


def test_time_is_parsed_by_the_same_parser() -> None:
    later = T + timedelta(milliseconds=250)
    body = orjson.dumps([fix(ts="2026-11-30T11:00:00.250-03:00")])
    [item], _ = decode_body(body, 10)
    assert isinstance(item, Fix) and item.ts == later and item.ts.tzinfo is UTC


@pytest.mark.parametrize(
    "ts",
    [
        TS,
        "2026-11-30T14:00:00+00:00",
        "2026-11-30T14:00:00-00:00",
        "2026-11-30T14:00:00.123456Z",
        "2026-11-30T14:00:00.1234567Z",
        "2026-11-30 14:00:00Z",
        "2026-11-30t14:00:00z",
        "2026-11-30T11:00:00-03:00",
        "2026-11-30T14:00:00",
        "2026-11-30T23:59:60Z",
        "2026-13-30T14:00:00Z",
        "0001-01-01T00:00:00+05:00",
        "1796047200",
        " 2026-11-30T14:00:00Z",
        "2026-11-30",
        1796047200,
        1796047200000,
        1796047200.5,
    ],
)
def test_the_inline_batch_builder_answers_as_the_per_item_one(ts: object) -> None:
    # _from_typed_all builds the common item (UTC RFC 3339 text) itself and hands every other to _from_typed.
    body = orjson.dumps({"fixes": [fix(ts=ts, heading_deg=370, driver_id=" 7 ", valid=None, attributes={})]})
    typed = _typed(body)
    assert typed is not None
    structs, _ = typed
    inline, per_item = _from_typed_all(structs), [_from_typed(i, t) for i, t in enumerate(structs)]
    assert inline == per_item
    # datetimes compare as instants: the zone must be the same too (UTC, as every stored fix time is).
    assert [f.ts.tzinfo for f in inline if isinstance(f, Fix)] == [f.ts.tzinfo for f in per_item if isinstance(f, Fix)]
    assert decode_body(body, 10)[0] == general(body)[0]  # type: ignore[index]
