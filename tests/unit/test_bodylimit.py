"""The request-body limit: 413 naming the limit, on Content-Length and while streaming; a tiny app and the real one."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

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


async def test_a_declared_length_within_the_limit_passes_through_untouched() -> None:
    # The HTTP server frames the body by Content-Length (uvicorn's httptools and h11 never deliver more
    # than declared), so there is nothing to count: the request reaches the app with its own receive/send.
    seen: dict[str, object] = {}

    async def receive() -> dict[str, object]:
        return {"type": "http.request", "body": b"x" * 10, "more_body": False}

    async def send(message: dict[str, object]) -> None:
        pass

    async def app(scope: object, rcv: object, snd: object) -> None:
        seen.update(receive=rcv, send=snd)

    scope = {"type": "http", "method": "POST", "path": "/", "headers": [(b"content-length", b"10")]}
    await BodyLimitMiddleware(app, LIMIT)(scope, receive, send)  # type: ignore[arg-type]
    assert seen == {"receive": receive, "send": send}


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
