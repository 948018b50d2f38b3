"""Traccar gateways over HTTP (`/api/v1/traccar/gateways`): what `telemetria gateway` does, for the page.

Administrators only: a gateway's token may speak for every registered tracker, so it is a credential of the
installation, like a user account, not a registry record a servidor edits.
"""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from telemetria.audit.log import record
from telemetria.auth.guard import client_ip, require
from telemetria.auth.roles import Perm, Principal
from telemetria.deps import Conn
from telemetria.http import json_response
from telemetria.ids import Id, IdPath
from telemetria.paging import Page, page, split_total
from telemetria.registry.errors import NotFound
from telemetria.registry.schemas import Name
from telemetria.traccar import gateways
from telemetria.traccar import queries as q

router = APIRouter(prefix="/api/v1", tags=["traccar"])
ADMIN = Depends(require(Perm.MANAGE_USERS))


class GatewayIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: Name = Field(max_length=100, description="which Traccar server")
    contractor_id: Id | None = Field(default=None, description="speak only for this contractor's trackers")


class GatewayPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")
    active: bool


@router.get("/traccar/gateways")
async def list_gateways(pg: Page = Depends(page), who: Principal = ADMIN, *, conn: Conn) -> Response:
    """The Traccar servers allowed to forward positions (never their tokens)."""
    rows, total = split_total(await conn.fetch(q.LIST_GATEWAYS_PAGE, None, pg.limit, pg.offset))
    return json_response(pg.answer(rows, total))


@router.post("/traccar/gateways", status_code=201)
async def add_gateway(body: GatewayIn, request: Request, who: Principal = ADMIN, *, conn: Conn) -> Response:
    """Register a Traccar server; the answer carries its token, shown this once."""
    async with conn.transaction():
        row = await gateways.add_gateway(conn, body.name, body.contractor_id)
        await record(conn, "traccar.gateway.create", who, client_ip(request), f"gateway:{row['id']}")
    return json_response(row, 201)


@router.patch("/traccar/gateways/{gateway_id}")
async def change_gateway(
    gateway_id: IdPath, body: GatewayPatch, request: Request, who: Principal = ADMIN, *, conn: Conn
) -> Response:
    """Deactivate (or activate again) a gateway: it stops being accepted within about a second."""
    async with conn.transaction():
        await gateways.set_active(conn, gateway_id, body.active)
        action = "activate" if body.active else "deactivate"
        await record(conn, f"traccar.gateway.{action}", who, client_ip(request), f"gateway:{gateway_id}")
    return json_response(await _one(conn, gateway_id))


@router.post("/traccar/gateways/{gateway_id}/token")
async def rotate_gateway_token(gateway_id: IdPath, request: Request, who: Principal = ADMIN, *, conn: Conn) -> Response:
    """A new token for the gateway (the old one stops working); shown this once."""
    async with conn.transaction():
        token = await gateways.rotate_token(conn, gateway_id)
        await record(conn, "traccar.gateway.rotate", who, client_ip(request), f"gateway:{gateway_id}")
    return json_response({**await _one(conn, gateway_id), "token": token})


async def _one(conn: Conn, gateway_id: int) -> dict[str, object]:
    rows, _ = split_total(await conn.fetch(q.LIST_GATEWAYS_PAGE, gateway_id, 1, 0))
    if not rows:
        raise NotFound(f"no gateway {gateway_id}")
    return rows[0]
