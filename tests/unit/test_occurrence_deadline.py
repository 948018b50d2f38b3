"""The defence deadline: N business days after the notification, weekends and national holidays skipped."""

from __future__ import annotations

from datetime import UTC, date, datetime, time

import pytest

from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.process.deadline import Calendar, add_business_days, defense_due, is_business_day, is_late


def local(y: int, m: int, d: int, hh: int = 10, mm: int = 0) -> datetime:
    return datetime(y, m, d, hh, mm, tzinfo=LOCAL_TZ)


def test_five_business_days_over_a_weekend() -> None:
    # Wednesday 4 March 2026 → Thu 5, Fri 6, Mon 9, Tue 10, Wed 11
    due = defense_due(local(2026, 3, 4), 5)
    assert due == datetime(2026, 3, 11, 23, 59, 59, tzinfo=LOCAL_TZ)
    assert due.utcoffset() is not None and due.astimezone(UTC) == datetime(2026, 3, 12, 3, 59, 59, tzinfo=UTC)


def test_holidays_are_skipped() -> None:
    # Thursday 16 April 2026: Fri 17, Mon 20, (Tue 21 Tiradentes), Wed 22, Thu 23, Fri 24
    assert defense_due(local(2026, 4, 16), 5).date() == date(2026, 4, 24)
    # Carnaval 2026 (Mon 16 and Tue 17 February, pontos facultativos): from Friday 13 → Wed 18 is the first day
    assert add_business_days(date(2026, 2, 13), 1) == date(2026, 2, 18)
    # Christmas and New Year: from Wednesday 23 December 2026 → Thu 24, Mon 28, Tue 29, Wed 30, Thu 31
    assert defense_due(local(2026, 12, 23), 5).date() == date(2026, 12, 31)
    assert not is_business_day(date(2027, 1, 1)) and not is_business_day(date(2026, 3, 7))


def test_the_local_day_counts_not_the_utc_one() -> None:
    # 22:30 local on Friday 6 March is already Saturday in UTC: the term still starts on Monday 9.
    late_friday = local(2026, 3, 6, 22, 30)
    assert late_friday.astimezone(UTC).date() == date(2026, 3, 7)
    assert defense_due(late_friday.astimezone(UTC), 1).date() == date(2026, 3, 9)
    assert defense_due(late_friday, 1).timetz() == time(23, 59, 59, tzinfo=LOCAL_TZ)


def test_late_is_after_the_last_second() -> None:
    due = defense_due(local(2026, 3, 4), 5)
    assert not is_late(due, due)
    assert not is_late(due.replace(microsecond=900_000), due)
    assert is_late(local(2026, 3, 12, 0, 0), due)


def test_bad_input() -> None:
    with pytest.raises(ValueError):
        defense_due(datetime(2026, 3, 4, 10), 5)
    with pytest.raises(ValueError):
        add_business_days(date(2026, 3, 4), -1)


def test_fifteen_business_days_across_a_rondonia_holiday() -> None:
    """Lei 14.133/2021 Art. 157: 15 business days. Thursday 18 June 2026 (Dia do Evangélico, a Rondônia holiday)
    does not count, so a notification on Friday 12 June ends on Monday 6 July, not Friday 3 July."""
    assert not is_business_day(date(2026, 6, 18)) and not is_business_day(date(2027, 1, 4))
    assert defense_due(local(2026, 6, 12), 15).date() == date(2026, 7, 6)
    # A municipal holiday (kept by the Secretaria) lengthens it by one more business day.
    cal = Calendar.of([date(2026, 6, 24)])
    assert defense_due(local(2026, 6, 12), 15, cal).date() == date(2026, 7, 7)
    assert not cal.is_business_day(date(2026, 6, 24)) and is_business_day(date(2026, 6, 24))
