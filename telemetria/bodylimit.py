"""Request bodies bounded in size and in time on every route, before the application reads them (ASGI middleware).

Size: a declared Content-Length over the limit is answered 413 at once, without reading the body; a body without
one (chunked) is counted as it streams in, and the request is cut off at the first chunk past the limit.

Time: the body must arrive within `timeout_s` of the request's headers, plus one second for every `min_rate`
bytes received so far (the rule of Apache's mod_reqtimeout, `body=20,MinRate=500`). A client that stalls, or
drips a byte now and then, is answered 408 once its deadline passes, so whatever the route holds for it (a claim
on the ingest budget) is released; one that uploads a large body slowly but steadily is never cut off. Once the
body is complete there is no deadline: waiting for a disconnect while a response streams is not a body read.

Either way the client gets `{"detail": ...}` naming the limit, whatever the route would have answered. Any answer
given while the body is still unread closes the connection: the rest of the body is not wanted, and a client that
keeps dripping it would otherwise keep the connection open for as long as it likes.
"""

from __future__ import annotations

import asyncio

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyCut(Exception):
    """Raised into the application's read of the body once the body broke a limit; the middleware answers."""

    status = 400

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


class BodyTooLarge(BodyCut):
    status = 413


class BodyTooSlow(BodyCut):
    status = 408


class BodyLimitMiddleware:
    """Refuse request bodies over `limit_bytes` with 413 before the routes (or their parsers) see them, and
    bodies that do not arrive in time (`timeout_s`, extended by `min_rate` bytes/s received) with 408.

    Deadlines are kept by one sweep over the bodies still arriving, a few times a second while there are any,
    not by a timer per read: a timer armed and cancelled on every request would cost single-fix ingest
    about a sixth of its throughput. A request past its deadline has its read cancelled and answered 408.
    """

    def __init__(self, app: ASGIApp, limit_bytes: int, timeout_s: float = 20.0, min_rate: float = 500.0) -> None:
        self.app = app
        self.limit = limit_bytes
        self.timeout_s = timeout_s
        self.min_rate = min_rate
        self.sweep_s = min(0.5, timeout_s / 4)  # how late past its deadline a body may be cut off
        self._arriving: set[_Guarded] = set()
        self._sweeper: asyncio.TimerHandle | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared, framed = _framing(scope["headers"])
        if declared is not None and declared > self.limit:
            detail = f"request body of {declared} bytes exceeds the limit of {self.limit} bytes"
            await _refuse(send, 413, {"detail": detail, "limit_bytes": self.limit})
            return
        if declared == 0 or not framed:
            await self.app(scope, receive, send)  # no body to wait for (a GET): nothing to guard
            return
        guard = _Guarded(self, declared, receive, send)
        self._arriving.add(guard)
        if self._sweeper is None:
            self._sweeper = guard.loop.call_later(self.sweep_s, self._sweep)
        try:
            await guard.run(scope)
        finally:
            self._arriving.discard(guard)

    def deadline(self, guard: _Guarded) -> float:
        """When this body must have arrived (loop time): the timeout, plus 1 s per `min_rate` bytes received."""
        return guard.start + self.timeout_s + (guard.received / self.min_rate if self.min_rate > 0 else 0.0)

    def _sweep(self) -> None:
        self._sweeper = None
        if not self._arriving:
            return  # armed again by the next request with a body
        now = next(iter(self._arriving)).loop.time()
        # Only a read that is waiting is cut: a route busy before its read (checking a token) is not the
        # client's delay, and a body already buffered by the server is read at once when the route gets to it.
        for guard in [g for g in self._arriving if g.reader is not None and now >= self.deadline(g)]:
            self._arriving.discard(guard)
            guard.expire(self.deadline_detail(guard.received))
        if self._arriving:
            self._sweeper = asyncio.get_running_loop().call_later(self.sweep_s, self._sweep)

    def deadline_detail(self, received: int) -> str:
        rate = f", plus 1 s per {self.min_rate:g} bytes received" if self.min_rate > 0 else ""
        return f"request body not received in time: {self.timeout_s:g} s{rate} ({received} bytes arrived)"


