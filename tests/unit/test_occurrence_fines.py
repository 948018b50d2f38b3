"""Fines in UPFM and R$ (Art. 36–39): severity, doubling on recurrence, the year's value, rounding half-up."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

import pytest

from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.model import Severity
from telemetria.occurrences.process.fines import MissingUpfmValue, fine, months_before, recurrence_window
from telemetria.settings import Settings, parse_upfm_values

VALUES = {2025: Decimal("4.52"), 2026: Decimal("4.71")}


@pytest.mark.parametrize(
    ("severity", "upfm", "brl"),
    [
        (Severity.LEVE, "10.00", "47.10"),
        (Severity.MEDIA, "20.00", "94.20"),
        (Severity.GRAVE, "30.00", "141.30"),
        (Severity.GRAVISSIMA, "40.00", "188.40"),
    ],
)
def test_upfm_by_severity(severity: Severity, upfm: str, brl: str) -> None:
    f = fine(severity, 2026, VALUES, recurrence=False)
    assert (f.upfm, f.brl, f.doubled) == (Decimal(upfm), Decimal(brl), False)


def test_recurrence_doubles_only_grave_and_gravissima() -> None:
    once = fine(Severity.GRAVE, 2026, VALUES, recurrence=False)
    again = fine(Severity.GRAVE, 2026, VALUES, recurrence=True)
    assert (again.upfm, again.brl) == (2 * once.upfm, 2 * once.brl) and not once.doubled
    g = fine(Severity.GRAVE, 2026, VALUES, recurrence=True)
    assert (g.upfm, g.brl, g.doubled) == (Decimal("60.00"), Decimal("282.60"), True)
    gg = fine(Severity.GRAVISSIMA, 2025, VALUES, recurrence=True)
    assert (gg.upfm, gg.brl, gg.doubled) == (Decimal("80.00"), Decimal("361.60"), True)
    for s in (Severity.LEVE, Severity.MEDIA):  # Art. 36 and 37 have no doubling
        f = fine(s, 2026, VALUES, recurrence=True)
        assert not f.doubled and f == fine(s, 2026, VALUES, recurrence=False)


def test_rounding_is_half_up_to_the_cent() -> None:
    # 10 × 4.5645 = 45.645 exactly: half-up gives 45.65 (half-even would give 45.64)
    f = fine(Severity.LEVE, 2027, {2027: Decimal("4.5645")}, recurrence=False)
    assert f.brl == Decimal("45.65")
    assert fine(Severity.LEVE, 2027, {2027: Decimal("4.5644")}, recurrence=False).brl == Decimal("45.64")


def test_a_year_without_a_value_is_named() -> None:
    with pytest.raises(MissingUpfmValue) as e:
        fine(Severity.LEVE, 2024, VALUES, recurrence=False)
    assert e.value.year == 2024 and "2024" in str(e.value)


def test_the_setting_is_parsed_and_bad_values_are_named() -> None:
    assert parse_upfm_values("2025=4.52, 2026=4.71") == VALUES
    assert parse_upfm_values("") == {}
    for bad in ("2026", "2026=abc", "x=1", "2026=-1", "2026=1,2026=2"):
        with pytest.raises(ValueError):
            parse_upfm_values(bad)
    assert Settings(upfm_brl="2026=4.71").upfm_values == {2026: Decimal("4.71")}
    with pytest.raises(ValueError, match="upfm_brl"):
        Settings(upfm_brl="2026:4.71")


def test_twelve_months_before() -> None:
    assert months_before(date(2026, 3, 15), 12) == date(2025, 3, 15)
    assert months_before(date(2028, 2, 29), 12) == date(2027, 2, 28)
    assert months_before(date(2026, 1, 31), 1) == date(2025, 12, 31)
    assert months_before(date(2026, 3, 31), 1) == date(2026, 2, 28)
    start = datetime(2026, 3, 15, 7, 30, tzinfo=LOCAL_TZ)
    assert recurrence_window(start) == (date(2025, 3, 15), date(2026, 3, 16))  # its own day included
