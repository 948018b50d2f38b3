"""How numbers are written for people, the same in CSV files and on pages (static/js/formats.js mirrors this).

Rules (tests/browser/test_first_use.py checks that both sides write the same values alike):
- a fixed number of decimals per kind of figure (RULES), decimal comma; no thousands separator in a CSV (a
  spreadsheet or a script reads the cell as a number, and the verifier reads a track export's cells as written),
  but on pages and in PDFs the thousands grouped with "." (`grouped`: "2.819,63 km", "14.441 posições", issue 36);
- rounding half away from zero on the number's exact value (2.5 → 3; 1.005, stored as 1.00499…, → 1,00),
  as JavaScript's toFixed does, not Python's half-to-even;
- `-0` is written `0`; a share (0..1) is written as a percentage; the unit goes in the column header
  ("Velocidade (km/h)", "Cobertura (%)"), or after the number in running text ("41,3 km/h", "100,0 %");
- no value: an empty CSV cell, "—" on a page.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

# Decimals per kind of figure.
RULES: dict[str, int] = {
    "km": 2,  # distances
    "km_step": 3,  # km between two consecutive positions (the track)
    "kmh": 1,  # speeds and limits
    "pct": 1,  # percentages; a share (0..1, rule "share") is multiplied by 100 first
    "min": 1,  # delays in minutes
    "m": 0,  # metres
    "deg": 0,  # headings
    "coord": 6,  # latitude and longitude, degrees (~0.1 m)
    "count": 0,
}


def finite(x: Any) -> bool:
    return isinstance(x, int) or math.isfinite(x)  # floats, numpy scalars, Decimal


def number(value: Any, places: int) -> str:
    """`value` with `places` decimals, decimal comma, half away from zero; "" when not a finite number."""
    if not finite(value):
        return ""
    s = f"{value:.{places}f}"
    if isinstance(value, Decimal) or _tie(float(value), places):
        # An exact half: Python's formatting would round it to even.
        exact = Decimal(value if isinstance(value, Decimal | int) else float(value))
        s = str(exact.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP))
    if s[0] == "-" and not s.strip("-0."):
        s = s[1:]  # -0.0 and values rounding to it
    return s.replace(".", ",")


def number_writer(places: int) -> Callable[[Any], str]:
    """`number(·, places)` made once for a column: the same text, about 3× faster for floats and ints.

    A float is written by `%` formatting (correctly rounded, so half away from zero wherever the exact value is
    not a tie) unless it is an exact half of the last place, which `number` writes. A float is such a tie exactly
    when `x · 2^(places+1)` is an odd integer (the product is exact: a power of two), one multiplication and one
    modulo. Ints below 2^53 are floats' own digits; everything else (Decimal, bool, float subclasses, huge ints,
    NaN, infinities and floats past 1e300, where `number` raises) goes through `number`.
    tests/unit/test_number_format.py checks the two agree.
    """
    spec, twice = f"%.{places}f", float(2 ** (places + 1))

    def write(value: Any) -> str:
        kind = type(value)
        if kind is float:
            if not -HUGE < value < HUGE or value * twice % 2.0 == 1.0:  # NaN, inf, huge, or an exact half
                return number(value, places)
            s = str(spec % value)
            if s[0] == "-" and not s.strip("-0."):
                s = s[1:]
            return s.replace(".", ",")
        if kind is int and -EXACT_INT < value < EXACT_INT:
            return str(spec % value).replace(".", ",")
        return number(value, places)

    return write


EXACT_INT = 2**53  # ints written as a float's digits without loss below this
HUGE = 1e300  # floats from here on go through `number` (its tie check overflows and raises, as before)


def _tie(x: float, places: int) -> bool:
    scaled = abs(x) * 10**places
    return bool(scaled - math.floor(scaled) == 0.5)


_PLAIN = re.compile(r"^(-?)(\d+)(,\d+)?$")


def grouped(text: str) -> str:
    """A number as `number` writes it with its thousands grouped by "." as people read them: one with decimals
    from 1.000 on (`2819,63` → `2.819,63`), a whole number from 10.000 on (`14441` → `14.441`), so a year (2026)
    or a small count reads as written; any other text unchanged. static/js/formats.js's grouped() is the same."""
    m = _PLAIN.match(text)
    if m is None:
        return text
    sign, whole, frac = m.group(1), m.group(2), m.group(3) or ""
    if len(whole) < (4 if frac else 5):
        return text
    return sign + f"{int(whole):,}".replace(",", ".") + frac


def fmt(rule: str, value: Any) -> str:
    """`value` written by the rule of its kind; `share` is a fraction written as a percentage (0.5 → `50,0`)."""
    if value is None:
        return ""
    if rule == "share":
        return number(value * 100, RULES["pct"]) if finite(value) else ""
    return number(value, RULES[rule])


def writer(rule: str) -> Callable[[Any], str]:
    """`fmt(rule, ·)` for non-None values, made once (number_writer); `share` multiplies by 100 first."""
    if rule == "share":
        pct = number_writer(RULES["pct"])
        return lambda v: pct(v * 100) if finite(v) else ""
    return number_writer(RULES[rule])
