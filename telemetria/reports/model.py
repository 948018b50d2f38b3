"""The value types of reports, in one pure module: what a report is asked about and the registry facts it uses.

`Window` and `Selection` say what a request asks for; `Vehicle`, `Route`, `Point`, `Assignment` and `SpeedZone`
are the registry as a report sees it, gathered in a `Context` (loaded by store/context.py). `ReportError` is
a domain refusal naming the field at fault; reports/api.py answers it over HTTP.

Imports nothing that does I/O or HTTP: the analysis (reports/analysis/) builds on these.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from decimal import Decimal
from functools import cached_property, lru_cache
from typing import Any
from zoneinfo import ZoneInfo

import orjson

from telemetria.localtime import LOCAL_TZ
from telemetria.reports.knobs import DEFAULT, ReportParams
from telemetria.roads.model import in_force_on


class ReportError(Exception):
    """A report that cannot be made because of one field of the request (`field`: its name)."""

    def __init__(self, message: str, field: str) -> None:
        super().__init__(message)
        self.field = field


class NotFound(ReportError):
    """The request names something that does not exist, or that the caller may not see."""


@dataclass(frozen=True, slots=True)
class Window:
    """A half-open window [start, end) of aware instants, shown in zone `tz`."""

    start: datetime
    end: datetime
    tz: ZoneInfo

    def local_days(self) -> list[date]:
        """Every local date (in the service's zone, that of the rollups) the window touches."""
        first = self.start.astimezone(LOCAL_TZ).date()
        last = (self.end - timedelta(microseconds=1)).astimezone(LOCAL_TZ).date()
        return [first + timedelta(days=i) for i in range((last - first).days + 1)]


@dataclass(frozen=True, slots=True)
class Selection:
    """Which vehicles: given ids, a contractor's, those assigned to a route, or (all None) the whole fleet."""

    vehicle_ids: list[int] | None
    contractor_id: int | None
    route_id: int | None


@dataclass(frozen=True, slots=True)
class Point:
    """A named place on a route where the vehicle may stop: kind is boarding, school or garage; lat/lon degrees."""

    name: str
    kind: str
    lat: float
    lon: float
    seq: int = 0
    scheduled: str | None = None  # HH:MM:SS local, as registered
    route_id: int = 0


@dataclass(frozen=True, slots=True)
class SpeedZone:
    """A registered speed zone: a GeoJSON Polygon or MultiPolygon in lon/lat degrees and its limit, km/h."""

    limit_kmh: float
    geometry: Mapping[str, Any]
    active: bool = True
    name: str = ""
    valid_from: date | None = None  # the version's first and last local day (None: open)
    valid_to: date | None = None

    def in_force(self, day: date) -> bool:
        """Whether this version of the zone applies on local date `day`."""
        return (self.valid_from is None or self.valid_from <= day) and (self.valid_to is None or day <= self.valid_to)


def zones_on(zones: Sequence[SpeedZone], day: date) -> list[SpeedZone]:
    """The versions of the zones in force on local date `day`."""
    return [z for z in zones if z.active and z.in_force(day)]


@dataclass(frozen=True, eq=False)  # no slots: `digest` is cached in the instance
class Route:
    id: int
    code: str
    name: str
    lon: list[float]
    lat: list[float]
    limit_kmh: float
    tolerance_m: float
    points: tuple[Point, ...]
    planned_km: float | None = None  # km one day's run is planned to cover: the declared km, else the line's length
    contract_id: int | None = None
    declared_km: Decimal | None = None  # exact, as the contract pays it
    length_m: float = 0.0  # the traced line's length
    version: int = 0  # the registry version (registry_versions.id) this is; 0: not from the registry

    @cached_property
    def digest(self) -> str:
        """Changes whenever anything a report derives from the route does."""
        return _digest(
            (self.id, self.code, self.name, self.lon, self.lat, self.limit_kmh, self.tolerance_m, self.points)
        )


def runs_on(valid_from: date, valid_to: date | None, weekdays: frozenset[int], day: date) -> bool:
    """Whether an assignment from valid_from to valid_to (None: open) on ISO `weekdays` covers local date `day`."""
    in_range = valid_from <= day and (valid_to is None or day <= valid_to)
    return in_range and day.isoweekday() in weekdays


@dataclass(frozen=True, slots=True, eq=False)
class Assignment:
    route: Route
    valid_from: date
    valid_to: date | None
    weekdays: frozenset[int]

    def on(self, day: date) -> bool:
        """Whether the vehicle runs the route on local date `day`."""
        return runs_on(self.valid_from, self.valid_to, self.weekdays, day)


@dataclass(frozen=True, slots=True, eq=False)
class Vehicle:
    id: int
    plate: str
    prefix: str | None
    contractor_id: int | None
    contractor: str | None
    limit_kmh: float | None  # the newest version's; a past day's is limit_on(day)
    assignments: list[Assignment] = field(default_factory=list)
    # The speed limit's versions: (first local day, last local day, km/h), None for an open end.
    limits: tuple[tuple[date | None, date | None, float | None], ...] = ()
    # The local days the report's reader may see the vehicle's data of, as (first, last) spans (None: open end):
    # a contractor only those it had the vehicle on (migrations/0028_scope_by_day.sql). None: every day.
    scope_days: tuple[tuple[date | None, date | None], ...] | None = None

    def in_scope(self, day: date) -> bool:
        """Whether the reader may see the vehicle's fixes and figures of local date `day`."""
        if self.scope_days is None:
            return True
        return any((lo is None or lo <= day) and (hi is None or day <= hi) for lo, hi in self.scope_days)

    def limit_on(self, day: date) -> float | None:
        """The vehicle's own speed limit in force on local date `day` (km/h; None: none registered)."""
        for lo, hi, kmh in self.limits:
            if (lo is None or lo <= day) and (hi is None or day <= hi):
                return kmh
        return self.limit_kmh

    def as_on(self, day: date) -> Vehicle:
        """The vehicle with the speed limit in force on local date `day` as its `limit_kmh`."""
        kmh = self.limit_on(day)
        return self if kmh == self.limit_kmh else replace(self, limit_kmh=kmh)

    def routes_on(self, day: date) -> list[Route]:
        """The routes assigned to the vehicle on local date `day` (a route once, whatever its assignments)."""
        seen: dict[int, Route] = {}
        for a in self.assignments:
            if a.on(day):
                seen.setdefault(a.route.id, a.route)
        return list(seen.values())

    def planned_km(self, day: date) -> float | None:
        """km the routes assigned on local date `day` plan for the vehicle (each route once), None with no route."""
        planned = [r.planned_km for r in self.routes_on(day) if r.planned_km is not None]
        return sum(planned) if planned else None

    def basis(self, day: date, zones_digest: str, params: ReportParams, network: int | None = None) -> str:
        """What the vehicle's figures of local day `day` derive from besides its fixes: a rollup is current
        while this is unchanged, so a registry edit outdates only the vehicle-days it can change. `network`: the
        road network in force that day (none: the basis is what it was before road networks existed)."""
        routes = tuple(sorted(r.digest for r in self.routes_on(day)))
        basis = _basis(params.fingerprint(), self.limit_on(day), routes, zones_digest)
        return basis if network is None else f"{basis}:net{network}"

    def label(self) -> dict[str, Any]:
        """What every report row carries to say which vehicle it is about."""
        return {"vehicle_id": self.id, "plate": self.plate}


@dataclass(frozen=True, eq=False)  # no slots: the properties below are cached in the instance
class Context:
    """The registry facts of one report: its vehicles (with their route assignments, each clipped to the days a
    route version applies), the speed zones' versions of the period, and the registry generation they were
    read at."""

    vehicles: list[Vehicle]
    zones: list[SpeedZone]
    generation: int
    # The road networks (telemetria/roads): (first local day in force, network id), ascending; a day takes the
    # last one whose first day it is on or after (none: no network in force, km as before roads existed).
    networks: tuple[tuple[date, int], ...] = ()
    network_names: dict[int, dict[str, Any]] = field(default_factory=dict)  # id → what names it in a report

    @cached_property
    def _by_id(self) -> dict[int, Vehicle]:
        return {v.id: v for v in self.vehicles}

    @cached_property
    def _zone_digests(self) -> dict[date, str]:
        return {}

    def zones_on(self, day: date) -> list[SpeedZone]:
        """The speed zones in force on local date `day`."""
        return zones_on(self.zones, day)

    def zones_digest(self, day: date) -> str:
        """Changes whenever the zones in force on local date `day` do."""
        digests = self._zone_digests
        if day not in digests:
            digests[day] = _digest([(z.limit_kmh, z.geometry) for z in self.zones_on(day)])
        return digests[day]

    def vehicle(self, vehicle_id: int) -> Vehicle | None:
        return self._by_id.get(vehicle_id)

    def network_on(self, day: date) -> int | None:
        """The road network in force on local date `day`, None when none is."""
        return in_force_on(self.networks, day)

    def networks_used(self, days: Sequence[date]) -> list[dict[str, Any]]:
        """The road networks in force on any of `days`, as a report names them (the reports say which they used)."""
        used = sorted({n for day in days if (n := self.network_on(day)) is not None})
        return [self.network_names.get(n, {"network_id": n}) for n in used]

    def basis(self, vehicle: Vehicle, day: date) -> str:
        """The basis a rollup of `vehicle` on local day `day` computed with the default knobs has now."""
        return vehicle.basis(day, self.zones_digest(day), DEFAULT, self.network_on(day))

    def holds(self, rollup: Mapping[str, Any]) -> bool:
        """Whether a rollup row's basis is the one the registry gives its vehicle and day now."""
        vehicle = self.vehicle(rollup["vehicle_id"])
        return (
            vehicle is not None
            and vehicle.in_scope(rollup["day"])
            and rollup["basis"] == self.basis(vehicle, rollup["day"])
        )


@lru_cache(maxsize=4096)
def _basis(fingerprint: str, limit_kmh: float | None, routes: tuple[str, ...], zones: str) -> str:
    return fingerprint + ":" + _digest((limit_kmh, routes, zones))


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:20]
