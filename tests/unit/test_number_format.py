"""pt-BR numbers (telemetria/formats.py): the rule's edge cases, and the CSV's fast writer (number_writer, the
line code csv.py makes) writing exactly what `number` writes."""

from __future__ import annotations

import math
import random
from decimal import Decimal
from typing import Any

import pytest

from telemetria import formats
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.output import csv

CASES: list[tuple[Any, int, str]] = [
    (0, 2, "0,00"), (0.0, 2, "0,00"), (-0.0, 2, "0,00"), (-0.001, 2, "0,00"), (-0.004, 0, "0"), (-0.4, 0, "0"),
    (-0.5, 0, "-1"), (-1.25, 1, "-1,3"), (-1234.5, 1, "-1234,5"), (-7, 2, "-7,00"),
    (0.5, 0, "1"), (1.5, 0, "2"), (2.5, 0, "3"), (0.125, 2, "0,13"), (0.375, 2, "0,38"), (-0.125, 2, "-0,13"),
    (1.005, 2, "1,00"), (2.675, 2, "2,67"), (0.045, 2, "0,04"),
    (Decimal("1.005"), 2, "1,01"), (Decimal("-2.5"), 0, "-3"),
    (1234567.891, 2, "1234567,89"), (1_000_000, 0, "1000000"), (12345.6789, 3, "12345,679"),
    (-9876543.21, 1, "-9876543,2"),
    (1e15, 2, "1000000000000000,00"), (2.0**51 + 0.5, 0, "2251799813685249"), (True, 0, "1"),
    (math.nan, 2, ""), (math.inf, 2, ""), (-math.inf, 1, ""),
]  # fmt: skip


@pytest.mark.parametrize(("value", "places", "text"), CASES)
def test_number_rule(value: Any, places: int, text: str) -> None:
    assert formats.number(value, places) == text
    assert formats.number_writer(places)(value) == text


def test_no_thousands_separator_and_a_decimal_comma() -> None:
    for v in (1234.5, 1234567.25, -98765.4321, 10**9):
        for places in range(4):
            out = formats.number_writer(places)(v)
            assert "." not in out and out.count(",") == (1 if places else 0), out


def test_none_is_an_empty_cell_and_a_share_is_a_percentage() -> None:
    assert formats.fmt("km", None) == "" and formats.fmt("share", None) == ""
    assert formats.writer("share")(0.5) == formats.fmt("share", 0.5) == "50,0"
    assert formats.writer("share")(-0.0005) == formats.fmt("share", -0.0005) == "-0,1"
    assert formats.writer("share")(math.nan) == ""
    line = csv.CsvFormatter([("km", "a", csv.KM), ("n", "b", csv.decimal(1)), ("t", "c", csv.TEXT)], LOCAL_TZ)
    assert line.line({"a": None, "b": None, "c": None}) == ";;\r\n"
    assert line.line({"a": -0.001, "b": 2.25, "c": "1.5"}) == "0,00;2,3;1.5\r\n"  # text keeps its point


def _values(rnd: random.Random) -> list[Any]:
    out: list[Any] = []
    for _ in range(20_000):
        places = rnd.randrange(0, 8)
        tie = (rnd.randrange(-(10**9), 10**9) + 0.5) / 10**places
        out += [
            tie,
            math.nextafter(tie, math.inf),
            math.nextafter(tie, -math.inf),
            rnd.uniform(-1, 1) * 10 ** rnd.randrange(-9, 17),
        ]
        out.append(rnd.randrange(-(2**60), 2**60) / 2 ** rnd.randrange(0, 70))  # dyadic: exact halves of many places
    return [*out, 2.0**53, -(2.0**53) - 2, 2**53 + 1, -(2**53) - 1, 1e299, -1e299, 5e-324, -5e-324, 0.0, -0.0]


@pytest.mark.parametrize("places", range(8))
def test_fast_writer_and_line_agree_with_number(places: int) -> None:
    rnd = random.Random(places)
    write = formats.number_writer(places)
    kind = csv.decimal(places)
    fmt = csv.CsvFormatter([("x", "x", kind), ("b", "x", kind), ("t", "t", csv.TEXT)], LOCAL_TZ)
    dotless = csv.CsvFormatter([("x", "x", kind)], LOCAL_TZ)
    for v in _values(rnd):
        want = formats.number(v, places)
        assert write(v) == want, (v, places)
        assert fmt.line({"x": v, "t": "a.b"}) == f"{want};{want};a.b\r\n", (v, places)
        assert dotless.line({"x": v}) == f"{want}\r\n", (v, places)


def test_huge_floats_still_raise_as_before() -> None:
    with pytest.raises(OverflowError):
        formats.number(1e307, 2)
    with pytest.raises(OverflowError):
        formats.number_writer(2)(1e307)
