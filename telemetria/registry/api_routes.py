"""Registry API: routes (itinerários) with stops, which vehicle runs them when, and speed zones."""

from __future__ import annotations

from datetime import date
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from pydantic import ValidationError
from pydantic.json_schema import models_json_schema
from starlette.datastructures import UploadFile

from telemetria import db
from telemetria.audit.log import record
from telemetria.auth.guard import client_ip
from telemetria.auth.roles import Principal
from telemetria.deps import Conn
from telemetria.geo.geodesic import line_length_m
from telemetria.http import HttpError, json_response, read_body
from telemetria.ids import IdPath, IdQuery
from telemetria.paging import Page, page
from telemetria.registry import queries as q
from telemetria.registry import routefile, routes, schemas, store, versions, writes
from telemetria.registry.errors import RegistryError
from telemetria.registry.routing import READ, WRITE, sent

router = APIRouter(prefix="/api/v1", tags=["registry"])
MAX_ROUTE_FILE_BYTES = 10 * 1024 * 1024

# The JSON body is read by hand (the same endpoint takes uploads), so its schema is published here.
OPENAPI_COMPONENTS: dict[str, Any] = models_json_schema(
    [(schemas.RouteIn, "validation")], ref_template="#/components/schemas/{model}"
)[1]["$defs"]
ROUTE_BODY_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": schemas.RouteIn.model_json_schema(ref_template="#/components/schemas/{model}")
            },
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["file", "code"],
                    "properties": {
                        "file": {"type": "string", "format": "binary", "description": "GeoJSON, GPX or KML"},
                        **{k: {"type": "string"} for k in schemas.RouteFields.model_fields},
                    },
                }
            },
        },
    }
}


def _validated(model: type[schemas.Strict], data: Any) -> Any:
    try:
        return model.model_validate_json(data) if isinstance(data, bytes) else model.model_validate(data)
    except ValidationError as e:
        raise RequestValidationError(e.errors()) from None


def _stops(stops: list[schemas.RouteStopIn]) -> list[routefile.StopIn]:
    for n, s in enumerate(stops):
        _guard(lambda s=s, n=n: routefile.check_point(s.lon, s.lat, f"stops[{n}]", f"stop {n} ({s.name})"))
    return [routefile.StopIn(s.name, s.lat, s.lon, s.kind, s.scheduled_time) for s in stops]


def _guard(fn: Any) -> Any:
    try:
        return fn()
    except routefile.RouteFileError as e:
        raise RegistryError(str(e), e.field) from None


async def _from_upload(request: Request) -> tuple[schemas.RouteFields, routefile.RouteGeometry]:
    form = await request.form(max_files=1, max_fields=20)
    upload = form.get("file")
    if not isinstance(upload, UploadFile):
        raise RegistryError("file: attach the route as a GeoJSON, GPX or KML file in the field 'file'", "file")
    body = await upload.read(MAX_ROUTE_FILE_BYTES + 1)
    if len(body) > MAX_ROUTE_FILE_BYTES:
        raise HttpError(413, f"file: larger than {MAX_ROUTE_FILE_BYTES} bytes")
    fmt = _guard(lambda: routefile.detect_format(upload.filename, upload.content_type, body))
    parsed: routefile.RouteGeometry = _guard(lambda: routefile.parse_route_file(body, fmt))
    fields = {k: v for k, v in form.items() if k != "file" and isinstance(v, str) and v.strip()}
    fields.setdefault("name", parsed.name or fields.get("code", ""))
    return _validated(schemas.RouteFields, fields), parsed


async def _from_json(request: Request) -> tuple[schemas.RouteFields, routefile.RouteGeometry]:
    body: schemas.RouteIn = _validated(schemas.RouteIn, await read_body(request, MAX_ROUTE_FILE_BYTES))
    coords = _guard(lambda: routefile.check_line(routefile.line_from_geojson(body.geometry)))
    length = line_length_m([c[0] for c in coords], [c[1] for c in coords])
    return body, routefile.RouteGeometry(coords, length, _stops(body.stops), body.name)


