"""The fine of a decided occurrence (pure, Decimal): UPFM by severity (Art. 36–39), doubled when a grave or
gravíssima one recurs within 12 months (Art. 38 and 39, sole paragraphs), in R$ by the UPFM value of its year
(kept in the registry, upfm.py; the setting `upfm_brl` only seeds it).

Recurrence (`is_recurrence`): the same contractor had an earlier occurrence of the same severity, decided with a
fine, that started within the 12 months before this one's start (local dates: 12 calendar months, 29 February
→ 28 February).
"""

from __future__ import annotations

import calendar
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal

from telemetria.occurrences.model import DOUBLES_ON_RECURRENCE, UPFM, Severity

CENT = Decimal("0.01")


class MissingUpfmValue(LookupError):
    """No UPFM value in R$ is kept for the year (the registry's upfm_values: Administração › Valor da UPFM)."""

    def __init__(self, year: int):
        super().__init__(
            f"Não há valor da UPFM cadastrado para {year}: um administrador deve informá-lo em Administração › "
            f"Valor da UPFM (valor de 1 UPFM em R$ para {year}) antes de aplicar a multa."
        )
        self.year = year


@dataclass(frozen=True, slots=True)
class Fine:
    upfm: Decimal
    brl: Decimal
    doubled: bool


def months_before(day: date, months: int) -> date:
    """The same day `months` calendar months earlier (the month's last day when it has no such day)."""
    total = day.year * 12 + day.month - 1 - months
    year, month = divmod(total, 12)
    month += 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def recurrence_window(start_local: datetime) -> tuple[date, date]:
    """[first, last) local days in which an earlier fine makes this one a recurrence: the 12 months before, up to
    and including its own day (an earlier start that same day recurs too; the query compares the starts)."""
    day = start_local.date()
    return months_before(day, 12), day + timedelta(days=1)


def is_recurrence(severity: Severity, earlier_fine: bool) -> bool:
    """Whether the fine doubles: the severity doubles on recurrence and an earlier decided fine exists."""
    return earlier_fine and severity in DOUBLES_ON_RECURRENCE


def fine(severity: Severity, year: int, upfm_brl: Mapping[int, Decimal], *, recurrence: bool) -> Fine:
    """UPFM of the severity (×2 on recurrence of a doubling severity) and its R$ value, rounded half-up to cents."""
    doubled = is_recurrence(severity, recurrence)
    upfm = Decimal(UPFM[severity]) * (2 if doubled else 1)
    if year not in upfm_brl:
        raise MissingUpfmValue(year)
    brl = (upfm * upfm_brl[year]).quantize(CENT, rounding=ROUND_HALF_UP)
    return Fine(upfm.quantize(CENT), brl, doubled)
