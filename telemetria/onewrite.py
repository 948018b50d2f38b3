"""One socket write per answer: uvicorn's httptools protocol with the status line, headers and body sent together.

uvicorn writes an answer's status line and headers when the app sends `http.response.start` and the
body when it sends `http.response.body`: two writes, so two send() system calls (and, on a busy
connection, two TCP segments) for a small answer such as a tracker's single-fix 200. Here the
protocol's transport holds a write back until the next write or the end of the event loop's current
turn, whichever comes first: an answer whose body follows its headers at once (every answer of
ours but a stream) goes out in one `writelines` call, one writev(); the headers of a streamed answer
whose body is not ready yet leave at the end of the turn, as good as at once. Nothing else changes:
the bytes and their order are the same, and closing (or `write_eof`) sends what is held first.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HeldWrites:
    """A transport that holds one write back until the next write, a close, or the end of the loop's turn."""

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | bytearray | memoryview | None = None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        held = self._held
        if held is None:
            self._held = data
            self._loop.call_soon(self.flush)
        else:
            self._held = None
            self._transport.writelines((held, data))

    def writelines(self, lines: Any) -> None:
        self.flush()
        self._transport.writelines(lines)

    def flush(self) -> None:
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def abort(self) -> None:
        self._held = None
        self._transport.abort()

    def __getattr__(self, name: str) -> Any:  # everything else is the transport's own
        return getattr(self._transport, name)


class OneWriteHttpTools(HttpToolsProtocol):
    """uvicorn's httptools protocol over `HeldWrites` (serve.uvicorn_config passes it as `http`)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(HeldWrites(transport, self.loop))  # type: ignore[arg-type]
