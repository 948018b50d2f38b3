"""Routes (itinerários): storing a checked line with its stops, and reading one back with its measures."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal
from typing import Any

import orjson

from telemetria.db import Conn
from telemetria.registry import queries as q
from telemetria.registry import store
from telemetria.registry.errors import Conflict, NotFound
from telemetria.registry.routefile import RouteGeometry, StopIn


async def create_route(conn: Conn, fields: dict[str, Any], geo: RouteGeometry) -> int:
    """Insert a route (code, name, school_year, ... from `fields`) with its checked line and stops; its id."""
    values = {
        **fields,
        "declared_km": exact_km(fields.get("declared_km")),
        "geometry": {"type": "LineString", "coordinates": [list(c) for c in geo.coords]},
        "length_m": geo.length_m,
        "active": True,
    }
    rid = await store.insert(conn, q.INSERT_ROUTE, q.ROUTE_COLUMNS, values)
    await replace_stops(conn, rid, geo.stops)
    return rid


METRE = Decimal("0.001")


def exact_km(km: Any) -> Decimal | None:
    """km as the numeric(9, 3) column stores it: the decimal the client wrote, to the metre (never through float)."""
    return None if km is None else Decimal(str(km)).quantize(METRE, rounding=ROUND_HALF_EVEN)


def km_json(km: Any) -> orjson.Fragment | None:
    """km as a JSON number with exactly 3 decimals (as contracts/money.py writes money), never through float."""
    exact = exact_km(km)
    return None if exact is None else orjson.Fragment(f"{exact:f}".encode())


def shown(row: dict[str, Any]) -> dict[str, Any]:
    """A route row as the API writes it: declared_km as a JSON number with 3 decimals."""
    return {**row, "declared_km": km_json(row["declared_km"])} if "declared_km" in row else row


async def replace_stops(conn: Conn, rid: int, stops: list[StopIn]) -> None:
    await conn.execute(q.DELETE_ROUTE_STOPS, rid)
    if stops:
        await conn.execute(
            q.INSERT_ROUTE_STOPS, rid, list(range(1, len(stops) + 1)), [s.name for s in stops],
            [s.lat for s in stops], [s.lon for s in stops], [s.kind for s in stops],
            [s.scheduled_time for s in stops],
        )  # fmt: skip


async def route(conn: Conn, scope: int | None, rid: int) -> dict[str, Any]:
    """The route with its line (GeoJSON), stops, and its traced length next to the declared km."""
    row = await store.one(conn, q.GET_ROUTE, "route", rid, scope, rid, None, None, None)
    row["geometry"] = await conn.fetchval(q.ROUTE_GEOMETRY, rid)
    row["stops"] = [dict(s) for s in await conn.fetch(q.ROUTE_STOPS, rid)]
    declared = row["declared_km"]
    row["length_km"] = round(row["length_m"] / 1000, 3)
    row["declared_vs_traced_pct"] = (
        round(100 * (float(declared) * 1000 - row["length_m"]) / row["length_m"], 2) if declared else None
    )
    row["scheduled_change"] = await store.scheduled(conn, "route", rid)
    return shown(row)


async def check_route_contract(conn: Conn, route_id: int, contract_id: int) -> None:
    """A route's contract must be its contractor's: refuse one whose route runs with another contractor's vehicles."""
    if await conn.fetchval(q.CONTRACT_CONTRACTOR, contract_id) is None:
        raise NotFound(f"contract_id: no contract {contract_id}", "contract_id")
    others = [r["name"] for r in await conn.fetch(q.ROUTE_OTHER_CONTRACTORS, route_id, contract_id)]
    if others:
        raise Conflict(
            f"contract_id: contract {contract_id} is not of the contractor running this route ({', '.join(others)})",
            "contract_id",
        )


async def check_assignment_contract(conn: Conn, route_id: int, vehicle_id: int) -> None:
    """A route with a contract runs only with vehicles of that contract's contractor."""
    row = await conn.fetchrow(q.VEHICLE_OUTSIDE_ROUTE_CONTRACT, route_id, vehicle_id)
    if row is not None:
        raise Conflict(
            f"vehicle_id: the route is paid by contract {row['number']} of {row['name']}, another contractor",
            "vehicle_id",
        )
