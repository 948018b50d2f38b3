"""HTTP edge of the Traccar gateway: `POST/GET /api/v1/traccar/positions`, one forwarded position a request.

It takes the path every fix takes (ingest.service → validate → the group-commit writer), with the same
overload answers (503 + Retry-After before the body is read while the writer is backlogged; the ingest budget
per tracker), so a fix is stored once on (vehicle, fix time) whatever Traccar resends, and 2xx comes only
after commit. Traccar counts any 2xx as delivered and, with `forward.retry.enable`, retries anything else.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable
from typing import Any, TypeVar

from fastapi import Request
from fastapi.responses import Response
from starlette.routing import Route

from telemetria import metrics
from telemetria.db import DB_ERRORS, is_unavailable
from telemetria.fix import DecodeError
from telemetria.http import HttpError, bearer_token, error_response, json_response, read_body, unavailable
from telemetria.ingest.api import _ingest, _shed_if_backlogged, admit
from telemetria.ingest.inflight import Hold, InflightBudget
from telemetria.ingest.writer import Unstorable
from telemetria.traccar.auth import Gateway, GatewayAuth, NotAllowed
from telemetria.traccar.decode import Forwarded, decode_json, decode_url

T = TypeVar("T")
PATH = "/api/v1/traccar/positions"
MAX_BODY_BYTES = 64 * 1024  # one position with its device: 1-3 KiB, Teltonika's many io attributes included
SHARE_WAIT_S = 10.0  # a burst of one tracker's stored positions waits this long for its share of the budget
_UNAUTHORIZED = {"WWW-Authenticate": 'Bearer realm="traccar gateways"'}


async def positions(request: Request) -> Response:
    try:
        response = json_response(await _positions(request))
    except HttpError as e:
        response = error_response(e)
    metrics.observe_request("traccar", response.status_code)
    return response


async def _positions(request: Request) -> dict[str, Any]:
    settings = request.app.state.settings
    auth: GatewayAuth = request.app.state.gateway_auth
    _shed_if_backlogged(request)
    token = bearer_token(request)
    if token is None:
        raise HttpError(401, "Authorization: Bearer <gateway token> required (Traccar: forward.header)", _UNAUTHORIZED)
    gateway = await _looked_up(auth.by_token(token))
    if gateway is None:
        raise HttpError(401, "unknown or inactive gateway token", _UNAUTHORIZED)
    body = b""
    if request.method == "POST":
        body = await read_body(request, min(MAX_BODY_BYTES, settings.max_body_bytes))
    try:
        # A GET, or a POST without a body, is the URL mode: everything is in the query string.
        forwarded = decode_json(body) if body.strip() else decode_url(request.query_params)
    except DecodeError as e:
        raise HttpError(400, str(e), field=str(e).partition(":")[0]) from None
    tracker_id = await _tracker(auth, gateway, forwarded)
    with await _admit(request, tracker_id, len(body)):
        try:
            result = await _ingest(request.app.state.ingest, tracker_id, [forwarded.fix], "traccar")
        except Unstorable as e:
            raise HttpError(422, f"the database refused this position, nothing stored: {e}") from None
    if result.tracker_inactive:
        raise HttpError(403, "device.uniqueId: the tracker is inactive", field="device.uniqueId")
    if result.rejected:
        raise HttpError(422, result.rejected[0].error, field=result.rejected[0].reason)
    if result.duplicates:
        return {"stored": 0, "duplicate": True}
    return {"stored": result.accepted}


async def _looked_up(lookup: Awaitable[T]) -> T:
    """A credential lookup; 503 + Retry-After while the database is unavailable (as ingest.api's)."""
    try:
        return await lookup
    except DB_ERRORS as e:
        if is_unavailable(e):
            raise unavailable(f"database unavailable, retry later ({type(e).__name__})") from None
        raise


async def _admit(request: Request, tracker_id: int, nbytes: int) -> Hold:
    """The tracker's claim on the ingest budget, waiting up to SHARE_WAIT_S while only its own share is full.

    A tracker that comes back into coverage uploads its memory (Art. 15 §3) and Traccar forwards each of those
    positions at once, without waiting for the previous answer and, by default, without retrying: a 503 for
    the 9th concurrent position of one tracker would lose it. So a gateway's request queues briefly behind the
    same tracker's; a full process budget is still answered 503 at once.
    """
    budget: InflightBudget = request.app.state.ingest_budget
    deadline = time.monotonic() + SHARE_WAIT_S
    # Polled: the budget is a plain counter shared with the other ingest routes, and has no waiters to wake.
    while budget.held_by(tracker_id)[1] >= budget.share_requests and time.monotonic() < deadline:  # noqa: ASYNC110
        await asyncio.sleep(0.01)
    return admit(request, tracker_id, nbytes)


async def _tracker(auth: GatewayAuth, gateway: Gateway, forwarded: Forwarded) -> int:
    try:
        tracker_id = await _looked_up(auth.tracker(gateway, forwarded.unique_id, forwarded.fix.ts))
    except NotAllowed:
        raise HttpError(
            403,
            "device.uniqueId: this gateway speaks for its contractor's trackers only, and this tracker was not in "
            "one of its vehicles at position.fixTime",
            field="device.uniqueId",
        ) from None
    if tracker_id is None:
        # The id is not repeated back: answers end up in Traccar's and proxies' logs.
        raise HttpError(
            404,
            "device.uniqueId: no registered, active tracker has this unique id (register it with `telemetria "
            "tracker add --unique-id ...`, the same id as in Traccar)",
            field="device.uniqueId",
        )
    return tracker_id


ROUTES = [Route(PATH, positions, methods=["GET", "POST"])]

_RESPONSES = {
    "200": {
        "description": 'committed: `{"stored": 1}`, or `{"stored": 0, "duplicate": true}` for a position '
        "already stored (same tracker's vehicle, same fix time)"
    },
    "400": {"description": "not Traccar's body: the field at fault is named (`field`)"},
    "401": {"description": "no, unknown or inactive gateway token"},
    "403": {"description": "inactive tracker, or outside the gateway's contractor's fleet at the fix time"},
    "404": {"description": "unknown `device.uniqueId`"},
    "413": {"description": "body over 64 KiB"},
    "422": {"description": "a position that cannot be stored (e.g. fix time in the future, tracker not installed)"},
    "503": {"description": "database unavailable or overloaded; nothing acknowledged; retry after Retry-After"},
}
_URL_REQUIRED = ("uniqueId", "fixTime", "latitude", "longitude")
_OPERATION = {
    "tags": ["ingest"],
    "summary": "Traccar's position forwarding (forward.type=json body, or forward.type=url query string)",
    "security": [{"gatewayToken": []}],
    "responses": _RESPONSES,
}
OPENAPI_PATHS: dict[str, Any] = {
    PATH: {
        "post": {
            **_OPERATION,
            "operationId": "traccar_position_json",
            "requestBody": {
                "required": True,
                "content": {
                    "application/json": {
                        "schema": {
                            "type": "object",
                            "required": ["position", "device"],
                            "properties": {
                                "position": {
                                    "type": "object",
                                    "required": ["fixTime", "latitude", "longitude"],
                                    "description": "Traccar's Position: speed in knots, fixTime ISO 8601",
                                },
                                "device": {
                                    "type": "object",
                                    "required": ["uniqueId"],
                                    "description": "Traccar's Device: uniqueId is the tracker's unique id here",
                                },
                            },
                        }
                    }
                },
            },
        },
        "get": {
            **_OPERATION,
            "operationId": "traccar_position_url",
            "parameters": [
                {"name": n, "in": "query", "required": n in _URL_REQUIRED, "schema": {"type": "string"}}
                for n in (*_URL_REQUIRED, "speed", "course", "altitude", "accuracy", "valid", "protocol", "attributes")
            ],
        },
    }
}
OPENAPI_SECURITY = {"gatewayToken": {"type": "http", "scheme": "bearer", "description": "Traccar gateway token"}}
