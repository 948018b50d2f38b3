"""Request bodies larger than a limit get 413 on every route, before the application reads them (ASGI middleware).

A declared Content-Length over the limit is answered at once, without reading the body; a body without one
(chunked) is counted as it streams in, and the request is cut off at the first chunk past the limit. Either way
the client gets `413 {"detail": ...}` naming the limit, whatever the route would have answered.
"""

from __future__ import annotations

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyTooLarge(Exception):
    """Raised into the application's read of the body once it has passed the limit."""


class BodyLimitMiddleware:
    """Refuse request bodies over `limit_bytes` with 413 before the routes (or their parsers) see them."""

    def __init__(self, app: ASGIApp, limit_bytes: int) -> None:
        self.app = app
        self.limit = limit_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = _content_length(scope["headers"])
        if declared is not None:
            if declared > self.limit:
                await self._refuse(send, f"request body of {declared} bytes exceeds the limit of {self.limit} bytes")
                return
            # The HTTP server delivers no more than the declared length: nothing to count. Passing the
            # request through untouched keeps this layer off the hot path of single-fix posts (~6 %).
            await self.app(scope, receive, send)
            return
        received = 0
        cut = started = False

        async def counted() -> Message:
            nonlocal received, cut
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    cut = True
                    raise BodyTooLarge(self.limit)
            return message

        async def unless_cut(message: Message) -> None:
            nonlocal started
            if cut and not started:
                return  # the route's own answer to its failed read (a 400, a 500) gives way to the 413
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, counted, unless_cut)
        except Exception:
            if not cut or started:
                raise
        if cut and not started:
            await self._refuse(send, f"request body exceeds the limit of {self.limit} bytes")

    async def _refuse(self, send: Send, detail: str) -> None:
        body = orjson.dumps({"detail": detail, "limit_bytes": self.limit})
        headers = [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode()),
            (b"connection", b"close"),  # the rest of the body is not wanted: no keep-alive after it
        ]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _content_length(headers: list[tuple[bytes, bytes]]) -> int | None:
    values = [v for k, v in headers if k == b"content-length"]
    # Several or malformed values are the server's to refuse; the body is still counted as it streams.
    return int(values[0]) if len(values) == 1 and values[0].isdigit() else None
