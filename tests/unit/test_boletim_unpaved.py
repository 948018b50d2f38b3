"""The unpaved price (docs/contracts.md, "Unpaved price"): a run's unpaved share, the split of its payable km and
its amount at two prices, exact in Decimal; the boletim's lines and totals with and without a second price."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from decimal import Decimal as D

import orjson
import pytest

from telemetria.measurement import document, pavement
from telemetria.measurement.boletim import Line, RouteRef, Terms, lines, route_totals
from telemetria.measurement.sheet import COLUMNS
from tests.unit.test_boletim import CONTRACTOR, RULE, TERMS, TZ, VEHICLES, index, obs, run

TWO = Terms(D("4.37"), RULE, D("5.90"))


@pytest.mark.parametrize(
    ("unpaved_m", "stretch_m", "u"),
    [
        (0.0, 38450.0, "0.000000"),
        (38450.0, 38450.0, "1.000000"),
        (38451.0, 38450.0, "1.000000"),  # never above 1
        (-1.0, 38450.0, "0.000000"),  # never below 0
        (12000.0, 0.0, "0.000000"),  # an empty stretch has no share
        (1.0, 3.0, "0.333333"),
        (2.0, 3.0, "0.666667"),
        (0.0000025, 1.0, "0.000002"),  # 0.0000025: half to even, down
        (0.0000035, 1.0, "0.000004"),  # 0.0000035: half to even, up
    ],
)
def test_the_share_is_a_decimal_to_six_places_within_0_and_1(unpaved_m: float, stretch_m: float, u: str) -> None:
    got = pavement.share(unpaved_m, stretch_m)
    assert got == D(u) and got.as_tuple().exponent == -6


def test_the_split_rounds_the_unpaved_km_to_the_metre_half_even_and_the_paved_take_the_rest() -> None:
    assert pavement.split(D("38.450"), D("0.5")) == (D("19.225"), D("19.225"))
    assert pavement.split(D("0.005"), D("0.5")) == (D("0.003"), D("0.002"))  # 0.0025 → 0.002 (even)
    assert pavement.split(D("0.007"), D("0.5")) == (D("0.003"), D("0.004"))  # 0.0035 → 0.004 (even)
    assert pavement.split(D("38.450"), D("0")) == (D("38.450"), D("0.000"))
    assert pavement.split(D("38.450"), D("1")) == (D("0.000"), D("38.450"))
    paved, unpaved = pavement.split(D("29.876"), D("0.123457"))  # 3.688401... → 3.688
    assert (paved, unpaved) == (D("26.188"), D("3.688")) and paved + unpaved == D("29.876")


def test_the_amount_is_rounded_once_to_the_cent_half_even() -> None:
    # 26.188 × 4.37 + 3.688 × 5.90 = 114.44156 + 21.7592 = 136.20076 → 136.20
    assert pavement.amount(D("26.188"), D("3.688"), D("4.37"), D("5.90")) == D("136.20")
    # 0.001 × 2.50 + 0.001 × 2.50 = 0.005 → 0.00 (even), one rounding for the whole line
    assert pavement.amount(D("0.001"), D("0.001"), D("2.50"), D("2.50")) == D("0.00")
    assert pavement.amount(D("0.003"), D("0.003"), D("2.50"), D("2.50")) == D("0.02")  # 0.015 → 0.02 (even)


def _lines(terms: Terms, coverage: float, shares: dict[int, D] | None) -> list[Line]:
    r = run()
    return lines([r], index(obs(r, 1, coverage)), {}, lambda d: terms, VEHICLES, CONTRACTOR, (), shares)


def test_a_line_pays_its_unpaved_share_at_the_second_price() -> None:
    (ln,) = _lines(TWO, 0.777, {0: D("0.123457")})  # partial: 38.45 × 77.70 % = 29.87565 → 29.876
    assert ln.payable_km == D("29.876") and ln.unpaved_km == D("3.688")
    assert ln.price_per_km == D("4.37") and ln.price_per_km_unpaved == D("5.90")
    assert ln.amount == D("136.20")


def test_u_0_and_u_1_and_no_share_and_no_second_price() -> None:
    (zero,) = _lines(TWO, 1.0, {0: D(0)})
    (today,) = _lines(TERMS, 1.0, None)
    assert zero.unpaved_km == 0 and zero.amount == today.amount == D("168.03")  # 38.45 × 4.37 = 168.0265
    (all_,) = _lines(TWO, 1.0, {0: D(1)})
    assert all_.unpaved_km == D("38.450") and all_.amount == D("226.86")  # 38.45 × 5.90 = 226.855 → .86 (even)
    (no_network,) = _lines(TWO, 1.0, {})  # no network that day: every km at the main price
    assert no_network.unpaved_km == 0 and no_network.amount == today.amount
    assert no_network.price_per_km_unpaved == D("5.90")
    (no_price,) = _lines(TERMS, 1.0, {0: D("0.5")})  # a share but no second price: today's figures
    assert no_price == today and today.unpaved_km == 0 and today.price_per_km_unpaved is None
    (not_made,) = _lines(TWO, 0.2, {0: D("0.5")})
    assert not_made.payable_km == 0 and not_made.unpaved_km == 0 and not_made.amount == 0


def test_totals_sum_the_unpaved_km() -> None:
    a = _lines(TWO, 1.0, {0: D("0.25")})[0]
    b = replace(a, day=a.day.replace(day=3), unpaved_km=D("1.001"))
    (t,) = route_totals([RouteRef(10, "R10", D("38.450"))], [a, b])
    assert a.unpaved_km == D("9.612")  # 38.45 × 0.25 = 9.6125 → 9.612 (even)
    assert t.unpaved_km == D("10.613") and t.payable_km == D("76.900")
    doc = orjson.loads(orjson.dumps(document.sums_json([t])))
    assert doc["unpaved_km"] == 10.613


def test_a_frozen_line_keeps_its_unpaved_km_and_an_old_one_reads_with_none() -> None:
    (ln,) = _lines(TWO, 0.777, {0: D("0.123457")})
    content = document.canonical({"runs": [document.line_json(ln, 5, TZ)]})
    assert b'"unpaved_km":3.688' in content and b'"price_per_km_unpaved":5.90' in content
    (back,) = document.lines_of(content)
    assert back == ln
    old = orjson.loads(content)
    for row in old["runs"]:
        del row["unpaved_km"], row["price_per_km_unpaved"]
    (before,) = document.lines_of(orjson.dumps(old))
    assert before.unpaved_km == 0 and before.price_per_km_unpaved is None and before.amount == ln.amount


def test_the_sheet_has_the_unpaved_columns() -> None:
    headers = [c.header for c in COLUMNS]
    assert "Km não pavimentados (pagos)" in headers and "Preço por km não pavimentado (R$)" in headers
    assert headers.index("Km não pavimentados (pagos)") == headers.index("Km a pagar") + 1


def test_the_terms_json_has_the_second_price() -> None:
    got = orjson.loads(orjson.dumps(document.terms_json(date(2026, 3, 1), date(2026, 3, 31), TWO)))
    assert got["price_per_km_unpaved"] == 5.9 and got["price_per_km"] == 4.37
