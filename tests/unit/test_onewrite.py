"""One socket write per answer (telemetria/onewrite.py): held writes, same bytes, same order.

The real server is exercised too: uvicorn with `serve.uvicorn_config`'s protocol on a local socket,
answering through the transport wrapper, every answer's writes counted at the real transport.
"""

from __future__ import annotations

import asyncio
import socket
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route

from telemetria.onewrite import HeldWrites, OneWriteHttpTools
from telemetria.serve import uvicorn_config


class Recording:
    """A transport that records what reaches it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []
        self.closing = False

    def write(self, data: bytes) -> None:
        self.calls.append(("write", bytes(data)))

    def writelines(self, lines: Any) -> None:
        self.calls.append(("writelines", b"".join(lines)))

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.calls.append(("close", b""))
        self.closing = True

    def get_extra_info(self, name: str) -> str:
        return f"extra {name}"


async def test_headers_and_body_of_one_turn_go_out_in_one_call() -> None:
    raw = Recording()
    t = HeldWrites(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
    t.write(b"HTTP/1.1 200 OK\r\n\r\n")
    t.write(b"body")
    assert raw.calls == [("writelines", b"HTTP/1.1 200 OK\r\n\r\nbody")]
    await asyncio.sleep(0)  # the end of the turn finds nothing held
    assert len(raw.calls) == 1
    assert t.get_extra_info("peername") == "extra peername"


async def test_a_lone_write_leaves_at_the_end_of_the_turn_and_close_sends_what_is_held() -> None:
    raw = Recording()
    t = HeldWrites(raw, asyncio.get_running_loop())  # type: ignore[arg-type]
    t.write(b"headers of a stream")
    assert raw.calls == []
    await asyncio.sleep(0)
    assert raw.calls == [("write", b"headers of a stream")]
    t.write(b"last words")
    t.close()
    assert raw.calls[1:] == [("write", b"last words"), ("close", b"")]


async def _answer(request: Request) -> Response:
    return Response(b'{"accepted":1}', media_type="application/json")


async def _stream(request: Request) -> StreamingResponse:
    async def parts() -> Any:
        yield b"one,"
        await asyncio.sleep(0.01)
        yield b"two"

    return StreamingResponse(parts(), media_type="text/plain")


async def test_the_served_protocol_writes_each_small_answer_once() -> None:
    writes: list[int] = []

    class Counting(OneWriteHttpTools):
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            real_write, real_writelines = transport.write, transport.writelines
            inside = [False]  # asyncio's writelines joins and calls write: one send, counted once

            def write(data: Any) -> None:
                writes.extend([] if inside[0] else [1])
                real_write(data)

            def writelines(lines: Any) -> None:
                writes.append(1)
                inside[0] = True
                try:
                    real_writelines(lines)
                finally:
                    inside[0] = False

            transport.write = write  # type: ignore[method-assign,assignment]
            transport.writelines = writelines  # type: ignore[method-assign,assignment]
            super().connection_made(transport)

    assert uvicorn_config(Starlette(), log_config=None).http is OneWriteHttpTools
    app = Starlette(routes=[Route("/a", _answer, methods=["POST"]), Route("/s", _stream)])
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(app, http=Counting, log_config=None, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    for _ in range(500):  # until it listens (5 s at most)
        if server.started:
            break
        await asyncio.sleep(0.01)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(3):
            writer.write(b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
            head = await reader.readuntil(b"\r\n\r\n")
            assert head.startswith(b"HTTP/1.1 200 OK\r\n") and b"content-length: 14\r\n" in head
            assert await reader.readexactly(14) == b'{"accepted":1}'
        assert len(writes) == 3
        writer.write(b"GET /s HTTP/1.1\r\nHost: x\r\n\r\n")
        head = await reader.readuntil(b"\r\n\r\n")
        assert b"transfer-encoding: chunked" in head
        body = await reader.readuntil(b"0\r\n\r\n")
        assert body == b"4\r\none,\r\n3\r\ntwo\r\n0\r\n\r\n"
        writer.close()
    finally:
        server.should_exit = True
        await task
