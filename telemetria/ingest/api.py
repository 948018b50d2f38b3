"""HTTP edge of ingest: our JSON API and the OsmAnd protocol. Status codes and auth live here."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from typing import Any

from fastapi import Request
from fastapi.responses import Response
from starlette.routing import Route

from telemetria import metrics
from telemetria.db import DB_ERRORS, is_unavailable
from telemetria.fix import DecodeError, Rejected
from telemetria.http import (
    HttpError,
    bearer_token,
    declared_length,
    error_response,
    json_response,
    overloaded,
    read_body,
    unavailable,
)
from telemetria.ingest.decode import BodyError, decode_body
from telemetria.ingest.inflight import Hold, InflightBudget
from telemetria.ingest.osmand import decode_osmand
from telemetria.ingest.rows import IngestResult
from telemetria.ingest.service import IngestService
from telemetria.ingest.writer import Overloaded, Unavailable, Unstorable

log = logging.getLogger(__name__)

_UNAUTHORIZED = {"WWW-Authenticate": 'Bearer realm="trackers"'}
_JSON_TYPES = frozenset({"application/json", "text/json"})

FIX_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["ts", "lat", "lon"],
    "properties": {
        "ts": {
            "oneOf": [{"type": "string", "format": "date-time"}, {"type": "number"}],
            "description": "fix time: RFC 3339 with offset, or epoch seconds or milliseconds",
        },
        "lat": {"type": "number", "minimum": -90, "maximum": 90},
        "lon": {"type": "number", "minimum": -180, "maximum": 180},
        "speed_kmh": {"type": "number", "minimum": 0},
        "heading_deg": {"type": "number"},
        "altitude_m": {"type": "number"},
        "accuracy_m": {"type": "number", "minimum": 0},
        "hdop": {"type": "number", "minimum": 0},
        "satellites": {"type": "integer", "minimum": 0},
        "ignition": {"type": "boolean"},
        "odometer_m": {"type": "number", "minimum": 0},
        "driver_id": {"type": "string"},
        "valid": {"type": "boolean"},
        "attributes": {"type": "object"},
    },
}
_FIXES_OPERATION = {
    "tags": ["ingest"],
    "summary": "Post one fix or a batch of fixes",
    "operationId": "post_fixes",
    "security": [{"trackerToken": []}],
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {
                "schema": {
                    "oneOf": [
                        FIX_SCHEMA,
                        {
                            "type": "object",
                            "required": ["fixes"],
                            "properties": {"fixes": {"type": "array", "maxItems": 10000, "items": FIX_SCHEMA}},
                        },
                    ]
                }
            }
        },
    },
    "responses": {
        "200": {"description": "the accepted fixes are committed; rejected items are listed by index"},
        "401": {"description": "unknown or inactive tracker token"},
        "408": {"description": "the body did not arrive in time; the connection is closed"},
        "413": {"description": "body or batch too large"},
        "503": {
            "description": "database unavailable or overloaded; nothing acknowledged; retry after Retry-After "
            "(safe: a fix already stored is answered as a duplicate)"
        },
    },
}


_OSMAND_OPERATION = {
    "tags": ["ingest"],
    "summary": "OsmAnd protocol (Traccar Client and devices): query string, form, JSON object or array",
    "parameters": [
        {"name": n, "in": "query", "required": False, "schema": {"type": "string"}}
        for n in ("id", "deviceid", "lat", "lon", "timestamp", "speed", "bearing", "altitude", "accuracy", "hdop")
    ],
    "responses": {
        "200": {"description": "stored, or a position that failed validation (logged, not stored)"},
        "400": {"description": "not decodable: no device id or no coordinates"},
        "403": {"description": "unknown or inactive device id"},
        "408": {"description": "the body did not arrive in time; the connection is closed"},
        "413": {"description": "body over 16 KiB (TELEMETRIA_OSMAND_MAX_BODY_BYTES), or too many positions"},
        "503": {"description": "database unavailable or overloaded; nothing acknowledged; retry after Retry-After"},
    },
}

# The ingest endpoints are plain Starlette routes: the hot path skips FastAPI's dependency
# machinery (it does its own parsing and validation), so their OpenAPI entries are written here.
OPENAPI_PATHS: dict[str, Any] = {
    "/api/v1/fixes": {"post": _FIXES_OPERATION},
    "/osmand": {
        "get": {**_OSMAND_OPERATION, "operationId": "osmand_get"},
        "post": {**_OSMAND_OPERATION, "operationId": "osmand_post"},
    },
}
OPENAPI_SECURITY = {"trackerToken": {"type": "http", "scheme": "bearer", "description": "tracker token"}}


async def post_fixes(request: Request) -> Response:
    try:
        response = json_response((await _post_fixes(request)).as_json())
    except HttpError as e:
        response = error_response(e)
    metrics.observe_request("json", response.status_code)
    return response


async def _post_fixes(request: Request) -> IngestResult:
    settings = request.app.state.settings
    _shed_if_backlogged(request)
    # Who is posting comes first: a request from nobody in particular never claims any of the budget.
    token = bearer_token(request)
    if token is None:
        raise HttpError(401, "Authorization: Bearer <tracker token> required", _UNAUTHORIZED)
    tracker_id = await _authenticate(request.app.state.tracker_auth.by_token(token))
    if tracker_id is None:
        raise HttpError(401, "unknown or inactive tracker token", _UNAUTHORIZED)
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype and not _is_json(ctype):  # no Content-Type at all is read as JSON, as docs/trackers.md says
        raise HttpError(415, f"Content-Type must be application/json, not {ctype[:100]}")
    with admit(request, tracker_id, declared_length(request, settings.max_body_bytes)) as hold:
        body = await read_body(request, settings.max_body_bytes, hold.cover)
        try:
            items, batch = decode_body(body, settings.max_batch_fixes)
        except BodyError as e:
            raise HttpError(e.status, str(e)) from None
        try:
            result = await _ingest(request.app.state.ingest, tracker_id, items, "json")
        except Unstorable as e:
            raise HttpError(422, f"the database refused these fixes, nothing stored: {e}") from None
    if result.tracker_inactive:
        raise HttpError(401, "tracker is inactive", _UNAUTHORIZED)
    if not batch and result.rejected:
        raise HttpError(422, result.rejected[0].error, **result.as_json())
    return result


def _is_json(media_type: str) -> bool:
    """application/json, its legacy alias text/json, or a structured `…+json` type (RFC 6839)."""
    return media_type in _JSON_TYPES or (media_type.startswith("application/") and media_type.endswith("+json"))


async def osmand(request: Request) -> Response:
    try:
        response = await _osmand(request)
    except HttpError as e:
        response = error_response(e)
    metrics.observe_request("osmand", response.status_code)
    return response


async def _osmand(request: Request) -> Response:
    settings = request.app.state.settings
    service: IngestService = request.app.state.ingest
    _shed_if_backlogged(request)
    # The device id is usually in the body, so the body is read before anyone is known: it claims nothing,
    # is capped at what OsmAnd positions need (a few KiB) and, like every body, has a deadline.
    body = await read_body(request, settings.osmand_body_limit)
    try:
        decoded = decode_osmand(
            request.method, request.query_params, request.headers.get("content-type"), body,
            now=service.now(), naive_tz=settings.osmand_timezone,
        )  # fmt: skip
    except DecodeError as e:
        raise HttpError(400, str(e)) from None
    if len(decoded.items) > settings.max_batch_fixes:
        raise HttpError(413, f"{len(decoded.items)} positions, at most {settings.max_batch_fixes} per request")
    tracker_id = await _authenticate(request.app.state.tracker_auth.by_unique_id(decoded.unique_id))
    if tracker_id is None:
        # The id is not repeated: error messages end up in device and proxy logs.
        raise HttpError(403, "device id: not a registered, active tracker (check the id set in the device)")
    with admit(request, tracker_id, len(body)):
        try:
            result = await _ingest(service, tracker_id, decoded.items, "osmand")
        except Unstorable as e:
            result = IngestResult(rejected=[Rejected(i, str(e)) for i in range(len(decoded.items))])
    if result.tracker_inactive:
        raise HttpError(403, "tracker is inactive")
    # A client that got 4xx for a bad position would retry it forever and block its queue,
    # so positions that cannot be stored are answered 200, logged and dropped.
    for r in result.rejected:
        log.info("osmand position rejected (tracker %d, item %d): %s", tracker_id, r.index, r.error)
    return Response(status_code=200)


ROUTES = [
    Route("/api/v1/fixes", post_fixes, methods=["POST"]),
    Route("/osmand", osmand, methods=["GET", "POST"]),
]


def _shed_if_backlogged(request: Request) -> None:
    """503 at once while the writer's queue is full: a body read and decoded now would be refused anyway."""
    waiting = request.app.state.ingest.waiting_rows
    if waiting >= request.app.state.settings.writer_max_pending_rows:
        raise overloaded(f"{waiting} fixes waiting for the database")


