"""Money and km as exact decimals, and as JSON numbers with a fixed number of places (never through float)."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import orjson

CENT = Decimal("0.01")
METRE = Decimal("0.001")


def to_cents(value: Decimal) -> Decimal:
    """Round to the cent once, half to even (ABNT NBR 5891, the Brazilian rule for dropping digits)."""
    return value.quantize(CENT, rounding=ROUND_HALF_EVEN)


def number(value: Decimal | None, places: int = 2) -> orjson.Fragment | None:
    """A JSON number written with exactly `places` decimals (12.50, not 12.5 nor 12.499999)."""
    if value is None:
        return None
    return orjson.Fragment(f"{value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN):f}".encode())


def numbers(row: dict[str, Any], places: dict[str, int]) -> dict[str, Any]:
    """The row with each Decimal field named in `places` written as a JSON number with that many decimals."""
    return {k: number(v, places[k]) if k in places and isinstance(v, Decimal) else v for k, v in row.items()}
