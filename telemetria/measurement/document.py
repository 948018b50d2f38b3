"""The boletim as JSON: run lines and totals as exact numbers, and the frozen form a closed month is kept in; pure.

Numbers are JSON numbers with fixed places (contracts/money.py `number`): km 3, R$ 2, coverage 4 (a share 0..1),
percentages 2. A closed month is stored as the canonical bytes of its document (keys sorted, no spaces) and
their SHA-256; reading them back (`lines_of`) parses numbers as Decimal, so a frozen month is served exactly.
A month frozen before lines had `unpaved_km` and `price_per_km_unpaved` reads back with 0 and null.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import orjson

from telemetria.contracts.money import number
from telemetria.contracts.rule import PaymentRule
from telemetria.measurement.boletim import Line, RouteRef, RouteTotals, Terms, route_totals

KM, MONEY, SHARE, PCTS = 3, 2, 4, 2


@dataclass(frozen=True, slots=True)
class ContractHead:
    id: int
    number: str
    contractor_id: int
    contractor: str
    valid_from: date
    valid_to: date

    def covers(self, first: date, last: date) -> bool:
        return self.valid_from <= first and last <= self.valid_to


@dataclass(frozen=True, slots=True)
class Closing:
    month: date
    sha256: str
    closed_by: str
    closed_at: datetime
    lines: list[Line]
    road_networks: list[dict[str, Any]] = field(default_factory=list)  # as frozen (none before they were named)


@dataclass
class Computed:
    """One contract's boletim over first..last: run lines (frozen ones included), prices, closed months."""

    head: ContractHead
    first: date
    last: date
    routes: list[RouteRef]
    lines: list[Line]
    terms: list[tuple[date, date, Terms]] = field(default_factory=list)
    closings: list[Closing] = field(default_factory=list)
    # The road networks that split the unpaved km (roads/inforce.py's names): id, source file, SHA-256, first day.
    road_networks: list[dict[str, Any]] = field(default_factory=list)
    # Earlier closings of its months, reopened since (queries.REOPENED's rows), oldest first.
    reopened: list[Any] = field(default_factory=list)


def rule_json(rule: PaymentRule) -> dict[str, Any]:
    return {
        "made_min_coverage_pct": number(rule.made_min_coverage_pct, PCTS),
        "partial_min_coverage_pct": number(rule.partial_min_coverage_pct, PCTS),
        "partial_pay": rule.partial_pay, "off_route_km_paid": rule.off_route_km_paid,
        "justified_paid": rule.justified_paid,
    }  # fmt: skip


def terms_json(valid_from: date, valid_to: date, terms: Terms) -> dict[str, Any]:
    """A price-and-rule version as it applies inside the period: from, to (both included)."""
    return {"valid_from": valid_from.isoformat(), "valid_to": valid_to.isoformat(),
            "price_per_km": number(terms.price_per_km, MONEY),
            "price_per_km_unpaved": number(terms.price_per_km_unpaved, MONEY),
            "rule": rule_json(terms.rule)}  # fmt: skip


def _when(t: float | None, tz: ZoneInfo) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, tz).isoformat()


def line_json(ln: Line, contract_id: int, tz: ZoneInfo) -> dict[str, Any]:
    return {
        "contract_id": contract_id, "date": ln.day.isoformat(), "run_no": ln.run_no, "route_id": ln.route_id,
        "code": ln.code, "vehicle_id": ln.vehicle_id, "plate": ln.plate, "substitution": ln.substitution,
        "unauthorized": ln.unauthorized, "status": ln.status, "coverage": number(ln.coverage_pct / 100, SHARE),
        "realized_km": number(ln.realized_km, KM), "off_route_km": number(ln.off_route_km, KM),
        "declared_km": number(ln.declared_km, KM), "contracted_km": number(ln.contracted_km, KM),
        "payable_km": number(ln.payable_km, KM), "unpaved_km": number(ln.unpaved_km, KM),
        "price_per_km": number(ln.price_per_km, MONEY),
        "price_per_km_unpaved": number(ln.price_per_km_unpaved, MONEY), "amount": number(ln.amount, MONEY),
        "start": _when(ln.first, tz), "end": _when(ln.last, tz),
        "justification": ln.justification, "justified_by": ln.justified_by,
        "justified_at": ln.justified_at.isoformat() if ln.justified_at else None,
        "off_schedule": ln.off_schedule, "justification_kind": ln.justification_kind,
    }  # fmt: skip


def _epoch(text: str | None) -> float | None:
    return None if text is None else datetime.fromisoformat(text).timestamp()


def _decimal(value: Any) -> Decimal | None:
    return None if value is None else Decimal(value)


def line_of(row: dict[str, Any]) -> Line:
    """A run line back from its JSON (numbers parsed as Decimal: see `lines_of`)."""
    return Line(
        date.fromisoformat(row["date"]), row["run_no"], row["route_id"], row["code"], row["vehicle_id"],
        row["plate"], row["substitution"], row["unauthorized"], row["status"],
        (Decimal(row["coverage"]) * 100).quantize(Decimal("0.01")), Decimal(row["realized_km"]),
        Decimal(row["off_route_km"]), Decimal(row["declared_km"]), Decimal(row["contracted_km"]),
        Decimal(row["payable_km"]), Decimal(row["price_per_km"]), Decimal(row["amount"]), _epoch(row["start"]),
        _epoch(row["end"]), row["justification"], row["justified_by"],
        datetime.fromisoformat(row["justified_at"]) if row["justified_at"] else None,
        Decimal(row.get("unpaved_km", 0)), _decimal(row.get("price_per_km_unpaved")), row.get("off_schedule"),
        row.get("justification_kind"),
    )  # fmt: skip