class _Guarded:
    """One request whose body is read under the limits; `cut` is the limit it broke, if any."""

    __slots__ = (
        "cut",
        "declared",
        "done",
        "limits",
        "loop",
        "reader",
        "receive",
        "received",
        "send",
        "start",
        "started",
    )

    def __init__(self, limits: BodyLimitMiddleware, declared: int | None, receive: Receive, send: Send) -> None:
        self.limits = limits
        self.declared = declared
        self.receive = receive
        self.send = send
        self.loop = asyncio.get_running_loop()
        self.start = self.loop.time()
        self.received = 0
        self.done = False  # the whole body (or the disconnect) has been received
        self.cut: BodyCut | None = None
        self.reader: asyncio.Task[object] | None = None  # the task waiting for the next chunk, while one is
        self.started = False

    async def run(self, scope: Scope) -> None:
        try:
            await self.limits.app(scope, self.guarded_receive, self.guarded_send)
        except Exception:
            if self.cut is None or self.started:
                raise
        cut = self.cut
        if cut is not None and not self.started:
            extra = {"limit_bytes": self.limits.limit} if isinstance(cut, BodyTooLarge) else {}
            await _refuse(self.send, cut.status, {"detail": cut.detail, **extra})

    def expire(self, detail: str) -> None:
        """The deadline passed while waiting for the body: the read in progress fails with 408."""
        self.cut = BodyTooSlow(detail)
        if self.reader is not None:
            self.reader.cancel()

    async def guarded_receive(self) -> Message:
        if self.cut is not None:
            raise self.cut
        if self.done:
            return await self.receive()  # after the body: waiting for a disconnect is not a body read
        self.reader = reader = asyncio.current_task()
        try:
            message = await self.receive()
        except asyncio.CancelledError:
            if self.cut is None or reader is None:
                raise
            reader.uncancel()  # the cancellation was the deadline's: it ends as a 408, not as a cancelled task
            raise self.cut from None
        finally:
            self.reader = None
        if message["type"] != "http.request":
            self._finished()  # http.disconnect: the body will never complete
            return message
        self.received += len(message.get("body", b""))
        if self.declared is None and self.received > self.limits.limit:
            self.cut = BodyTooLarge(f"request body exceeds the limit of {self.limits.limit} bytes")
            raise self.cut
        if not message.get("more_body", False):
            self._finished()
        return message

    def _finished(self) -> None:
        self.done = True
        self.limits._arriving.discard(self)

    async def guarded_send(self, message: Message) -> None:
        if self.cut is not None and not self.started:
            return  # the route's own answer to its failed read (a 400, a 500) gives way to the 413 or 408
        if message["type"] == "http.response.start":
            self.started = True
            if not self.done:
                headers = list(message.get("headers", []))
                if not any(k.lower() == b"connection" for k, _ in headers):
                    message = {**message, "headers": [*headers, (b"connection", b"close")]}
        await self.send(message)


async def _refuse(send: Send, status: int, content: dict[str, object]) -> None:
    body = orjson.dumps(content)
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"connection", b"close"),  # the rest of the body is not wanted: no keep-alive after it
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _framing(headers: list[tuple[bytes, bytes]]) -> tuple[int | None, bool]:
    """The declared body length (None if not one clean value), and whether the request has a body at all
    (a Content-Length or Transfer-Encoding header; without either, HTTP/1.1 says there is none)."""
    values = [v for k, v in headers if k == b"content-length"]
    framed = bool(values) or any(k == b"transfer-encoding" for k, _ in headers)
    # Several or malformed values are the server's to refuse; the body is still counted as it streams.
    declared = int(values[0]) if len(values) == 1 and values[0].isdigit() else None
    return declared, framed
