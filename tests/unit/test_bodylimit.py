"""The request-body limits: 413 naming the size limit, on Content-Length and while streaming; 408 when a body does
not arrive in time; a tiny app and the real one."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import httpx
import orjson
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message

from telemetria.app import create_app
from telemetria.bodylimit import BodyLimitMiddleware
from telemetria.settings import Settings

LIMIT = 1000


def tiny_app(reads: list[int]) -> BodyLimitMiddleware:
    async def echo(request: Request) -> Response:
        body = await request.body()
        reads.append(len(body))
        return JSONResponse({"size": len(body)})

    async def swallow(request: Request) -> Response:
        try:  # a route that turns any failed read into its own answer
            await request.body()
        except Exception:
            return JSONResponse({"detail": "could not read"}, 400)
        return JSONResponse({})

    async def ignore(request: Request) -> Response:
        return JSONResponse({"read": False})

    routes = [Route(p, f, methods=["GET", "POST"]) for p, f in (("/echo", echo), ("/swallow", swallow), ("/", ignore))]
    return BodyLimitMiddleware(Starlette(routes=routes), LIMIT)


async def chunks(total: int, size: int = 100) -> AsyncIterator[bytes]:
    for start in range(0, total, size):
        yield b"x" * min(size, total - start)


async def post(app: object, path: str, **kwargs: object) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:  # type: ignore[arg-type]
        return await c.post(path, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("size", [0, 1, LIMIT])
async def test_bodies_up_to_the_limit_pass_through(size: int) -> None:
    reads: list[int] = []
    app = tiny_app(reads)
    assert (await post(app, "/echo", content=b"x" * size)).json() == {"size": size}
    assert (await post(app, "/echo", content=chunks(size))).json() == {"size": size}
    assert reads == [size, size]


async def test_a_declared_length_over_the_limit_is_refused_before_reading() -> None:
    reads: list[int] = []
    r = await post(tiny_app(reads), "/echo", content=b"x" * (LIMIT + 1))
    assert r.status_code == 413
    assert r.json() == {"detail": f"request body of {LIMIT + 1} bytes exceeds the limit of {LIMIT} bytes",
                        "limit_bytes": LIMIT}  # fmt: skip
    assert r.headers["connection"] == "close"
    assert reads == []  # the route never ran


@pytest.mark.parametrize("path", ["/echo", "/swallow"])
async def test_a_streamed_body_is_cut_off_at_the_limit(path: str) -> None:
    reads: list[int] = []
    r = await post(tiny_app(reads), path, content=chunks(LIMIT * 50))
    assert r.status_code == 413
    assert r.json()["detail"] == f"request body exceeds the limit of {LIMIT} bytes"
    assert reads == []


async def test_a_route_that_never_reads_the_body_is_still_refused_on_its_length() -> None:
    r = await post(tiny_app([]), "/", content=b"x" * (LIMIT + 1))
    assert r.status_code == 413


@pytest.mark.parametrize("headers", [[], [(b"content-length", b"0")]], ids=["no body", "empty body"])
async def test_a_request_without_a_body_passes_through_untouched(headers: list[tuple[bytes, bytes]]) -> None:
    # Nothing to bound or wait for: the request reaches the app with its own receive/send (no cost on GETs).
    seen: dict[str, object] = {}

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, object]) -> None:
        pass

    async def app(scope: object, rcv: object, snd: object) -> None:
        seen.update(receive=rcv, send=snd)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": headers}
    await BodyLimitMiddleware(app, LIMIT)(scope, receive, send)  # type: ignore[arg-type]
    assert seen == {"receive": receive, "send": send}


# --- deadlines: driven at the ASGI level, so the client's timing is exact ------------------------------------


@dataclass
class Answer:
    status: int
    headers: dict[bytes, bytes]
    body: bytes
    after_s: float


async def drive(app: ASGIApp, arrivals: list[tuple[float, bytes]], *, then_wait: bool = True) -> Answer:
    """Run one POST whose body arrives as (delay s, chunk) steps; with `then_wait` the client then sends
    nothing more, ever (a stalled upload), else the last chunk ends the body."""
    declared = sum(len(c) for _, c in arrivals) + (1000 if then_wait else 0)
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/echo",
        "headers": [(b"content-length", str(declared).encode())],
    }
    steps = list(arrivals)
    sent: list[Message] = []

    async def receive() -> Message:
        if steps:
            delay, chunk = steps.pop(0)
            await asyncio.sleep(delay)
            return {"type": "http.request", "body": chunk, "more_body": then_wait or bool(steps)}
        await asyncio.Event().wait()  # stalled (or, after a whole body, no disconnect yet)
        raise AssertionError("unreachable")

    async def send(message: Message) -> None:
        sent.append(message)

    t0 = time.monotonic()
    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return Answer(start["status"], dict(start["headers"]), body, time.monotonic() - t0)


def guarded(route: Callable[[Request], Awaitable[Response]], timeout_s: float, min_rate: float = 500) -> ASGIApp:
    app = Starlette(routes=[Route("/echo", route, methods=["POST"])])
    return BodyLimitMiddleware(app, 1024 * 1024, timeout_s, min_rate)


@pytest.mark.parametrize("swallows", [False, True], ids=["route reads", "route turns a failed read into 400"])
async def test_a_stalled_body_gets_408_and_the_route_lets_go(swallows: bool) -> None:
    released: list[bool] = []

    async def route(request: Request) -> Response:
        try:  # a claim held while the body is read, as the ingest routes hold one
            await request.body()
        except Exception:
            if swallows:
                return JSONResponse({"detail": "could not read"}, 400)
            raise
        finally:
            released.append(True)
        return JSONResponse({})

    answer = await drive(guarded(route, timeout_s=0.2), [(0, b'{"fixes": [')])
    assert answer.status == 408 and answer.headers[b"connection"] == b"close"
    assert orjson.loads(answer.body)["detail"] == (
        "request body not received in time: 0.2 s, plus 1 s per 500 bytes received (11 bytes arrived)"
    )
    assert answer.after_s >= 0.2 and released == [True]  # not cut before its deadline (no wall-clock upper bound)


async def test_a_client_dripping_bytes_is_cut_off_at_its_deadline() -> None:
    # One byte every 0.05 s buys 2 ms each: the deadline barely moves, the request is cut soon after 0.3 s.
    answer = await drive(guarded(echo_size, timeout_s=0.3), [(0.05, b" ")] * 100)
    assert answer.status == 408 and answer.after_s >= 0.3
    # Cut at its deadline, long before the 100 bytes it would drip over 5 s (counted, not timed: issue 33).
    arrived = int(re.search(r"\((\d+) bytes arrived\)", orjson.loads(answer.body)["detail"]).group(1))  # type: ignore[union-attr]
    assert arrived < 50


async def test_a_slow_but_steady_upload_is_never_cut_off() -> None:
    # 2,000 bytes/s against a minimum of 1,000: 1 s of uploading, five times the initial 0.2 s.
    answer = await drive(guarded(echo_size, timeout_s=0.2, min_rate=1000), [(0.05, b"x" * 100)] * 20, then_wait=False)
    assert answer.status == 200 and orjson.loads(answer.body) == {"size": 2000} and answer.after_s > 0.9


async def test_there_is_no_deadline_once_the_body_is_complete() -> None:
    # After the body, receive() only waits for the client to go away (as a streaming response does): not a
    # body read, so a route may wait on it for longer than any body deadline.
    async def waits_for_disconnect(request: Request) -> Response:
        body = await request.body()
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.3):
                await request.receive()
        return JSONResponse({"size": len(body)})

    answer = await drive(guarded(waits_for_disconnect, timeout_s=0.1), [(0, b"abc")], then_wait=False)
    assert answer.status == 200 and answer.after_s >= 0.3


async def test_a_route_busy_before_its_read_is_not_the_clients_delay() -> None:
    # The body arrived at once; the route first spends longer than the deadline elsewhere (a token lookup).
    async def busy_first(request: Request) -> Response:
        await asyncio.sleep(0.4)
        return JSONResponse({"size": len(await request.body())})

    answer = await drive(guarded(busy_first, timeout_s=0.2), [(0, b"abc")], then_wait=False)
    assert answer.status == 200 and orjson.loads(answer.body) == {"size": 3}


async def test_a_stalled_body_does_not_hold_up_others_and_the_sweep_stops_after() -> None:
    app = guarded(echo_size, timeout_s=0.3)
    assert isinstance(app, BodyLimitMiddleware)
    stalled = asyncio.create_task(drive(app, [(0, b"{")]))
    steady = [drive(app, [(0.05, b"x" * 10)] * 4, then_wait=False) for _ in range(5)]
    answers = await asyncio.gather(*steady)
    assert [a.status for a in answers] == [200] * 5
    assert not stalled.done()  # all five were answered while the stalled one was still waiting for its body
    assert (await stalled).status == 408
    await asyncio.sleep(2 * app.sweep_s)
    assert app._sweeper is None and not app._arriving  # nothing left ticking between requests


async def test_an_answer_given_before_the_body_is_read_closes_the_connection() -> None:
    async def refuses(request: Request) -> Response:
        return JSONResponse({"detail": "who are you?"}, 401)

    answer = await drive(guarded(refuses, timeout_s=5), [(0, b"{")])
    assert (
        answer.status == 401 and answer.headers[b"connection"] == b"close" and answer.after_s < 5
    )  # not at the deadline
    answer = await drive(guarded(echo_size, timeout_s=5), [(0, b"{}")], then_wait=False)
    assert answer.status == 200 and b"connection" not in answer.headers  # a read body keeps the connection


async def echo_size(request: Request) -> Response:
    return JSONResponse({"size": len(await request.body())})


async def test_every_route_of_the_real_app_refuses_an_oversized_body() -> None:
    # The middleware answers before any route (or the database) is reached: no lifespan is needed here.
    settings = Settings(database_url="postgresql://nobody@127.0.0.1:1/none", max_body_bytes=4096)
    app = create_app(settings)
    paths = {"/api/v1/fixes", "/osmand", "/api/v1/vehicles", "/api/v1/routes", "/api/v1/auth/login", "/nowhere"}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
        for path in sorted(paths):
            for method in ("POST", "PUT", "PATCH"):
                r = await c.request(method, path, content=b"{" * 4097, headers={"Content-Type": "application/json"})
                assert r.status_code == 413, (method, path, r.text)
                assert "4096" in r.json()["detail"] and r.headers["x-request-id"]
        # Without a Content-Length, the first route to read the body meets the limit.
        for path in ("/api/v1/vehicles", "/api/v1/auth/login"):
            r = await c.post(path, content=chunks(10_000), headers={"Content-Type": "application/json"})
            assert r.status_code == 413, (path, r.text)
