"""Traccar gateways: one bearer token per Traccar server, created once and shown once (as trackers' tokens)."""

from __future__ import annotations

from typing import Any

from telemetria.db import Conn
from telemetria.registry.errors import Conflict, NotFound, RegistryError
from telemetria.registry.fleet import new_token, token_hash
from telemetria.traccar import queries as q


async def add_gateway(conn: Conn, name: str, contractor_id: int | None = None) -> dict[str, Any]:
    """Register a Traccar server; its token is in the answer and nowhere else (only its sha256 is kept)."""
    name = name.strip()
    if not name or len(name) > 100:
        raise RegistryError("name: 1 to 100 characters", "name")
    if contractor_id is not None and not await conn.fetchval(q.CONTRACTOR_EXISTS, contractor_id):
        raise NotFound(f"contractor: no contractor {contractor_id}", "contractor_id")
    if await conn.fetchval(q.GATEWAY_NAME_TAKEN, name):
        raise Conflict(f"name: a gateway named {name!r} exists", "name")
    token = new_token()
    row = dict(await conn.fetchrow(q.INSERT_GATEWAY, name, contractor_id, token_hash(token)))
    scope = f"the trackers of contractor {contractor_id}" if contractor_id is not None else "every registered tracker"
    return {**row, "token": token, "speaks_for": scope}


async def list_gateways(conn: Conn) -> list[dict[str, Any]]:
    return [dict(r) for r in await conn.fetch(q.LIST_GATEWAYS)]


async def set_active(conn: Conn, gateway_id: int, active: bool) -> None:
    if await conn.fetchval(q.SET_GATEWAY_ACTIVE, gateway_id, active) is None:
        raise NotFound(f"no gateway {gateway_id}")


async def rotate_token(conn: Conn, gateway_id: int) -> str:
    token = new_token()
    if await conn.fetchval(q.SET_GATEWAY_TOKEN, gateway_id, token_hash(token)) is None:
        raise NotFound(f"no gateway {gateway_id}")
    return token
