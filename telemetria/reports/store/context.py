"""The registry facts a report needs, loaded once per request: vehicles, their routes by day, zones."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from telemetria.db import Conn
from telemetria.reports.model import Assignment, Context, NotFound, Point, Route, Selection, SpeedZone, Vehicle, Window
from telemetria.reports.store import queries as q


def _line(geometry: dict[str, Any]) -> tuple[list[float], list[float]]:
    coords = geometry["coordinates"]
    return [float(c[0]) for c in coords], [float(c[1]) for c in coords]


async def load(conn: Conn, scope: int | None, sel: Selection, win: Window) -> Context:
    """Vehicles of the selection the caller may see (NotFound naming an id it may not), with routes and zones."""
    days = win.local_days()
    rows = await conn.fetch(q.VEHICLES, scope, sel.vehicle_ids, sel.contractor_id, sel.route_id, days[0], days[-1])
    if sel.vehicle_ids is not None:
        missing = sorted(set(sel.vehicle_ids) - {r["id"] for r in rows})
        if missing:
            raise NotFound(f"vehicle_id: no vehicle {missing[0]}", "vehicle_id")
    if sel.contractor_id is not None and scope is not None and sel.contractor_id != scope:
        raise NotFound(f"contractor_id: no contractor {sel.contractor_id}", "contractor_id")
    vehicles = [
        Vehicle(r["id"], r["plate"], r["prefix"], r["contractor_id"], r["contractor"], r["speed_limit_kmh"])
        for r in rows
    ]
    by_id = {v.id: v for v in vehicles}
    gen = await conn.fetchrow(q.GENERATION_OF_DB)  # first: routes read after it are at least as new
    generation = gen["n"]
    assigned = await conn.fetch(q.ASSIGNMENTS, list(by_id), days[0], days[-1])
    by_route = await routes(conn, (gen["db"], generation), {r["route_id"] for r in assigned})
    for r in assigned:
        assignment = Assignment(by_route[r["route_id"]], r["valid_from"], r["valid_to"], frozenset(r["weekdays"]))
        by_id[r["vehicle_id"]].assignments.append(assignment)
    zones = [SpeedZone(z["limit_kmh"], z["geometry"], True, z["name"]) for z in await conn.fetch(q.ZONES)]
    return Context(vehicles, zones, generation)


# Decoded routes of one registry generation, kept between requests: a fleet's lines are megabytes
# of JSON that a report answered from rollups would otherwise fetch and decode every time.
_cache: tuple[tuple[str, int], dict[int, Route]] = (("", -1), {})


async def routes(conn: Conn, generation: tuple[str, int], ids: set[int]) -> dict[int, Route]:
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
    """A route or contractor selection that names nothing the caller may see is NotFound, not an empty report."""
    if not vehicles and sel.route_id is not None:
        raise NotFound(f"route_id: no route {sel.route_id} with vehicles assigned in the period", "route_id")
