"""Reading what the public area publishes: the itineraries in force today, a month's service per route."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from telemetria.db import Conn
from telemetria.http import FieldError
from telemetria.measurement import store as measurement
from telemetria.measurement.boletim import RouteTotals, route_totals
from telemetria.publication import queries as q
from telemetria.publication.itinerary import PublicRoute, public_route
from telemetria.publication.service import RouteService, per_route


@dataclass(frozen=True, slots=True)
class Itineraries:
    year: int
    start: date | None  # the school year's first and last day (None: not registered yet)
    end: date | None
    routes: list[PublicRoute]


@dataclass(frozen=True, slots=True)
class Registered:
    """What the itineraries are computed from: the school year in force and its routes' versions' data."""

    year: int
    start: date | None
    end: date | None
    routes: list[dict[str, Any]]


async def registered(conn: Conn, today: date) -> Registered:
    """The school year in force on `today` and the data of its routes' versions in force today."""
    row = await conn.fetchrow(q.YEAR_IN_FORCE, today)
    year, start, end = (row["year"], row["start_date"], row["end_date"]) if row else (today.year, None, None)
    return Registered(year, start, end, [r["data"] for r in await conn.fetch(q.ROUTES_IN_FORCE, today, year)])


def itineraries(got: Registered, cell_m: int) -> Itineraries:
    """The routes of the school year, public (projected, simplified, boarding places on the grid): CPU work."""
    return Itineraries(got.year, got.start, got.end, [public_route(d, cell_m) for d in got.routes])


async def data_version(conn: Conn, today: date) -> tuple[str, int]:
    """A token that changes whenever the itineraries may (the registry generation, the school years), and the
    school year in force on `today` (as `registered` finds it)."""
    row = await conn.fetchrow(q.DATA_VERSION, today)
    return f"{row['n']}:{row['years']}", row["year"] if row["year"] is not None else today.year


async def service(conn: Conn, first: date, last: date) -> list[RouteService]:
    """Every measured route's runs due, made and km made over first..last (the boletim of each contract)."""
    totals: list[RouteTotals] = []
    for head in await measurement.contracts(conn, None, None):
        lo, hi = max(first, head.valid_from), min(last, head.valid_to)
        if lo > hi:
            continue
        try:
            got = await measurement.compute(conn, head, lo, hi, where="month")
        except FieldError as e:  # e.g. no school year, no price in force: the month cannot be measured yet
            raise FieldError(f"month: the service of {first:%Y-%m} cannot be counted yet ({e})", "month", 409) from e
        totals += route_totals(got.routes, got.lines)
    names = {r["id"]: r["name"] for r in await conn.fetch(q.ROUTE_NAMES, sorted({t.route_id for t in totals}))}
    return per_route(totals, names)
