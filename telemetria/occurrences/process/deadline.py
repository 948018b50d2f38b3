"""The terms of the administrative process in business days of the municipality (pure).

Lei 3.588/2023 Art. 41 makes the process that of Lei 14.133/2021, whose terms are in business days ("dias úteis"):
15 for the defence before a fine (Art. 157), 15 for an appeal against a warning or a fine (Art. 166), 5 for the
decider to reconsider and 20 for the superior authority to decide (Art. 166, sole paragraph).

A business day is a weekday on which the Prefeitura's offices open: not a national holiday nor national ponto
facultativo (Carnaval, Corpus Christi: counting them would shorten the term), not a Rondônia state holiday
(4 January, 18 June), not a municipal holiday (kept by the Secretaria next to the school calendar:
`Calendar.municipal`) — contracts/holidays.py. The day of the intimação itself does not count (the term starts
the next business day) and the term ends at 23:59:59 local of its last day.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from functools import lru_cache

from telemetria.contracts.holidays import national_holidays, state_holidays
from telemetria.localtime import LOCAL_TZ

END_OF_DAY = time(23, 59, 59)
DEFENSE_DAYS = 15  # Lei 14.133/2021 Art. 157 (the default of the setting defense_days)
APPEAL_DAYS = 15  # Art. 166
RECONSIDER_DAYS = 5  # Art. 166, sole paragraph
SUPERIOR_DAYS = 20  # Art. 166, sole paragraph


@lru_cache(maxsize=64)
def _fixed(year: int) -> frozenset[date]:
    return frozenset(h.day for h in [*national_holidays(year), *state_holidays(year)])


@dataclass(frozen=True, slots=True)
class Calendar:
    """The municipality's days off beyond weekends: national and state ones are computed, `municipal` stored."""

    municipal: frozenset[date] = field(default_factory=frozenset)

    @classmethod
    def of(cls, days: Iterable[date]) -> Calendar:
        return cls(frozenset(days))

    def is_business_day(self, day: date) -> bool:
        return day.weekday() < 5 and day not in _fixed(day.year) and day not in self.municipal

    def add_business_days(self, day: date, n: int) -> date:
        """The n-th business day after `day` (n ≥ 1; n = 0: `day` itself)."""
        if n < 0:
            raise ValueError("n must be at least 0")
        while n:
            day += timedelta(days=1)
            if self.is_business_day(day):
                n -= 1
        return day

    def term_end(self, start: datetime, days: int) -> datetime:
        """23:59:59 local (America/Porto_Velho) of the `days`-th business day after `start`'s local day."""
        if start.tzinfo is None:
            raise ValueError("start must be aware")
        last = self.add_business_days(start.astimezone(LOCAL_TZ).date(), days)
        return datetime.combine(last, END_OF_DAY, LOCAL_TZ)


NATIONAL_AND_STATE = Calendar()


def is_business_day(day: date) -> bool:
    return NATIONAL_AND_STATE.is_business_day(day)


def add_business_days(day: date, n: int) -> date:
    return NATIONAL_AND_STATE.add_business_days(day, n)


def defense_due(notified_at: datetime, days: int, cal: Calendar = NATIONAL_AND_STATE) -> datetime:
    """The end of the defence term: `days` business days after the notification (Art. 157)."""
    return cal.term_end(notified_at, days)


def is_late(at: datetime, due: datetime) -> bool:
    """Whether an answer given at `at` is after the deadline (to the second: 23:59:59.4 is still on time)."""
    return at.replace(microsecond=0) > due
