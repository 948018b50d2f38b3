"""The payment rule of a contract: how a run's coverage becomes a status and the km and amount paid; pure.

Defaults (issue 17, shown on every contract): a run covering at least 95 % of its route is `made` and paid at
the route's declared km; from 50 % to under 95 % it is `partial` and paid in proportion to its coverage; under
50 % it is `not_made` and paid nothing. Off-route km are never paid, and a justified run is not paid, unless the
contract's rule says otherwise. Everything is Decimal; an amount is rounded to the cent once per run.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Literal

from telemetria.contracts.money import to_cents

Status = Literal["made", "partial", "not_made", "justified"]
PartialPay = Literal["proportional", "declared_km", "none"]


@dataclass(frozen=True, slots=True)
class PaymentRule:
    made_min_coverage_pct: Decimal = Decimal("95")
    partial_min_coverage_pct: Decimal = Decimal("50")
    partial_pay: PartialPay = "proportional"
    off_route_km_paid: bool = False
    justified_paid: bool = False

    def __post_init__(self) -> None:
        if not Decimal(0) <= self.partial_min_coverage_pct <= self.made_min_coverage_pct <= Decimal(100):
            raise ValueError("payment_rule: need 0 <= partial_min_coverage_pct <= made_min_coverage_pct <= 100")

    @classmethod
    def from_row(cls, row: Any) -> PaymentRule:
        return cls(
            Decimal(row["made_min_coverage_pct"]), Decimal(row["partial_min_coverage_pct"]), row["partial_pay"],
            row["off_route_km_paid"], row["justified_paid"],
        )  # fmt: skip

    def status(self, coverage_pct: Decimal, justified: bool = False) -> Status:
        """`made`, `partial` or `not_made` by coverage (0-100 %); a justified run that was not made is `justified`."""
        if coverage_pct >= self.made_min_coverage_pct:
            return "made"
        if justified:
            return "justified"
        return "partial" if coverage_pct >= self.partial_min_coverage_pct else "not_made"

    def payable_km(self, status: Status, coverage_pct: Decimal, declared_km: Decimal, off_route_km: Decimal) -> Decimal:
        """The km of one run that may be paid (exact, unrounded). Justifying a partial run never lowers its pay."""
        if status == "justified":
            km = declared_km if self.justified_paid else self._by_coverage(coverage_pct, declared_km)
        else:
            km = self._by_coverage(coverage_pct, declared_km)
        return km + off_route_km if self.off_route_km_paid else km

    def _by_coverage(self, coverage_pct: Decimal, declared_km: Decimal) -> Decimal:
        status = self.status(coverage_pct)
        if status == "made" or (status == "partial" and self.partial_pay == "declared_km"):
            return declared_km
        if status == "partial" and self.partial_pay == "proportional":
            return declared_km * coverage_pct / Decimal(100)
        return Decimal(0)

    def amount(self, payable_km: Decimal, price_per_km: Decimal) -> Decimal:
        """R$ of one run line, rounded to the cent once; totals are sums of these."""
        return to_cents(payable_km * price_per_km)
