"""A run's unpaved share and its pay at a contract's two prices (pure; docs/contracts.md, "Unpaved price").

The share u of a run is the unpaved metres of the route line over the run's stretch [m_from, m_to], by the road
network in force that day (reports/analysis/roads.py `Profile.split`; pieces of the line with no way within
reach are neither, so they count at the main price), as a Decimal to 6 places (half to even) within 0..1. The
run's payable km are split once, to the metre: unpaved = payable × u, paved = payable − unpaved; the amount is
paved × price_per_km + unpaved × price_per_km_unpaved, rounded once to the cent (half to even).
"""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

from telemetria.contracts.money import METRE, to_cents

SHARE = Decimal("0.000001")
ZERO, ONE = Decimal(0), Decimal(1)


def share(unpaved_m: float, stretch_m: float) -> Decimal:
    """Unpaved metres over the stretch's metres, to 6 places (half to even), within 0..1 (0 for an empty stretch)."""
    if not stretch_m > 0:
        return ZERO.quantize(SHARE)
    value = Decimal(repr(float(unpaved_m))) / Decimal(repr(float(stretch_m)))
    return min(max(value, ZERO), ONE).quantize(SHARE, rounding=ROUND_HALF_EVEN)


def split(payable_km: Decimal, u: Decimal) -> tuple[Decimal, Decimal]:
    """(paved, unpaved) payable km: unpaved = payable × u to the metre (half to even), paved the rest."""
    unpaved = (payable_km * u).quantize(METRE, rounding=ROUND_HALF_EVEN)
    return payable_km - unpaved, unpaved


def amount(paved_km: Decimal, unpaved_km: Decimal, price_per_km: Decimal, price_per_km_unpaved: Decimal) -> Decimal:
    """R$ of one run line paid at two prices, rounded to the cent once."""
    return to_cents(paved_km * price_per_km + unpaved_km * price_per_km_unpaved)
