"""Registry API: contractors, vehicles and trackers (`/api/v1/...`)."""

from __future__ import annotations

from datetime import UTC, datetime

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from telemetria import db
from telemetria.audit.log import record
from telemetria.auth.guard import client_ip
from telemetria.auth.roles import Principal
from telemetria.deps import Conn
from telemetria.http import json_response
from telemetria.ids import IdPath, IdQuery
from telemetria.paging import Page, page
from telemetria.registry import fleet, schemas, store, versions, writes
from telemetria.registry import queries as q
from telemetria.registry.errors import NotFound, RegistryError
from telemetria.registry.routing import READ, WRITE, sent

router = APIRouter(prefix="/api/v1", tags=["registry"])


# --- contractors ------------------------------------------------------------------------------


@router.get("/contractors")
async def list_contractors(
    search: str | None = Query(None, max_length=100),
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    return json_response(await store.many(conn, q.LIST_CONTRACTORS, pg, who.scope, None, search))


@router.get("/contractors/{contractor_id}")
async def get_contractor(contractor_id: IdPath, who: Principal = READ, *, conn: Conn) -> Response:
    return json_response(await _contractor(conn, who, contractor_id))


async def _contractor(conn: db.Conn, who: Principal, cid: int) -> dict[str, object]:
    return await store.one(conn, q.GET_CONTRACTOR, "contractor", cid, who.scope, cid, None)


@router.post("/contractors", status_code=201)
async def add_contractor(
    body: schemas.ContractorIn, request: Request, who: Principal = WRITE, *, conn: Conn
) -> Response:
    return await writes.create(
        conn, request, who, "contractor", q.INSERT_CONTRACTOR, q.CONTRACTOR_COLUMNS, body.model_dump(),
        lambda conn, cid: _contractor(conn, who, cid),
    )  # fmt: skip


@router.patch("/contractors/{contractor_id}")
async def change_contractor(
    contractor_id: IdPath,
    body: schemas.ContractorPatch,
    request: Request,
    who: Principal = WRITE,
    *,
    conn: Conn,
) -> Response:
    return await writes.update(
        conn, request, who, "contractor", q.PATCH_CONTRACTOR, q.CONTRACTOR_COLUMNS, contractor_id, sent(body),
        lambda conn, cid: _contractor(conn, who, cid),
    )  # fmt: skip


# --- vehicles ---------------------------------------------------------------------------------


@router.get("/vehicles")
async def list_vehicles(
    plate: str | None = Query(None, max_length=10, description="find a vehicle by plate (ABC1D23 or ABC-1234)"),
    contractor_id: IdQuery = None,
    active: bool | None = None,
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    p = fleet.normalize_plate(plate) if plate else None
    rows = await store.many(conn, q.LIST_VEHICLES_PAGE, pg, who.scope, None, p, contractor_id, active)
    return json_response(rows)


async def _vehicle(conn: db.Conn, who: Principal, vid: int) -> dict[str, object]:
    row = await store.one(conn, q.GET_VEHICLE, "vehicle", vid, who.scope, vid, None, None, None)
    return {**row, "scheduled_change": await store.scheduled(conn, "vehicle", vid)}


@router.get("/vehicles/{vehicle_id}")
async def get_vehicle(vehicle_id: IdPath, who: Principal = READ, *, conn: Conn) -> Response:
    return json_response(await _vehicle(conn, who, vehicle_id))


@router.post("/vehicles", status_code=201)
async def add_vehicle(body: schemas.VehicleIn, request: Request, who: Principal = WRITE, *, conn: Conn) -> Response:
    """Register a vehicle; its speed limit is a version valid from `effective_from` (default: today)."""
    async with versions.dated(
        conn, who.username, body.effective_from, max_ahead_days=request.app.state.settings.registry_max_ahead_days
    ):
        return await writes.create(
            conn, request, who, "vehicle", q.INSERT_VEHICLE_FULL, q.VEHICLE_COLUMNS,
            body.model_dump(exclude={"effective_from"}), lambda conn, vid: _vehicle(conn, who, vid),
        )  # fmt: skip


@router.patch("/vehicles/{vehicle_id}")
async def change_vehicle(
    vehicle_id: IdPath,
    body: schemas.VehiclePatch,
    request: Request,
    who: Principal = WRITE,
    *,
    conn: Conn,
) -> Response:
    """Change the vehicle; a new speed limit is a version valid from `effective_from` (default: today)."""
    fields = sent(body)
    fields.pop("effective_from", None)
    if body.effective_from is not None and "speed_limit_kmh" not in fields:
        raise RegistryError(
            "effective_from: only with speed_limit_kmh (the vehicle's versioned field)", "effective_from"
        )
    if (
        body.effective_from is not None
        and body.effective_from > versions.local_today()
        and set(fields) - {"speed_limit_kmh"}
    ):
        # The current tables show what is in force today (migrations/0033): only a versioned field waits for its day.
        raise RegistryError(
            "effective_from: a date ahead applies only to speed_limit_kmh; "
            f"{', '.join(sorted(set(fields) - {'speed_limit_kmh'}))}: only from today (send without effective_from)",
            "effective_from",
            422,
        )
    versioned = "speed_limit_kmh" in fields
    async with versions.dated(
        conn,
        who.username,
        body.effective_from,
        "vehicle" if versioned else None,
        vehicle_id,
        max_ahead_days=request.app.state.settings.registry_max_ahead_days,
    ):
        return await writes.update(
            conn, request, who, "vehicle", q.PATCH_VEHICLE, q.VEHICLE_COLUMNS, vehicle_id, fields,
            lambda conn, vid: _vehicle(conn, who, vid),
        )  # fmt: skip


# --- trackers ---------------------------------------------------------------------------------


@router.get("/trackers")
async def list_trackers(
    vehicle_id: IdQuery = None,
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    return json_response(await store.many(conn, q.LIST_TRACKERS_PAGE, pg, who.scope, None, vehicle_id))


async def _tracker(conn: db.Conn, who: Principal, tid: int) -> dict[str, object]:
    return await store.one(conn, q.GET_TRACKER, "tracker", tid, who.scope, tid, None)


async def _plate(conn: db.Conn, vehicle_id: IdPath) -> str:
    plate = await conn.fetchval(q.VEHICLE_PLATE, vehicle_id)
    if plate is None:
        raise RegistryError(f"vehicle_id: no vehicle {vehicle_id}", "vehicle_id")
    return str(plate)


async def _unique_id(conn: db.Conn, tracker_id: IdPath) -> str:
    uid = await conn.fetchval(q.TRACKER_UNIQUE_ID, tracker_id)
    if uid is None:
        raise NotFound(f"no tracker {tracker_id}")
    return str(uid)


@router.post("/trackers", status_code=201)
async def add_tracker(body: schemas.TrackerIn, request: Request, who: Principal = WRITE, *, conn: Conn) -> Response:
    """Register a tracker in a vehicle; the answer carries its bearer token, shown this once."""
    async with conn.transaction():
        t = await fleet.add_tracker(conn, body.unique_id, await _plate(conn, body.vehicle_id), body.since)
        await record(conn, "registry.tracker.create", who, client_ip(request), f"tracker:{t['id']}")
        return json_response({**await _tracker(conn, who, t["id"]), "token": t["token"]}, 201)


@router.post("/trackers/{tracker_id}/token")
async def rotate_tracker_token(tracker_id: IdPath, request: Request, who: Principal = WRITE, *, conn: Conn) -> Response:
    """A new token for the tracker (the old one stops working); shown this once."""
    async with conn.transaction():
        token = await fleet.rotate_token(conn, await _unique_id(conn, tracker_id))
        await record(conn, "registry.tracker.rotate_token", who, client_ip(request), f"tracker:{tracker_id}")
        return json_response({**await _tracker(conn, who, tracker_id), "token": token})


@router.post("/trackers/{tracker_id}/move")
async def move_tracker(
    tracker_id: IdPath,
    body: schemas.TrackerMove,
    request: Request,
    who: Principal = WRITE,
    *,
    conn: Conn,
) -> Response:
    """Install the tracker in another vehicle from `at` on; fixes already stored after `at` follow it."""
    at = body.at or datetime.now(UTC)
    uid = await _unique_id(conn, tracker_id)
    moved = await fleet.move_tracker(conn, uid, await _plate(conn, body.vehicle_id), at)
    await record(
        conn, "registry.tracker.move", who, client_ip(request), f"tracker:{tracker_id}",
        {"vehicle_id": body.vehicle_id, "at": at.isoformat()},
    )  # fmt: skip
    return json_response(moved.as_json())


@router.patch("/trackers/{tracker_id}")
async def change_tracker(
    tracker_id: IdPath,
    body: schemas.TrackerPatch,
    request: Request,
    who: Principal = WRITE,
    *,
    conn: Conn,
) -> Response:
    async with conn.transaction():
        await fleet.set_tracker_active(conn, await _unique_id(conn, tracker_id), body.active)
        await record(
            conn, "registry.tracker.update", who, client_ip(request), f"tracker:{tracker_id}", {"fields": ["active"]}
        )
        return json_response(await _tracker(conn, who, tracker_id))
