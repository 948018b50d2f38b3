"""Registry API: drivers (condutores) and who drives which vehicle when (`/api/v1/...`)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from telemetria import db
from telemetria.audit.log import record
from telemetria.auth.guard import client_ip
from telemetria.auth.roles import Perm, Principal
from telemetria.deps import Conn
from telemetria.http import json_response
from telemetria.ids import IdPath, IdQuery
from telemetria.paging import Page, page
from telemetria.registry import queries as q
from telemetria.registry import schemas, store, writes
from telemetria.registry.errors import RegistryError
from telemetria.registry.routing import READ, WRITE, sent

router = APIRouter(prefix="/api/v1", tags=["registry"])


def _present(row: dict[str, object], who: Principal) -> dict[str, object]:
    """A driver as this principal may see it: the full CPF only with the personal-data permission."""
    if not who.can(Perm.READ_PERSONAL):
        row.pop("cpf", None)
    return row


async def _driver(conn: db.Conn, who: Principal, did: int) -> dict[str, object]:
    row = await store.one(conn, q.GET_DRIVER, "driver", did, who.scope, who.can(Perm.READ_PERSONAL), did, None, None)
    return _present(row, who)


@router.get("/drivers")
async def list_drivers(
    card_id: str | None = Query(None, max_length=64),
    active: bool | None = None,
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    answer = await store.many(conn, q.LIST_DRIVERS, pg, who.scope, who.can(Perm.READ_PERSONAL), None, card_id, active)
    answer["items"] = [_present(r, who) for r in answer["items"]]
    return json_response(answer)


@router.get("/drivers/{driver_id}")
async def get_driver(driver_id: IdPath, who: Principal = READ, *, conn: Conn) -> Response:
    return json_response(await _driver(conn, who, driver_id))


@router.post("/drivers", status_code=201)
async def add_driver(body: schemas.DriverIn, request: Request, who: Principal = WRITE, *, conn: Conn) -> Response:
    return await writes.create(
        conn, request, who, "driver", q.INSERT_DRIVER, q.DRIVER_COLUMNS, body.model_dump(),
        lambda conn, did: _driver(conn, who, did),
    )  # fmt: skip


@router.patch("/drivers/{driver_id}")
async def change_driver(
    driver_id: IdPath,
    body: schemas.DriverPatch,
    request: Request,
    who: Principal = WRITE,
    *,
    conn: Conn,
) -> Response:
    # The audit entry names the fields changed, never their values (CPF and name are personal data).
    return await writes.update(
        conn, request, who, "driver", q.PATCH_DRIVER, q.DRIVER_COLUMNS, driver_id, sent(body),
        lambda conn, did: _driver(conn, who, did),
    )  # fmt: skip


# --- driver assignments -----------------------------------------------------------------------


@router.get("/driver-assignments")
async def list_driver_assignments(
    vehicle_id: IdQuery = None,
    driver_id: IdQuery = None,
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    answer = await store.many(conn, q.LIST_DRIVER_ASSIGNMENTS, pg, who.scope, None, vehicle_id, driver_id)
    return json_response(answer)


@router.post("/driver-assignments", status_code=201)
async def add_driver_assignment(
    body: schemas.DriverAssignmentIn, request: Request, who: Principal = WRITE, *, conn: Conn
) -> Response:
    """The driver drives the vehicle over [valid_from, valid_to) (open ends: unbounded)."""
    try:
        schemas.window_ok(body.valid_from, body.valid_to)
    except ValueError as e:
        raise RegistryError(str(e), "valid_to") from None
    async with conn.transaction():
        aid = await store.guarded(
            lambda: conn.fetchval(
                q.INSERT_DRIVER_ASSIGNMENT, body.driver_id, body.vehicle_id, body.valid_from, body.valid_to
            )
        )
        await record(
            conn, "registry.driver_assignment.create", who, client_ip(request), f"driver_assignment:{aid}",
            {"driver_id": body.driver_id, "vehicle_id": body.vehicle_id},
        )  # fmt: skip
        row = await store.one(conn, q.GET_DRIVER_ASSIGNMENT, "driver assignment", aid, who.scope, aid, None, None)
    return json_response(row, 201)


@router.delete("/driver-assignments/{assignment_id}")
async def delete_driver_assignment(
    assignment_id: IdPath, request: Request, who: Principal = WRITE, *, conn: Conn
) -> Response:
    return await writes.delete(conn, request, who, "driver_assignment", q.DELETE_DRIVER_ASSIGNMENT, assignment_id)
