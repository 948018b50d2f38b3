"""Registry API: the history of an item's versions (`GET /api/v1/.../{id}/history`).

Each answer lists every version, superseded ones too (migrations/0011_registry_versions.sql); whoever may
read the item may read its history.
"""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import Response

from telemetria.auth.roles import Principal
from telemetria.deps import Conn
from telemetria.http import json_response
from telemetria.ids import IdPath
from telemetria.registry import queries as q
from telemetria.registry import routes, store, versions
from telemetria.registry.errors import NotFound
from telemetria.registry.routing import READ

router = APIRouter(prefix="/api/v1", tags=["registry"])


@router.get("/routes/{route_id}/history")
async def route_history(route_id: IdPath, who: Principal = READ, *, conn: Conn) -> Response:
    """Histórico do itinerário: cada versão (traçado, paradas, horários, km, limites), desde quando, por quem."""
    await routes.route(conn, who.scope, route_id)
    return json_response(await versions.history(conn, "route", route_id))


@router.get("/speed-zones/{zone_id}/history")
async def speed_zone_history(zone_id: IdPath, who: Principal = READ, *, conn: Conn) -> Response:
    """Histórico da zona de velocidade: cada versão (limite, polígono, ativa), desde quando, por quem."""
    await store.one(conn, q.GET_ZONE, "speed zone", zone_id, zone_id, None)
    return json_response(await versions.history(conn, "speed_zone", zone_id))


@router.get("/vehicles/{vehicle_id}/history")
async def vehicle_history(vehicle_id: IdPath, who: Principal = READ, *, conn: Conn) -> Response:
    """Histórico do limite de velocidade do veículo: cada versão, desde quando, por quem."""
    await store.one(conn, q.GET_VEHICLE, "vehicle", vehicle_id, who.scope, vehicle_id, None, None, None)
    return json_response(await versions.history(conn, "vehicle", vehicle_id))


@router.get("/route-assignments/{assignment_id}/history")
async def route_assignment_history(assignment_id: IdPath, who: Principal = READ, *, conn: Conn) -> Response:
    """Histórico da atribuição (também depois de excluída): cada versão, desde quando, por quem."""
    row = await conn.fetchrow(q.ASSIGNMENT_VEHICLE_EVER, assignment_id)
    if row is None or (who.scope is not None and row["contractor_id"] != who.scope):
        raise NotFound(f"no route assignment {assignment_id}")
    return json_response(await versions.history(conn, "route_assignment", assignment_id))
