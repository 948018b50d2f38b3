"""Properties of the fix-time parser: any input gives an aware UTC time or a DecodeError naming the field.

The epoch rule: a number at or above 1e11 is milliseconds, below it seconds (1e11 s is the year 5138, 1e11 ms is
March 1973, so no real fix time is ambiguous). Leap seconds (second 60) are refused, not moved: see timeparse.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

from telemetria.fix import DecodeError
from telemetria.ingest.timeparse import MS_THRESHOLD, parse_time

MAX_S = 253_402_300_799  # 9999-12-31T23:59:59Z

offsets = st.integers(-23 * 60 - 59, 23 * 60 + 59).map(lambda m: timezone(timedelta(minutes=m)))
aware = st.datetimes(datetime(1, 1, 2), datetime(9999, 12, 30), timezones=offsets)
# Text near the RFC 3339 shape, mutated: the fast path and the slow path both see it.
rfc3339ish = st.from_regex(
    r"\A[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt ][0-9]{2}:[0-9]{2}(:[0-9]{2}([.,][0-9]{1,9})?)?([Zz]|[+-][0-9]{2}:?[0-9]{2})?\Z"
)
numbers = (
    st.integers()
    | st.integers(-(10**400), 10**400)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.integers(0, MAX_S * 1000 + 10_000)
)
anything = (
    st.text()
    | rfc3339ish
    | aware.map(datetime.isoformat)
    | numbers
    | numbers.map(str)
    | st.sampled_from(["NaN", "-Infinity", "inf", "1e400", "0x10", "1_000", " 12 ", "\u0661\u0662", "\x00", "\ud800"])
    | st.none()
    | st.booleans()
    | st.binary(max_size=30)
    | st.lists(st.integers(), max_size=3)
    | st.dictionaries(st.text(max_size=5), st.integers(), max_size=2)
)


ZONES = ("America/Porto_Velho", "America/Sao_Paulo", "Asia/Kolkata")
NAIVE_ZONES = st.sampled_from([None, UTC, *map(ZoneInfo, ZONES)])


@given(anything, NAIVE_ZONES)
def test_any_input_gives_an_aware_utc_time_or_a_decode_error(value: object, naive_tz: tzinfo | None) -> None:
    try:
        ts = parse_time(value, "ts", naive_tz=naive_tz)
    except DecodeError as e:
        assert str(e).startswith("ts: ")
    else:
        assert isinstance(ts, datetime)
        assert ts.tzinfo is UTC


@given(aware)
def test_rfc3339_text_round_trips_to_the_same_instant(dt: datetime) -> None:
    try:
        utc = dt.astimezone(UTC)
    except OverflowError:  # falls outside years 1..9999 once in UTC: refused, see the rejection tests
        return
    assert parse_time(dt.isoformat()) == utc
    assert parse_time(dt.isoformat().replace("+00:00", "Z")) == utc


@given(st.integers(0, MS_THRESHOLD - 1))
def test_epochs_below_1e11_are_seconds(value: int) -> None:
    expected = datetime.fromtimestamp(value, UTC)
    assert parse_time(value) == expected
    assert parse_time(float(value)) == expected
    assert parse_time(str(value)) == expected


@given(st.integers(MS_THRESHOLD, MAX_S * 1000))
def test_epochs_from_1e11_are_milliseconds(value: int) -> None:
    expected = datetime.fromtimestamp(value / 1000, UTC)
    assert parse_time(value) == expected
    assert parse_time(str(value)) == expected
    assert abs(parse_time(float(value)) - expected) <= timedelta(milliseconds=1)


@given(st.integers(MAX_S * 1000 + 1) | st.integers(max_value=-1) | st.floats(max_value=-1e-300, allow_infinity=False))
def test_epochs_outside_1970_to_9999_are_refused(value: float) -> None:
    with pytest.raises(DecodeError, match="out of range"):
        parse_time(value)


@given(
    st.dates(),
    st.sampled_from(["23:59", "00:00", "12:34"]),
    st.sampled_from(["", ".5", ".999999"]),
    st.sampled_from(["Z", "+00:00", "-04:00", ""]),
    st.sampled_from(["T", " "]),
)
def test_leap_seconds_are_refused_with_a_clear_message(day: object, hhmm: str, frac: str, tz: str, sep: str) -> None:
    text = f"{day}{sep}{hhmm}:60{frac}{tz}"
    with pytest.raises(DecodeError, match=r"leap second \(second 60\)"):
        parse_time(text, naive_tz=UTC)


def test_the_last_leap_second_is_refused_and_its_neighbours_are_not() -> None:
    with pytest.raises(DecodeError, match="ts: '2016-12-31T23:59:60Z' is a leap second"):
        parse_time("2016-12-31T23:59:60Z")
    assert parse_time("2016-12-31T23:59:59Z") + timedelta(seconds=1) == parse_time("2017-01-01T00:00:00Z")


@pytest.mark.parametrize("text", ["1_700_000_000", "\u0661\u0667\u0660", "\uff11\uff17\uff10", "0x10", "1e"])
def test_epoch_text_is_plain_ascii_decimal(text: str) -> None:
    with pytest.raises(DecodeError, match="not an RFC 3339 time or epoch number"):
        parse_time(text)


@given(st.from_regex(r"\A[+-]?[0-9]{1,12}(\.[0-9]{0,6})?\Z"))
def test_plain_decimal_text_reads_as_the_number_it_spells(text: str) -> None:
    try:
        expected = parse_time(float(text))
    except DecodeError:
        with pytest.raises(DecodeError):
            parse_time(text)
    else:
        assert parse_time(text) == expected
