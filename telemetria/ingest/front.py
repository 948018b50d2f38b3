"""The ingest routes served in front of FastAPI: a tracker's post goes straight to its handler.

A single fix is a small request, and FastAPI's stack (its error and exception middleware, the exit
stack, the router's matching, Starlette's request/response wrapper) and our four middleware, each
wrapping `send` once more, cost about as much per request as the handler's own Python. So the app's
`__call__` hands `POST /api/v1/fixes` and `GET|HEAD|POST /osmand` to `IngestFront`, which gives
them every guarantee the other routes get, with one wrapper of `send` instead of a dozen frames:

- the client address and scheme a trusted proxy forwarded (`forwarded.from_proxy`);
- the request id (X-Request-Id, echoed; the log lines' tag) and the access log, when it is on;
- the body's size and time limits: the same `BodyLimitMiddleware` (413, 408, `Connection: close`);
- the security headers (`nosniff`; `no-store` under /api/) on every answer;
- an exception answered as the app's handlers answer it: a database error by `on_db_error` (400 for
  a value the database refused, 503 while it is down), a client gone mid-body with one log line,
  anything else a plain 500, the exception raised on to the server, which logs it (as FastAPI's
  ServerErrorMiddleware does).

Any other method on these paths, and every other path, goes through FastAPI as before, so the
405s, the OpenAPI document and the routes' listing are unchanged.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping, Sequence

from starlette.requests import ClientDisconnect, Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from telemetria.bodylimit import BodyLimitMiddleware
from telemetria.db import DB_ERRORS
from telemetria.forwarded import Network, from_proxy
from telemetria.headers import with_security_headers
from telemetria.logs import incoming_request_id, log_access, note_disconnect, request_id, request_id_header

Endpoint = Callable[[Request], Awaitable[Response]]
Limits = Callable[[ASGIApp], BodyLimitMiddleware]


class IngestFront:
    """Serve the ingest routes' own methods straight from the ASGI scope; `handles(scope)` says which."""

    def __init__(
        self,
        routes: Mapping[str, Route],
        limits: Limits,
        on_db_error: Callable[[Request, Exception], Awaitable[Response]],
        *,
        trusted: Sequence[Network] = (),
        access: bool = False,
    ) -> None:
        self.endpoints: dict[str, Endpoint] = {path: route.endpoint for path, route in routes.items()}
        self.methods = {path: frozenset(route.methods or ()) for path, route in routes.items()}
        self.on_db_error = on_db_error
        self.trusted = tuple(trusted)
        self.access = access
        self.limited = limits(self._endpoint)

    def handles(self, scope: Scope) -> bool:
        methods = self.methods.get(scope["path"])
        return methods is not None and scope["method"] in methods

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.trusted:
            scope = from_proxy(scope, self.trusted)
        rid = incoming_request_id(scope["headers"])
        token = request_id.set(rid)
        start = time.perf_counter()
        path, rid_header, status = scope["path"], request_id_header(rid), 0

        async def send_with_headers(message: Message) -> None:
            # Every answer, the body limit's own refusals (413, 408) included, as the middleware give them.
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = with_security_headers(message.get("headers", ()), path)
                headers.append(rid_header)
                message["headers"] = headers
            await send(message)

        try:
            await self.limited(scope, receive, send_with_headers)
        except ClientDisconnect:
            note_disconnect(scope)
        finally:
            if self.access:
                log_access(scope, rid, status, start)
            request_id.reset(token)

    async def _endpoint(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive, send)
        try:
            try:
                response = await self.endpoints[scope["path"]](request)
            except DB_ERRORS as e:  # as the app's exception handlers answer them (one may re-raise)
                response = await self.on_db_error(request, e)
        except ClientDisconnect:
            raise
        except Exception:
            # As FastAPI's ServerErrorMiddleware: a plain 500, then the exception goes on to the server's log.
            await _answer(send, PlainTextResponse("Internal Server Error", status_code=500))
            raise
        await _answer(send, response)


async def _answer(send: Send, response: Response) -> None:
    start: Message = {"type": "http.response.start", "status": response.status_code, "headers": response.raw_headers}
    await send(start)
    await send({"type": "http.response.body", "body": response.body})
