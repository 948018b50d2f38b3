"""A contract's dates in a plausible range (contracts/store.py `_window`): pure, no database."""

from __future__ import annotations

from datetime import date

import pytest

from telemetria.contracts.store import _window
from telemetria.registry.errors import RegistryError


def test_ten_years_of_validity_is_the_most_a_contract_may_last() -> None:
    _window(date(2026, 2, 1), date(2036, 2, 1))  # exactly 10 years: Lei 14.133/2021, Art. 107
    with pytest.raises(RegistryError) as e:
        _window(date(2026, 2, 1), date(2036, 2, 2))
    assert e.value.field == "valid_to" and "01/02/2036" in str(e.value)


def test_a_leap_day_start_ends_ten_years_later_on_28_february() -> None:
    _window(date(2028, 2, 29), date(2038, 2, 28))
    with pytest.raises(RegistryError):
        _window(date(2028, 2, 29), date(2038, 3, 1))


def test_a_start_before_this_century_is_a_typo() -> None:
    _window(date(2000, 1, 1), date(2000, 12, 31))
    with pytest.raises(RegistryError) as e:
        _window(date(1999, 12, 31), date(2000, 12, 31))
    assert e.value.field == "valid_from"
