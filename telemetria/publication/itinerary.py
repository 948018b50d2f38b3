"""A route as the public area shows it (Art. 13): from the registry's version in force, nothing personal (pure).

Published: code, name, shift, km (declared by the contract and the traced line's length, both, each named),
the schools (name, place and time: public buildings), the boarding places on the grid with their times, and
the simplified line. Not published: the garage (a stop of the contractor's, not of the itinerary), the
boarding places' names while they are rounded (a name such as "em frente à casa de …" would undo the grid),
vehicles, plates, drivers, contracts and prices.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

from telemetria.contracts.money import METRE, number
from telemetria.publication.grid import snap
from telemetria.publication.lines import public_line

PUBLISHED_KINDS = ("boarding", "school")


@dataclass(frozen=True, slots=True)
class PublicStop:
    order: int  # 1-based, among the published stops, in the route's order
    kind: str  # boarding | school
    name: str | None  # None: a boarding place while rounded
    lat: float
    lon: float
    scheduled_time: str | None  # HH:MM, local


@dataclass(frozen=True, slots=True)
class PublicRoute:
    code: str
    name: str
    shift: str | None
    declared_km: Decimal | None  # what the contract declares a run to cover
    length_km: Decimal  # the traced line's length
    stops: tuple[PublicStop, ...]
    line: list[list[float]]  # [[lat, lon], ...]

    @property
    def schools(self) -> list[str]:
        """The schools' names in route order, each once."""
        return list(dict.fromkeys(s.name for s in self.stops if s.kind == "school" and s.name))


def _km(value: Any) -> Decimal:
    return Decimal(repr(float(value))).quantize(METRE, rounding=ROUND_HALF_EVEN)


def _hhmm(text: str | None) -> str | None:
    return None if not text else str(text)[:5]


def public_route(data: Mapping[str, Any], cell_m: int) -> PublicRoute:
    """The route version `data` (registry_versions.data) for the public, boarding places on a `cell_m` grid."""
    stops: Sequence[Mapping[str, Any]] = sorted(
        (s for s in data.get("stops") or () if s.get("kind") in PUBLISHED_KINDS), key=lambda s: int(s["seq"])
    )
    boarding = [s for s in stops if s["kind"] == "boarding"]
    places = iter(snap([s["lat"] for s in boarding], [s["lon"] for s in boarding], cell_m))  # in boarding order
    out = []
    for i, s in enumerate(stops, 1):
        if s["kind"] == "boarding":
            lat, lon = next(places)
            name = s.get("name") if cell_m <= 0 else None
        else:
            lat, lon, name = round(float(s["lat"]), 6), round(float(s["lon"]), 6), s.get("name")
        out.append(PublicStop(i, s["kind"], name, lat, lon, _hhmm(s.get("scheduled_time"))))
    coords = (data.get("geometry") or {}).get("coordinates") or []
    hide = [(float(s["lon"]), float(s["lat"])) for s in boarding]
    line = public_line([float(c[0]) for c in coords], [float(c[1]) for c in coords], cell_m, hide=hide)
    declared = data.get("declared_km")
    return PublicRoute(
        str(data["code"]), str(data["name"]), data.get("shift"), _km(declared) if declared is not None else None,
        _km(float(data["length_m"]) / 1000), tuple(out), line,
    )  # fmt: skip


def route_json(r: PublicRoute) -> dict[str, Any]:
    """The route in /public/itineraries: km with 3 decimals; `km` is the declared km, else the line's length."""
    return {
        "code": r.code, "name": r.name, "shift": r.shift,
        "km": number(r.declared_km if r.declared_km is not None else r.length_km, 3),
        "km_basis": "declared" if r.declared_km is not None else "traced",
        "declared_km": number(r.declared_km, 3), "length_km": number(r.length_km, 3),
        "schools": r.schools,
        "stops": [{"order": s.order, "kind": s.kind, "name": s.name, "lat": s.lat, "lon": s.lon,
                   "scheduled_time": s.scheduled_time} for s in r.stops],
        "line": r.line,
    }  # fmt: skip
