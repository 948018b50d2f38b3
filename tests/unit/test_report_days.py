"""Report days are local days: America/Porto_Velho (UTC−4 all year, no daylight saving) unless `tz` says otherwise."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from telemetria.http import FieldError
from telemetria.period import last_included
from telemetria.reports.analysis.days import split
from telemetria.reports.request import window

PORTO_VELHO = ZoneInfo("America/Porto_Velho")
SAO_PAULO = ZoneInfo("America/Sao_Paulo")  # had daylight saving until 2019: some days had 23 h or 25 h


def _utc(text: str) -> datetime:
    return datetime.fromisoformat(text).astimezone(UTC)


def test_a_local_day_runs_from_04_00_utc_to_04_00_utc() -> None:
    w = window("2026-11-23", "2026-11-23", "America/Porto_Velho")
    assert (w.start, w.end) == (_utc("2026-11-23T04:00:00+00:00"), _utc("2026-11-24T04:00:00+00:00"))
    # Local midnight, not UTC midnight, separates the days a fix is counted in.
    [(day_a, _, end_a), (day_b, start_b, _)] = split(_utc("2026-11-23T03:00:00Z"), _utc("2026-11-23T05:00:00Z"))
    assert (str(day_a), str(day_b)) == ("2026-11-22", "2026-11-23")
    assert end_a == start_b == _utc("2026-11-23T04:00:00Z")


def test_every_porto_velho_day_of_a_year_is_24_hours() -> None:
    w = window("2026-01-01", "2026-12-31", "America/Porto_Velho")
    pieces = split(w.start, w.end)
    assert len(pieces) == 365 and all(e - s == timedelta(hours=24) for _, s, e in pieces)


@pytest.mark.parametrize(("day", "hours"), [("2018-11-04", 23), ("2019-02-16", 25), ("2018-11-05", 24)])
def test_a_day_of_a_zone_with_daylight_saving_keeps_its_real_length(day: str, hours: int) -> None:
    """São Paulo began DST at midnight on 2018-11-04 (that midnight never happened) and ended it on 2019-02-17."""
    w = window(day, day, "America/Sao_Paulo")
    assert w.end - w.start == timedelta(hours=hours)
    pieces = split(w.start, w.end, SAO_PAULO)
    assert sum((e - s for _, s, e in pieces), timedelta()) == timedelta(hours=hours)
    assert all(e > s for _, s, e in pieces)
    # Pieces are also cut at the service's midnights, since route assignments are per local day.
    assert {str(d) for d, _, _ in pieces} <= {str(datetime.fromisoformat(day).date() - timedelta(days=1)), day}


def test_offsets_in_from_and_to_are_honoured_and_a_backward_window_is_refused() -> None:
    # `to` names the last second (or minute) included: the window ends at the next one.
    w = window("2026-11-23T06:00:00-04:00", "2026-11-23T12:00:00Z", "America/Porto_Velho")
    assert (w.start, w.end) == (_utc("2026-11-23T10:00:00Z"), _utc("2026-11-23T12:00:01Z"))
    local = window("2026-11-23T06:00", "2026-11-23T07:59", "America/Porto_Velho")  # no offset: the report's zone
    assert (local.start, local.end) == (_utc("2026-11-23T10:00:00Z"), _utc("2026-11-23T12:00:00Z"))
    with pytest.raises(FieldError, match="to: must be after from"):
        window("2026-11-23T10:00:00Z", "2026-11-23T05:59:59-04:00", "America/Porto_Velho")
    one_second = window("2026-11-23T10:00:00Z", "2026-11-23T06:00:00-04:00", "America/Porto_Velho")
    assert one_second.end - one_second.start == timedelta(seconds=1)


@pytest.mark.parametrize(
    ("to", "end"),
    [
        ("2026-11-23", "2026-11-24T04:00:00Z"),  # a date: through its last instant
        ("2026-11-23T23:59", "2026-11-24T04:00:00Z"),  # a minute: through its 59th second
        ("2026-11-23T23", "2026-11-24T04:00:00Z"),  # an hour
        ("2026-11-23T23:59:30", "2026-11-24T03:59:31Z"),  # a second
        ("2026-11-23T23:59:30.250-04:00", "2026-11-24T03:59:30.250001Z"),  # a fraction: that very instant
        ("2026-11-24T03:59Z", "2026-11-24T04:00:00Z"),  # an offset changes the zone, not the rule
    ],
)
def test_to_includes_the_day_minute_or_second_it_names(to: str, end: str) -> None:
    w = window("2026-11-23", to, "America/Porto_Velho")
    assert w.end == _utc(end)


@pytest.mark.parametrize(
    ("start", "to", "shown"),
    [
        ("2026-11-23", "2026-11-23", ("2026-11-23", "2026-11-23")),
        ("2026-11-23", "2026-11-30", ("2026-11-23", "2026-11-30")),
        ("2026-11-23T00:00", "2026-11-23T23:59", ("2026-11-23", "2026-11-23")),  # whole days read as dates
        ("2026-11-23T08:00", "2026-11-23T11:59", ("2026-11-23T08:00", "2026-11-23T11:59")),
        ("2026-11-23T08:00:00", "2026-11-23T11:59:30", ("2026-11-23T08:00:00", "2026-11-23T11:59:30")),
    ],
)
def test_a_period_reads_back_as_it_was_asked_for(start: str, to: str, shown: tuple[str, str]) -> None:
    w = window(start, to, "America/Porto_Velho")
    assert last_included(w.start, w.end, PORTO_VELHO) == shown