def totals_json(t: RouteTotals) -> dict[str, Any]:
    return {
        "route_id": t.route_id, "code": t.code, "declared_km": number(t.declared_km, KM), "runs_due": t.runs_due,
        "runs_made": t.runs_made, "runs_partial": t.runs_partial, "runs_not_made": t.runs_not_made,
        "runs_justified": t.runs_justified, "contracted_km": number(t.contracted_km, KM),
        "realized_km": number(t.realized_km, KM), "payable_km": number(t.payable_km, KM),
        "unpaved_km": number(t.unpaved_km, KM), "amount": number(t.amount, MONEY),
        "runs_pending": t.runs_pending, "pending_km": number(t.pending_km, KM),
    }  # fmt: skip


def sums_json(routes: Sequence[RouteTotals]) -> dict[str, Any]:
    """The contract's totals: sums of its routes' (themselves sums of run lines)."""
    zero = Decimal(0)
    return {
        **{k: sum(getattr(t, k) for t in routes) for k in
           ("runs_due", "runs_made", "runs_partial", "runs_not_made", "runs_justified")},
        "contracted_km": number(sum((t.contracted_km for t in routes), zero), KM),
        "realized_km": number(sum((t.realized_km for t in routes), zero), KM),
        "payable_km": number(sum((t.payable_km for t in routes), zero), KM),
        "unpaved_km": number(sum((t.unpaved_km for t in routes), zero), KM),
        "amount": number(sum((t.amount for t in routes), zero), MONEY),
        "runs_pending": sum(t.runs_pending for t in routes),
        "pending_km": number(sum((t.pending_km for t in routes), zero), KM),
    }  # fmt: skip


def canonical(doc: dict[str, Any]) -> bytes:
    """The bytes a closed month is stored and digested as: keys sorted, compact, numbers as written."""
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS)


def digest(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def frozen_of(content: bytes) -> tuple[list[Line], list[dict[str, Any]]]:
    """A frozen month's stored content, parsed once: its run lines, numbers exact (parsed as Decimal, never float),
    and the road networks it names (empty when frozen before they were named)."""
    doc = json.loads(content, parse_float=Decimal)
    return [line_of(r) for r in doc["runs"]], doc.get("contract", {}).get("road_networks", [])


def lines_of(content: bytes) -> list[Line]:
    """The run lines of a frozen month's stored content (frozen_of)."""
    return frozen_of(content)[0]


def _months(first: date, last: date) -> list[date]:
    out, m = [], first.replace(day=1)
    while m <= last:
        out.append(m)
        m = (m.replace(day=28) + timedelta(days=4)).replace(day=1)
    return out


def reopened_json(r: Any) -> dict[str, Any]:
    """An earlier closing of a month, reopened since: what was closed (SHA-256, who, when), who reopened, when, why."""
    return {
        "sha256": r["sha256"], "closed_by": r["closed_by"], "closed_at": r["closed_at"].isoformat(),
        "reopened_by": r["reopened_by"], "reopened_at": r["reopened_at"].isoformat(), "reason": r["reopen_reason"],
    }  # fmt: skip


def contract_json(c: Computed, tz: ZoneInfo) -> dict[str, Any]:
    """A contract's part of the report: prices and rule in force (the first day's, then every version in the
    period), the months (closed ones with their digest), per-route totals and the contract's totals."""
    totals = route_totals(c.routes, c.lines)
    first = c.terms[0][2] if c.terms else None
    shut = {s.month: s for s in c.closings}
    months = [
        {"month": f"{m:%Y-%m}", "closed": m in shut, "sha256": shut[m].sha256 if m in shut else None,
         "closed_by": shut[m].closed_by if m in shut else None,
         "closed_at": shut[m].closed_at.isoformat() if m in shut else None,
         "reopened": [reopened_json(r) for r in c.reopened if r["month"] == m]}
        for m in _months(c.first, c.last)
    ]  # fmt: skip
    return {
        "contract_id": c.head.id, "number": c.head.number, "contractor_id": c.head.contractor_id,
        "contractor": c.head.contractor, "valid_from": c.head.valid_from.isoformat(),
        "valid_to": c.head.valid_to.isoformat(), "from": c.first.isoformat(), "to": c.last.isoformat(),
        "price_per_km": number(first.price_per_km, MONEY) if first else None,
        "price_per_km_unpaved": number(first.price_per_km_unpaved, MONEY) if first else None,
        "rule": rule_json(first.rule) if first else None,
        "terms": [terms_json(lo, hi, t) for lo, hi, t in c.terms],
        "frozen": bool(c.closings), "months": months, "road_networks": c.road_networks,
        "routes": [totals_json(t) for t in totals], **sums_json(totals),
    }  # fmt: skip
