"""The registry facts a report needs, loaded once per request from the registry's versions: vehicles, the
route versions assigned to them day by day, their speed limits and the speed zones in force each day."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date, timedelta
from typing import Any

from telemetria.db import Conn
from telemetria.reports.model import Assignment, Context, NotFound, Point, Route, Selection, SpeedZone, Vehicle, Window
from telemetria.reports.store import queries as q
from telemetria.roads import inforce

DAY = timedelta(days=1)


def _line(geometry: dict[str, Any]) -> tuple[list[float], list[float]]:
    coords = geometry["coordinates"]
    return [float(c[0]) for c in coords], [float(c[1]) for c in coords]


def last_day(hi: date | None) -> date | None:
    """The last day of a version whose `during` ends (exclusive) at `hi`; None: open."""
    return None if hi is None else hi - DAY


def clip(first: date, last: date | None, lo: date | None, hi: date | None) -> tuple[date, date | None] | None:
    """The days first..last (None: open) that fall in a version's [lo, hi) (None: open), or None if none."""
    start = first if lo is None else max(first, lo)
    end = last_day(hi)
    if last is not None:
        end = last if end is None else min(last, end)
    return None if end is not None and end < start else (start, end)


def _vehicle(r: Mapping[str, Any], limits: tuple[tuple[date | None, date | None, float | None], ...]) -> Vehicle:
    return Vehicle(
        r["id"], r["plate"], r["prefix"], r["contractor_id"], r["contractor"], r["speed_limit_kmh"], limits=limits
    )


async def load(conn: Conn, scope: int | None, sel: Selection, win: Window) -> Context:
    """Vehicles of the selection the caller may see (NotFound naming an id it may not), with routes and zones."""
    days = win.local_days()
    first, last = days[0], days[-1]
    rows = await conn.fetch(q.VEHICLES, scope, sel.vehicle_ids, sel.contractor_id, sel.route_id, first, last)
    if sel.vehicle_ids is not None:
        missing = sorted(set(sel.vehicle_ids) - {r["id"] for r in rows})
        if missing:
            raise NotFound(f"vehicle_id: no vehicle {missing[0]}", "vehicle_id")
    if sel.contractor_id is not None and scope is not None and sel.contractor_id != scope:
        raise NotFound(f"contractor_id: no contractor {sel.contractor_id}", "contractor_id")
    ids = [r["id"] for r in rows]
    limits: dict[int, list[tuple[date | None, date | None, float | None]]] = {}
    for lim in await conn.fetch(q.VEHICLE_LIMITS, ids, first, last):
        limits.setdefault(lim["vehicle_id"], []).append((lim["lo"], last_day(lim["hi"]), lim["speed_limit_kmh"]))
    vehicles = [_vehicle(r, tuple(limits.get(r["id"], ()))) for r in rows]
    if scope is not None:  # a contractor sees a vehicle's days it had the vehicle on, not another's before or after
        spans: dict[int, list[tuple[date | None, date | None]]] = {v.id: [] for v in vehicles}
        for s in await conn.fetch(q.SCOPE_SPANS, ids, scope):
            spans[s["vehicle_id"]].append((s["lo"], last_day(s["hi"])))
        vehicles = [replace(v, scope_days=tuple(spans[v.id])) for v in vehicles]
    by_id = {v.id: v for v in vehicles}
    gen = await conn.fetchrow(q.GENERATION_OF_DB)  # first: versions read after it are at least as new
    assigned = await conn.fetch(q.ASSIGNMENTS, ids, first, last)
    dated = await route_versions(conn, gen["db"], {r["route_id"] for r in assigned}, first, last)
    for r in assigned:
        span = clip(r["valid_from"], r["valid_to"], r["lo"], r["hi"])  # the days this version of it applies
        if span is None:
            continue
        for route, lo, hi in dated.get(r["route_id"], ()):
            both = clip(span[0], span[1], lo, hi)  # ... and that version of the route
            if both is not None:
                by_id[r["vehicle_id"]].assignments.append(Assignment(route, *both, frozenset(r["weekdays"])))
    zones = [
        SpeedZone(z["limit_kmh"], z["geometry"], True, z["name"], z["lo"], last_day(z["hi"]))
        for z in await conn.fetch(q.ZONES, first, last)
    ]
    networks, named = await inforce.in_force(conn)
    return Context(vehicles, zones, gen["n"], networks, named)


DatedRoutes = dict[int, list[tuple[Route, date | None, date | None]]]


async def route_versions(conn: Conn, db: str, ids: set[int], first: date, last: date) -> DatedRoutes:
    """Each route's versions in force on some day of first..last, with their first and exclusive last day."""
    rows = await conn.fetch(q.ROUTE_VERSIONS, sorted(ids), first, last)
    decoded = await routes(conn, db, {r["version"]: r["txid"] for r in rows})
    out: DatedRoutes = {}
    for r in rows:
        out.setdefault(r["route_id"], []).append((decoded[r["version"]], r["lo"], r["hi"]))
    return out


# Decoded route versions, kept between requests: a fleet's lines are megabytes of JSON that a report answered
# from rollups would otherwise fetch and decode every time. A version never changes once committed (only
# its superseded_at does), so (database, id, txid) is a key that needs no invalidation (txid: ids restart
# after a TRUNCATE ... RESTART IDENTITY, transaction ids do not); the cache is only bounded.
_cache: dict[tuple[str, int, int], Route] = {}
CACHE_MAX = 4096


def decode(r: Mapping[str, Any]) -> Route:
    """A row of queries.ROUTE_DETAILS → the Route version it is."""
    lon, lat = _line(r["geometry"])
    points = tuple(
        Point(s["name"], s["kind"], s["lat"], s["lon"], s["seq"], s["scheduled_time"], r["id"]) for s in r["stops"]
    )
    declared = r["declared_km"]
    planned = float(declared) if declared is not None else r["length_m"] / 1000
    return Route(
        r["id"], r["code"], r["name"], lon, lat, r["speed_limit_kmh"], r["deviation_tolerance_m"], points,
        planned_km=planned, contract_id=r["contract_id"], declared_km=declared, length_m=r["length_m"],
        version=r["version"],
    )  # fmt: skip


async def routes(conn: Conn, db: str, versions: dict[int, int]) -> dict[int, Route]:
    """The route versions `versions` (id → txid) of database `db` by version id, from the cache or the database."""
    missing = sorted(v for v, tx in versions.items() if (db, v, tx) not in _cache)
    if missing:
        if len(_cache) + len(missing) > CACHE_MAX:
            _cache.clear()
            missing = sorted(versions)
        for r in await conn.fetch(q.ROUTE_DETAILS, missing):
            _cache[(db, r["version"], r["txid"])] = decode(r)
    return {v: _cache[(db, v, tx)] for v, tx in versions.items() if (db, v, tx) in _cache}


def require_some(vehicles: Sequence[Vehicle], sel: Selection) -> None:
    """A route or contractor selection that names nothing the caller may see is NotFound, not an empty report."""
    if not vehicles and sel.route_id is not None:
        raise NotFound(f"route_id: no route {sel.route_id} with vehicles assigned in the period", "route_id")
