"""One socket write per answer (telemetria/onewrite.py), through a real uvicorn server on a local socket.

Every write that reaches the transport is counted: a fixed-length answer is one write with uvicorn's
bytes; a stream, a HEAD, an answer without a body, a `Connection: close` answer and pipelined requests
come out as uvicorn sends them.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from telemetria.onewrite import OneWriteHttpTools
from telemetria.serve import uvicorn_config


async def _answer(request: Request) -> Response:
    await request.body()
    return Response(b'{"accepted":1}', media_type="application/json")


async def _empty(request: Request) -> Response:
    return Response(status_code=204)


async def _closing(request: Request) -> Response:
    return Response(b"bye", headers={"Connection": "close"})


async def _stream(request: Request) -> StreamingResponse:
    async def parts() -> AsyncIterator[bytes]:
        yield b"one,"
        await asyncio.sleep(0.01)
        yield b"two"

    return StreamingResponse(parts(), media_type="text/plain")


APP = Starlette(
    routes=[
        Route("/a", _answer, methods=["POST", "GET", "HEAD"]),
        Route("/empty", _empty),
        Route("/close", _closing),
        Route("/s", _stream),
    ]
)


def counting(protocol: type[HttpToolsProtocol], writes: list[bytes]) -> type[HttpToolsProtocol]:
    class Counting(protocol):  # type: ignore[valid-type,misc]
        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            real_write = transport.write

            def write(data: Any) -> None:
                writes.append(bytes(data))
                real_write(data)

            transport.write = write  # type: ignore[method-assign]
            super().connection_made(transport)

    return Counting


async def talk(protocol: type[HttpToolsProtocol], requests: list[bytes]) -> tuple[list[bytes], bytes]:
    """Send `requests` on one connection (all at once: pipelined); the writes counted and every byte read."""
    writes: list[bytes] = []
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(APP, http=counting(protocol, writes), log_config=None, lifespan="off")
    server = uvicorn.Server(config)
    task = asyncio.create_task(server.serve(sockets=[sock]))
    for _ in range(500):  # until it listens (5 s at most)
        if server.started:
            break
        await asyncio.sleep(0.01)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(b"".join(requests))
        got = await asyncio.wait_for(reader.read(), timeout=5)  # the last request closes the connection
        writer.close()
    finally:
        server.should_exit = True
        await task
    return writes, got


POST = b"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}"
HEAD = b"HEAD /a HTTP/1.1\r\nHost: x\r\n\r\n"
EMPTY = b"GET /empty HTTP/1.1\r\nHost: x\r\n\r\n"
STREAM = b"GET /s HTTP/1.1\r\nHost: x\r\n\r\n"
CLOSE = b"GET /close HTTP/1.1\r\nHost: x\r\n\r\n"


async def test_the_served_protocol_is_the_one_write_protocol() -> None:
    assert uvicorn_config(Starlette(), log_config=None).http is OneWriteHttpTools


async def test_a_small_answer_is_one_write_of_the_same_bytes() -> None:
    ours, got = await talk(OneWriteHttpTools, [POST, POST, CLOSE])
    theirs, expected = await talk(HttpToolsProtocol, [POST, POST, CLOSE])
    assert len(theirs) == 6 and len(ours) == 3  # head and body: two writes each with uvicorn's, one with ours
    assert ours[0].startswith(b"HTTP/1.1 200 OK\r\n") and ours[0].endswith(b'\r\n\r\n{"accepted":1}')
    assert _without_dates(got) == _without_dates(expected) and got.endswith(b"bye")


@pytest.mark.parametrize("request_", [HEAD, EMPTY, STREAM], ids=["head", "no-body", "stream"])
async def test_other_answers_come_out_as_uvicorn_sends_them(request_: bytes) -> None:
    ours, got = await talk(OneWriteHttpTools, [request_, CLOSE])
    _, expected = await talk(HttpToolsProtocol, [request_, CLOSE])
    assert _without_dates(got) == _without_dates(expected)
    assert b"".join(ours) == got
    if request_ is STREAM:
        head = ours[0]
        assert head.endswith(b"\r\n\r\n") and b"transfer-encoding: chunked" in head  # the head left before the parts


def _without_dates(raw: bytes) -> bytes:
    return b"\r\n".join(line for line in raw.split(b"\r\n") if not line.startswith(b"date: "))


def test_the_copied_on_headers_complete_is_still_uvicorns() -> None:
    # OneWriteHttpTools.on_headers_complete is uvicorn 0.55's with the cycle class changed. When uvicorn's own
    # changes (an upgrade), this fails: copy the new one over and keep `OneWriteCycle` in it.
    source = inspect.getsource(HttpToolsProtocol.on_headers_complete)
    assert hashlib.sha256(source.encode()).hexdigest()[:16] == "1ea8589acfad92d8"
