"""Each route's service in a month, from the boletim's run lines: runs due, runs made, km made (pure).

The figures are the measurement's (telemetria/measurement): runs due from the school calendar × the
assignments in force each day, made when the GPS coverage reaches the contract's `made` threshold, km made the
km the GPS measured along the route (the boletim's "Km realizado"), every run counted. Nothing of the vehicle
(plate, substitutions) nor of the money is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from telemetria.contracts.money import number
from telemetria.measurement.boletim import RouteTotals

ZERO = Decimal(0)


@dataclass(frozen=True, slots=True)
class RouteService:
    route_id: int
    code: str
    name: str
    runs_due: int
    runs_made: int
    km_made: Decimal


def month_span(first: date, today: date) -> tuple[date, date] | None:
    """The days of the month starting `first` that are counted on `today`: up to its end or yesterday."""
    nxt = (first.replace(day=28) + timedelta(days=4)).replace(day=1)
    last = min(nxt - timedelta(days=1), today - timedelta(days=1))
    return (first, last) if last >= first else None


def per_route(totals: Iterable[RouteTotals], names: Mapping[int, str]) -> list[RouteService]:
    """The routes' totals (of one or more contracts) added up per route, in code order."""
    acc: dict[int, RouteService] = {}
    for t in totals:
        had = acc.get(t.route_id)
        acc[t.route_id] = RouteService(
            t.route_id, t.code, names.get(t.route_id, t.code), t.runs_due + (had.runs_due if had else 0),
            t.runs_made + (had.runs_made if had else 0), t.realized_km + (had.km_made if had else ZERO),
        )  # fmt: skip
    return sorted(acc.values(), key=lambda r: (r.code, r.route_id))


def answer(month: str, first: date, last: date, complete: bool, routes: Sequence[RouteService]) -> dict[str, Any]:
    """The JSON of /public/service: per route and in total; `to` is the last day counted."""
    return {
        "month": month, "from": first.isoformat(), "to": last.isoformat(), "complete": complete,
        "routes": [{"code": r.code, "name": r.name, "runs_due": r.runs_due, "runs_made": r.runs_made,
                    "km_made": number(r.km_made, 3)} for r in routes],
        "totals": {"runs_due": sum(r.runs_due for r in routes), "runs_made": sum(r.runs_made for r in routes),
                   "km_made": number(sum((r.km_made for r in routes), ZERO), 3)},
    }  # fmt: skip
