"""Our JSON API decoder and the time parser: pure, no database."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from telemetria.fix import DecodeError, Fix, Rejected
from telemetria.ingest.decode import BodyError, decode_fix, decode_items, parse_body
from telemetria.ingest.timeparse import parse_time

T = datetime(2026, 11, 30, 14, 0, tzinfo=UTC)
E = 1796047200  # T as epoch seconds


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("2026-11-30T10:00:00-04:00", T),
        ("2026-11-30T14:00:00Z", T),
        ("2026-11-30T14:00:00.250+00:00", T + timedelta(milliseconds=250)),
        (E, T),
        (E + 0.5, T + timedelta(milliseconds=500)),
        (E * 1000 + 123, T + timedelta(milliseconds=123)),
        (str(E), T),
    ],
)
def test_parse_time_forms(value: object, expected: datetime) -> None:
    assert parse_time(value) == expected
    assert parse_time(value).tzinfo is not None


def test_seconds_and_milliseconds_are_told_apart_by_magnitude() -> None:
    # 1e11 s would be the year 5138; 1e11 ms is 1973: every real fix is unambiguous.
    assert parse_time(99_999_999_999).year == 5138
    assert parse_time(100_000_000_000).year == 1973


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("2026-11-30T10:00:00", "no UTC offset"),
        ("", "empty"),
        ("nan", "not an RFC 3339"),
        (float("inf"), "finite"),
        (None, "required"),
        (True, "required"),
        ([1], "expected RFC 3339"),
        (-5, "out of range"),
        (1e20, "out of range"),
        (10**400, "out of range"),
        ("0001-01-01T00:00:00+05:00", "out of range"),
        ("9999-12-31T23:59:59-01:00", "out of range"),
    ],
)
def test_parse_time_rejections(value: object, words: str) -> None:
    with pytest.raises(DecodeError, match=words):
        parse_time(value)


def test_naive_text_is_utc_only_when_asked() -> None:
    assert parse_time("2026-11-30T14:00:00", naive_tz=UTC) == T


def test_body_shapes() -> None:
    one = orjson.dumps({"ts": 1, "lat": 1, "lon": 1})
    assert parse_body(one, 10) == ([{"ts": 1, "lat": 1, "lon": 1}], False)
    assert parse_body(b'{"fixes": []}', 10) == ([], True)
    assert parse_body(b"[{}, {}]", 10) == ([{}, {}], True)
    with pytest.raises(BodyError) as e:
        parse_body(b'{"fixes": [1, 2, 3]}', 2)
    assert e.value.status == 413


def test_decode_fix_fields_and_units() -> None:
    f = decode_fix(
        {
            "ts": "2026-11-30T14:00:00Z",
            "lat": -10.43,
            "lon": -62.47,
            "speed_kmh": 55,
            "heading_deg": -90,
            "satellites": 8.0,
            "ignition": False,
            "driver_id": 1234,
            "attributes": {"batt": 90},
            "rssi": -70,
        }
    )
    assert f == Fix(
        ts=T,
        lat=-10.43,
        lon=-62.47,
        speed_kmh=55.0,
        heading_deg=270.0,
        satellites=8,
        ignition=False,
        driver_id="1234",
        attributes={"rssi": -70, "batt": 90},
    )


def test_decode_items_keeps_positions() -> None:
    out = decode_items([{"ts": 1795960800, "lat": 1, "lon": 2}, {"lat": 1}, 7])
    assert isinstance(out[0], Fix)
    assert out[1] == Rejected(1, "lat/lon: required")
    assert isinstance(out[2], Rejected) and out[2].index == 2


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=20,
)
fix_like = st.fixed_dictionaries(
    {},
    optional={
        k: json_values
        for k in (
            "ts",
            "lat",
            "lon",
            "speed_kmh",
            "heading_deg",
            "satellites",
            "ignition",
            "driver_id",
            "attributes",
            "valid",
            "odometer_m",
        )
    },
)


@given(st.lists(fix_like | json_values, max_size=5))
def test_decoder_never_raises_on_any_json(items: list[object]) -> None:
    out = decode_items(items)
    assert len(out) == len(items)
    assert all(isinstance(x, Fix | Rejected) for x in out)


@given(st.binary(max_size=200))
def test_body_parser_only_raises_body_error(body: bytes) -> None:
    try:
        items, _ = parse_body(body, 100)
    except BodyError as e:
        assert e.status in (400, 413, 422)
    else:
        decode_items(items)
