"""One socket write per answer: uvicorn's httptools protocol with a small answer's head and body sent together.

uvicorn writes an answer's status line and headers when the app sends `http.response.start` and its
body when the app sends `http.response.body`: two `transport.write` calls, so two send() system calls
(and on a busy connection two TCP segments) for a tracker's single-fix 200. Here the request's cycle
keeps the head it built and writes it with the body in one call, when the answer has a Content-Length
and its whole body comes in one message (every answer of ours but a stream or a file). A chunked
answer's head leaves at once, as before; so does a head whose body comes in parts (the first part
carries it). Nothing else changes: the bytes and their order are uvicorn's (its `send` builds the head),
and the end of an answer written at once is uvicorn's own end of an answer (keep-alive, the close after
`Connection: close`, the next pipelined request started).

A first attempt (commit 0ca6b86, reverted in 4da8cb4) wrapped the transport: each write was held
until the next one or the end of the event loop's turn, which cost a `call_soon` (a handle and one more
callback of the loop) per answer and a Python `__getattr__` on every other use of the transport; the
bare no-op served about 12 % fewer requests with it. Here no callback is scheduled and the transport
is not wrapped: the held head is one attribute of the cycle, and the price is one Python frame per
message, which `python -m bench.onewrite` weighs against the send() saved.
"""

from __future__ import annotations

from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle


class _Keep:
    """Stands in for the transport while uvicorn builds a head: keeps the bytes instead of sending them."""

    __slots__ = ("data",)

    def __init__(self) -> None:
        self.data = b""

    def write(self, data: bytes) -> None:
        self.data = data


class OneWriteCycle(RequestResponseCycle):
    """uvicorn's request/response cycle, holding a fixed-length answer's head until its body."""

    _head: bytes | None = None

    async def send(self, message: Any) -> None:
        if not self.response_started:
            transport = self.transport
            keep = self.transport = _Keep()  # type: ignore[assignment]
            try:
                await super().send(message)
            finally:
                self.transport = transport
            if keep.data:
                if self.chunked_encoding is False and self.expected_content_length:
                    self._head = keep.data  # the body follows
                else:
                    transport.write(keep.data)  # a stream, or an answer without a body (HEAD, 204, 304, empty)
            return
        head = self._head
        if head is not None:
            self._head = None
            if self.flow.write_paused and not self.disconnected:
                await self.flow.drain()  # as uvicorn's `send` waits before each write
            if message["type"] == "http.response.body" and not self.disconnected:
                body = message.get("body", b"")
                if (
                    not message.get("more_body", False)
                    and len(body) == self.expected_content_length
                    and self.scope["method"] != "HEAD"
                ):
                    # The whole body at once: one write of head and body, then the end of the answer as
                    # uvicorn's own `send` ends it (tests/unit/test_onewrite.py compares the two servers).
                    self.transport.write(head + body)
                    self.expected_content_length = 0
                    self.response_complete = True
                    self.message_event.set()
                    if not self.keep_alive:
                        self.transport.close()
                    self.on_response()
                    return
                else:
                    self.transport.write(head)
        await super().send(message)


class OneWriteHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol whose requests run in `OneWriteCycle` (serve.uvicorn_config passes it as `http`)."""

    def _start_asgi_task(self, cycle: RequestResponseCycle, app: Any) -> None:
        cycle.__class__ = OneWriteCycle  # the same object and state; only `send` differs
        super()._start_asgi_task(cycle, app)
