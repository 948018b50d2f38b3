"""The payment rule of a contract: statuses by coverage, payable km and amounts, exact to the cent; no database."""

from __future__ import annotations

from decimal import Decimal as D

import orjson
import pytest

from telemetria.contracts.money import number, numbers, to_cents
from telemetria.contracts.rule import PaymentRule

RULE = PaymentRule()  # the defaults: made >= 95 %, partial >= 50 % paid in proportion


@pytest.mark.parametrize(
    ("coverage", "status"),
    [
        ("100", "made"),
        ("95", "made"),
        ("94.99", "partial"),
        ("50", "partial"),
        ("49.99", "not_made"),
        ("0", "not_made"),
    ],
)
def test_the_default_thresholds(coverage: str, status: str) -> None:
    assert RULE.status(D(coverage)) == status


def test_a_justified_run_is_justified_unless_it_was_made() -> None:
    assert RULE.status(D("30"), justified=True) == "justified"
    assert RULE.status(D("70"), justified=True) == "justified"
    assert RULE.status(D("96"), justified=True) == "made"


@pytest.mark.parametrize(
    ("coverage", "off_route", "km"),
    [
        ("97.5", "3.2", "42.700"),  # made: the declared km, whatever was driven; off-route km not paid
        ("80", "0", "34.160"),  # partial: 80 % of 42.7
        ("49.9", "0", "0"),
    ],
)
def test_payable_km_by_the_default_rule(coverage: str, off_route: str, km: str) -> None:
    c = D(coverage)
    assert RULE.payable_km(RULE.status(c), c, D("42.7"), D(off_route)) == D(km)


def test_a_justified_run_is_paid_only_if_the_rule_says_so_and_never_less_than_its_coverage_pays() -> None:
    assert RULE.payable_km("justified", D("20"), D("42.7"), D(0)) == 0
    assert RULE.payable_km("justified", D("80"), D("42.7"), D(0)) == D("34.160")
    generous = PaymentRule(justified_paid=True)
    assert generous.payable_km("justified", D("20"), D("42.7"), D(0)) == D("42.7")


def test_other_rules() -> None:
    flat = PaymentRule(D("90"), D("60"), partial_pay="declared_km", off_route_km_paid=True)
    assert flat.status(D("91")) == "made" and flat.status(D("59")) == "not_made"
    assert flat.payable_km("partial", D("70"), D("10"), D("1.5")) == D("11.5")
    nothing = PaymentRule(partial_pay="none")
    assert nothing.payable_km("partial", D("70"), D("10"), D(0)) == 0
    with pytest.raises(ValueError, match="partial_min_coverage_pct"):
        PaymentRule(D("50"), D("60"))


def test_amounts_are_exact_to_the_cent_and_totals_are_sums_of_lines() -> None:
    price = D("4.37")
    lines = [RULE.amount(RULE.payable_km("partial", D("77.7"), D("38.45"), D(0)), price) for _ in range(22)]
    # 38.45 × 0.777 = 29.87565 km × 4.37 = 130.5565905 → 130.56 a line; 22 lines = 2872.32
    assert lines[0] == D("130.56") and sum(lines) == D("2872.32")


@pytest.mark.parametrize(
    ("value", "cents"), [("0.125", "0.12"), ("0.135", "0.14"), ("0.1251", "0.13"), ("2.5", "2.50")]
)
def test_rounding_is_half_to_even_as_nbr_5891(value: str, cents: str) -> None:
    assert to_cents(D(value)) == D(cents)


def test_money_reaches_json_as_numbers_with_two_decimals() -> None:
    row = numbers({"price_per_km": D("4.5"), "n": 3, "pct": D("95"), "none": None}, {"price_per_km": 2, "pct": 2})
    assert orjson.dumps(row) == b'{"price_per_km":4.50,"n":3,"pct":95.00,"none":null}'
    assert orjson.dumps({"p": number(D("4.5"))}) == b'{"p":4.50}'
    assert orjson.dumps({"km": number(D("1.23456"), 3)}) == b'{"km":1.235}'
    assert orjson.loads(orjson.dumps({"p": number(D("1234567890.99"))}))["p"] == pytest.approx(1234567890.99)
    assert number(None) is None
