"""The contractor's defence deadline (pure): N business days after the notification, ending 23:59:59 local.

A business day is a weekday that is no national holiday nor national ponto facultativo (Carnaval, Corpus Christi:
the Prefeitura's offices are closed, so counting them would shorten the defence) — contracts/holidays.py.
The day of the notification itself does not count (the term starts the next business day).
"""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from functools import lru_cache

from telemetria.contracts.holidays import national_holidays
from telemetria.localtime import LOCAL_TZ

END_OF_DAY = time(23, 59, 59)


@lru_cache(maxsize=64)
def _holidays(year: int) -> frozenset[date]:
    return frozenset(h.day for h in national_holidays(year))


def is_business_day(day: date) -> bool:
    return day.weekday() < 5 and day not in _holidays(day.year)


def add_business_days(day: date, n: int) -> date:
    """The n-th business day after `day` (n ≥ 1; n = 0: `day` itself)."""
    if n < 0:
        raise ValueError("n must be at least 0")
    while n:
        day += timedelta(days=1)
        if is_business_day(day):
            n -= 1
    return day


def defense_due(notified_at: datetime, days: int) -> datetime:
    """23:59:59 local (America/Porto_Velho) of the `days`-th business day after the notification's local day."""
    if notified_at.tzinfo is None:
        raise ValueError("notified_at must be aware")
    last = add_business_days(notified_at.astimezone(LOCAL_TZ).date(), days)
    return datetime.combine(last, END_OF_DAY, LOCAL_TZ)


def is_late(at: datetime, due: datetime) -> bool:
    """Whether an answer given at `at` is after the deadline (to the second: 23:59:59.4 is still on time)."""
    return at.replace(microsecond=0) > due
