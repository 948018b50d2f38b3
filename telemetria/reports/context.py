"""The registry facts a report needs, loaded once per request: vehicles, their routes by day, zones."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property, lru_cache
from typing import Any

import orjson

from telemetria.db import Conn
from telemetria.http import FieldError
from telemetria.reports import queries as q
from telemetria.reports.limits import SpeedZone
from telemetria.reports.params import DEFAULT, ReportParams
from telemetria.reports.request import Selection, Window


@dataclass(frozen=True, slots=True)
class Point:
    """A named place on a route where the vehicle may stop: kind is boarding, school or garage."""

    name: str
    kind: str
    lat: float
    lon: float
    seq: int = 0
    scheduled: str | None = None  # HH:MM:SS local, as registered
    route_id: int = 0


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

    @cached_property
    def digest(self) -> str:
        """Changes whenever anything a report derives from the route does."""
        return _digest(
            (self.id, self.code, self.name, self.lon, self.lat, self.limit_kmh, self.tolerance_m, self.points)
        )


@dataclass(frozen=True, slots=True, eq=False)
class Assignment:
    route: Route
    valid_from: date
    valid_to: date | None
    weekdays: frozenset[int]

    def on(self, day: date) -> bool:
        """Whether the vehicle runs the route on local date `day`."""
        in_range = self.valid_from <= day and (self.valid_to is None or day <= self.valid_to)
        return in_range and day.isoweekday() in self.weekdays


@dataclass(frozen=True, slots=True, eq=False)
class Vehicle:
    id: int
    plate: str
    prefix: str | None
    contractor_id: int | None
    contractor: str | None
    limit_kmh: float | None
    assignments: list[Assignment] = field(default_factory=list)

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

    def basis(self, day: date, zones_digest: str, params: ReportParams) -> str:
        """What the vehicle's figures of local day `day` derive from besides its fixes: a rollup is current
        while this is unchanged, so a registry edit outdates only the vehicle-days it can change."""
        routes = tuple(sorted(r.digest for r in self.routes_on(day)))
        return _basis(params.fingerprint(), self.limit_kmh, routes, zones_digest)

    def label(self) -> dict[str, Any]:
        """What every report row carries to say which vehicle it is about."""
        return {"vehicle_id": self.id, "plate": self.plate}


@dataclass(frozen=True, eq=False)  # no slots: the properties below are cached in the instance
class Context:
    vehicles: list[Vehicle]
    zones: list[SpeedZone]
    generation: int

    @cached_property
    def _by_id(self) -> dict[int, Vehicle]:
        return {v.id: v for v in self.vehicles}

    @cached_property
    def zones_digest(self) -> str:
        return _digest([(z.limit_kmh, z.geometry) for z in self.zones])

    def vehicle(self, vehicle_id: int) -> Vehicle | None:
        return self._by_id.get(vehicle_id)

    def basis(self, vehicle: Vehicle, day: date) -> str:
        """The basis a rollup of `vehicle` on local day `day` computed with the default knobs has now."""
        return vehicle.basis(day, self.zones_digest, DEFAULT)

    def holds(self, rollup: Mapping[str, Any]) -> bool:
        """Whether a rollup row's basis is the one the registry gives its vehicle and day now."""
        vehicle = self.vehicle(rollup["vehicle_id"])
        return vehicle is not None and rollup["basis"] == self.basis(vehicle, rollup["day"])


@lru_cache(maxsize=4096)
def _basis(fingerprint: str, limit_kmh: float | None, routes: tuple[str, ...], zones: str) -> str:
    return fingerprint + ":" + _digest((limit_kmh, routes, zones))


def _digest(value: Any) -> str:
    return hashlib.sha256(orjson.dumps(value, option=orjson.OPT_SORT_KEYS)).hexdigest()[:20]


def _line(geometry: dict[str, Any]) -> tuple[list[float], list[float]]:
    coords = geometry["coordinates"]
    return [float(c[0]) for c in coords], [float(c[1]) for c in coords]


async def load(conn: Conn, scope: int | None, sel: Selection, win: Window) -> Context:
    """Vehicles of the selection the caller may see (404 naming an id it may not), with routes and zones."""
    days = win.local_days()
    rows = await conn.fetch(q.VEHICLES, scope, sel.vehicle_ids, sel.contractor_id, sel.route_id, days[0], days[-1])
    if sel.vehicle_ids is not None:
        missing = sorted(set(sel.vehicle_ids) - {r["id"] for r in rows})
        if missing:
            raise FieldError(f"vehicle_id: no vehicle {missing[0]}", "vehicle_id", 404)
    if sel.contractor_id is not None and scope is not None and sel.contractor_id != scope:
        raise FieldError(f"contractor_id: no contractor {sel.contractor_id}", "contractor_id", 404)
    vehicles = [
        Vehicle(r["id"], r["plate"], r["prefix"], r["contractor_id"], r["contractor"], r["speed_limit_kmh"])
        for r in rows
    ]
    by_id = {v.id: v for v in vehicles}
    gen = await conn.fetchrow(q.GENERATION_OF_DB)  # first: routes read after it are at least as new
    generation = gen["n"]
    assigned = await conn.fetch(q.ASSIGNMENTS, list(by_id), days[0], days[-1])
    routes = await _routes(conn, (gen["db"], generation), {r["route_id"] for r in assigned})
    for r in assigned:
        assignment = Assignment(routes[r["route_id"]], r["valid_from"], r["valid_to"], frozenset(r["weekdays"]))
        by_id[r["vehicle_id"]].assignments.append(assignment)
    zones = [SpeedZone(z["limit_kmh"], z["geometry"], True, z["name"]) for z in await conn.fetch(q.ZONES)]
    return Context(vehicles, zones, generation)


# Decoded routes of one registry generation, kept between requests: a fleet's lines are megabytes
# of JSON that a report answered from rollups would otherwise fetch and decode every time.
_cache: tuple[tuple[str, int], dict[int, Route]] = (("", -1), {})


async def _routes(conn: Conn, generation: tuple[str, int], ids: set[int]) -> dict[int, Route]:
    """The routes `ids` as of (database, generation), from the cache or the database."""
    global _cache
    if _cache[0] != generation:
        _cache = (generation, {})
    known = _cache[1]
    for r in await conn.fetch(q.ROUTE_DETAILS, sorted(ids - known.keys())) if ids - known.keys() else ():
        lon, lat = _line(r["geometry"])
        points = tuple(
            Point(s["name"], s["kind"], s["lat"], s["lon"], s["seq"], s["scheduled_time"], r["id"]) for s in r["stops"]
        )
        limits = (r["speed_limit_kmh"], r["deviation_tolerance_m"])
        known[r["id"]] = Route(r["id"], r["code"], r["name"], lon, lat, *limits, points, planned_km=r["planned_km"])
    return {i: known[i] for i in ids}


def require_some(vehicles: Sequence[Vehicle], sel: Selection) -> None:
    """A route or contractor selection that names nothing the caller may see is a 404, not an empty report."""
    if not vehicles and sel.route_id is not None:
        raise FieldError(f"route_id: no route {sel.route_id} with vehicles assigned in the period", "route_id", 404)
