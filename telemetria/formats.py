"""How numbers are written for people, the same in CSV files and on pages (static/js/formats.js mirrors this).

Rules (tests/browser/test_first_use.py checks that both sides write the same values alike):
- a fixed number of decimals per kind of figure (RULES), decimal comma, no thousands separator;
- rounding half away from zero on the number's exact value (2.5 → 3; 1.005, stored as 1.00499…, → 1,00),
  as JavaScript's toFixed does, not Python's half-to-even;
- `-0` is written `0`; a share (0..1) is written as a percentage; the unit goes in the column header
  ("Velocidade (km/h)", "Cobertura (%)"), or after the number in running text ("41,3 km/h", "100,0 %");
- no value: an empty CSV cell, "—" on a page.
"""

from __future__ import annotations

import math
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


def _tie(x: float, places: int) -> bool:
    scaled = abs(x) * 10**places
    return bool(scaled - math.floor(scaled) == 0.5)


def fmt(rule: str, value: Any) -> str:
    """`value` written by the rule of its kind; `share` is a fraction written as a percentage (0.5 → `50,0`)."""
    if value is None:
        return ""
    if rule == "share":
        return number(value * 100, RULES["pct"]) if finite(value) else ""
    return number(value, RULES[rule])