def admit(request: Request, tracker_id: int, nbytes: int) -> Hold:
    """An identified tracker's claim on this process's ingest budget, within its share; 503 at once if it
    does not fit (taken before a declared body is read, so a body that would not fit is never read)."""
    budget: InflightBudget = request.app.state.ingest_budget
    return budget.hold(tracker_id, nbytes)


async def _authenticate(lookup: Awaitable[int | None]) -> int | None:
    try:
        return await lookup
    except DB_ERRORS as e:
        if is_unavailable(e):
            raise unavailable(f"database unavailable, retry later ({type(e).__name__})") from None
        raise


async def _ingest(service: IngestService, tracker_id: int, items: Any, protocol: str) -> IngestResult:
    try:
        result = await service.ingest(tracker_id, items)
    except Unstorable as e:
        metrics.observe_ingest(
            protocol, len(items), IngestResult(rejected=[Rejected(0, f"unstorable: {e}")] * len(items))
        )
        raise
    except Overloaded as e:
        raise unavailable(f"overloaded, retry later: {e}") from None
    except Unavailable as e:
        raise unavailable(
            f"database unavailable, not acknowledged, retry later (safe: stored fixes count as duplicates): {e}"
        ) from None
    metrics.observe_ingest(protocol, len(items), result)
    return result