@router.get("/routes")
async def list_routes(
    school_year: int | None = None,
    active: bool | None = None,
    code: str | None = None,
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    answer = await store.many(conn, q.LIST_ROUTES, pg, who.scope, None, school_year, active, code)
    return json_response({**answer, "items": [routes.shown(r) for r in answer["items"]]})


@router.get("/routes/{route_id}")
async def get_route(route_id: IdPath, who: Principal = READ, *, conn: Conn) -> Response:
    """The route with its traced line (GeoJSON), stops, measured length and declared km."""
    return json_response(await routes.route(conn, who.scope, route_id))


@router.post("/routes", status_code=201, openapi_extra=ROUTE_BODY_DOC)
async def add_route(request: Request, who: Principal = WRITE) -> Response:
    """Register a route from JSON (GeoJSON LineString + stops) or from an uploaded GeoJSON, GPX or KML file."""
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype == "multipart/form-data":
        fields, geo = await _from_upload(request)
    elif ctype in ("application/json", ""):
        fields, geo = await _from_json(request)
    else:
        raise HttpError(415, f"Content-Type: {ctype} not accepted; send application/json or multipart/form-data")
    # Not a Conn dependency: the body (an upload of up to a few MB) is read and parsed first, holding no connection.
    values = fields.model_dump(include=set(schemas.RouteFields.model_fields) - {"effective_from"})
    async with (
        request.app.state.pool.acquire() as conn,
        versions.dated(
            conn, who.username, fields.effective_from, max_ahead_days=request.app.state.settings.registry_max_ahead_days
        ),
    ):
        rid = await routes.create_route(conn, values, geo)
        await record(
            conn, "registry.route.create", who, client_ip(request), f"route:{rid}",
            {"points": len(geo.coords), "stops": len(geo.stops), "source": ctype or "application/json"},
        )  # fmt: skip
        return json_response(await routes.route(conn, who.scope, rid), 201)


@router.patch("/routes/{route_id}")
async def change_route(
    route_id: IdPath,
    body: schemas.RoutePatch,
    request: Request,
    who: Principal = WRITE,
    *,
    conn: Conn,
) -> Response:
    """Change the route's fields; the change is a version valid from `effective_from` (default: today)."""
    if body.contract_id is not None:  # the contract must be of the contractor whose vehicles run the route
        await routes.check_route_contract(conn, route_id, body.contract_id)
    fields = sent(body)
    fields.pop("effective_from", None)
    if "declared_km" in fields:
        fields["declared_km"] = routes.exact_km(fields["declared_km"])
    async with versions.dated(
        conn,
        who.username,
        body.effective_from,
        "route",
        route_id,
        max_ahead_days=request.app.state.settings.registry_max_ahead_days,
    ):
        return await writes.update(
            conn, request, who, "route", q.PATCH_ROUTE, q.ROUTE_COLUMNS, route_id, fields,
            lambda conn, rid: routes.route(conn, who.scope, rid),
        )  # fmt: skip


@router.put("/routes/{route_id}/stops")
async def replace_stops(
    route_id: IdPath, body: schemas.StopsIn, request: Request, who: Principal = WRITE, *, conn: Conn
) -> Response:
    """Replace the route's ordered stops (boarding points, school, garage) and their scheduled times, as a version
    valid from `effective_from` (default: today)."""
    stops = _stops(body.stops)
    await routes.route(conn, who.scope, route_id)
    async with versions.dated(
        conn,
        who.username,
        body.effective_from,
        "route",
        route_id,
        max_ahead_days=request.app.state.settings.registry_max_ahead_days,
    ):
        await routes.replace_stops(conn, route_id, stops)
        await record(conn, "registry.route.stops", who, client_ip(request), f"route:{route_id}", {"stops": len(stops)})
        return json_response(await routes.route(conn, who.scope, route_id))


# --- route assignments ------------------------------------------------------------------------


@router.get("/route-assignments")
async def list_route_assignments(
    route_id: IdQuery = None,
    vehicle_id: IdQuery = None,
    on: date | None = None,
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    """Assignments, optionally only those in force on date `on` (its weekday included)."""
    answer = await store.many(conn, q.LIST_ROUTE_ASSIGNMENTS, pg, who.scope, None, route_id, vehicle_id, on)
    return json_response(answer)


@router.post("/route-assignments", status_code=201)
async def add_route_assignment(
    body: schemas.RouteAssignmentIn, request: Request, who: Principal = WRITE, *, conn: Conn
) -> Response:
    """The vehicle runs the route on the given ISO weekdays from valid_from to valid_to (inclusive)."""
    if body.valid_to is not None and body.valid_to < body.valid_from:
        raise RegistryError("valid_to: must not be before valid_from", "valid_to")
    weekdays = sorted(set(body.weekdays))
    async with versions.dated(
        conn, who.username, body.effective_from, max_ahead_days=request.app.state.settings.registry_max_ahead_days
    ):
        await routes.check_assignment_contract(conn, body.route_id, body.vehicle_id)
        aid = await store.guarded(
            lambda: conn.fetchval(
                q.INSERT_ROUTE_ASSIGNMENT, body.route_id, body.vehicle_id, body.valid_from, body.valid_to, weekdays
            )
        )
        await record(
            conn, "registry.route_assignment.create", who, client_ip(request), f"route_assignment:{aid}",
            {"route_id": body.route_id, "vehicle_id": body.vehicle_id},
        )  # fmt: skip
        row = await store.one(conn, q.GET_ROUTE_ASSIGNMENT, "route assignment", aid, who.scope, aid, None, None, None)
    return json_response(row, 201)


@router.delete("/route-assignments/{assignment_id}")
async def delete_route_assignment(
    assignment_id: IdPath,
    request: Request,
    effective_from: date | None = Query(None, description="first day without it (default: today)"),
    who: Principal = WRITE,
    *,
    conn: Conn,
) -> Response:
    """End the assignment: not in force from `effective_from` on; the days before keep it (its history stays)."""
    async with versions.dated(
        conn,
        who.username,
        effective_from,
        "route_assignment",
        assignment_id,
        max_ahead_days=request.app.state.settings.registry_max_ahead_days,
    ):
        return await writes.delete(conn, request, who, "route_assignment", q.DELETE_ROUTE_ASSIGNMENT, assignment_id)


# --- speed zones ------------------------------------------------------------------------------


@router.get("/speed-zones")
async def list_speed_zones(
    active: bool | None = None,
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    return json_response(await store.many(conn, q.LIST_ZONES, pg, None, active))


async def _zone(conn: db.Conn, zid: int) -> dict[str, Any]:
    row = await store.one(conn, q.GET_ZONE, "speed zone", zid, zid, None)
    return {**row, "scheduled_change": await store.scheduled(conn, "speed_zone", zid)}


@router.post("/speed-zones", status_code=201)
async def add_speed_zone(
    body: schemas.SpeedZoneIn, request: Request, who: Principal = WRITE, *, conn: Conn
) -> Response:
    """A polygon with its own speed limit (a school zone, a paved highway stretch)."""
    polygon = _guard(lambda: routefile.check_polygon(body.geometry))
    values = {"name": body.name, "limit_kmh": body.limit_kmh, "geometry": polygon.__geo_interface__, "active": True}
    async with versions.dated(
        conn, who.username, body.effective_from, max_ahead_days=request.app.state.settings.registry_max_ahead_days
    ):
        return await writes.create(conn, request, who, "speed_zone", q.INSERT_ZONE, q.ZONE_COLUMNS, values, _zone)


@router.patch("/speed-zones/{zone_id}")
async def change_speed_zone(
    zone_id: IdPath,
    body: schemas.SpeedZonePatch,
    request: Request,
    who: Principal = WRITE,
    *,
    conn: Conn,
) -> Response:
    """Change the zone's name, limit or active flag, as a version valid from `effective_from` (default: today)."""
    fields = sent(body)
    fields.pop("effective_from", None)
    async with versions.dated(
        conn,
        who.username,
        body.effective_from,
        "speed_zone",
        zone_id,
        max_ahead_days=request.app.state.settings.registry_max_ahead_days,
    ):
        return await writes.update(
            conn, request, who, "speed_zone", q.PATCH_ZONE, q.ZONE_COLUMNS, zone_id, fields, _zone
        )
