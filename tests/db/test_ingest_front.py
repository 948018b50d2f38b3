"""The ingest routes are served in front of FastAPI's stack (telemetria/ingest/front.py) with the same
guarantees as every other route; their other methods, and every other path, still go through FastAPI."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import httpx
import pytest
from starlette.requests import Request
from starlette.responses import Response

from telemetria.app import Telemetria, create_app
from telemetria.logs import request_id
from tests.conftest import ScratchDb
from tests.db.conftest import Tracker

FIX = {"ts": "2026-11-30T12:00:00Z", "lat": -10.43, "lon": -62.47}


@pytest.fixture
async def app(test_db: ScratchDb) -> AsyncIterator[Telemetria]:
    app = create_app(test_db.settings(rollup_interval_s=0, access_log=True))
    async with app.router.lifespan_context(app):
        yield app


def client(app: Telemetria, raise_app_exceptions: bool = True) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=app, raise_app_exceptions=raise_app_exceptions)
    return httpx.AsyncClient(transport=transport, base_url="http://t")


async def test_ingest_is_answered_by_the_front_with_every_guarantee(
    app: Telemetria, tracker: Tracker, caplog: pytest.LogCaptureFixture
) -> None:
    assert app.ingest_front is not None
    served: list[str] = []
    real = app.ingest_front.endpoints["/api/v1/fixes"]

    async def spy(request: Request) -> Response:
        served.append(request_id.get() or "")
        return await real(request)

    app.ingest_front.endpoints["/api/v1/fixes"] = spy
    with caplog.at_level(logging.INFO, logger="telemetria.access"):
        async with client(app) as c:
            r = await c.post("/api/v1/fixes", json=FIX, headers={**tracker.auth, "X-Request-Id": "trk-42"})
    assert r.status_code == 200 and r.json()["accepted"] == 1
    assert served == ["trk-42"]  # the front's endpoint, under the request's id
    assert r.headers["x-request-id"] == "trk-42"
    assert r.headers["x-content-type-options"] == "nosniff" and r.headers["cache-control"] == "no-store"
    access = [rec for rec in caplog.records if rec.name == "telemetria.access"]
    assert [(a.path, a.status, a.request_id) for a in access] == [("/api/v1/fixes", 200, "trk-42")]  # type: ignore[attr-defined]


async def test_the_ingest_paths_other_methods_still_go_through_fastapi(app: Telemetria) -> None:
    async with client(app) as c:
        r = await c.get("/api/v1/fixes")
        assert r.status_code == 405 and r.headers["allow"] == "POST"
        assert r.headers["x-content-type-options"] == "nosniff" and "x-request-id" in r.headers
        r = await c.delete("/osmand")
        assert r.status_code == 405
        assert "/api/v1/fixes" in (await c.get("/openapi.json")).json()["paths"]


async def test_a_bug_in_an_ingest_handler_is_a_plain_500_and_reaches_the_server(app: Telemetria) -> None:
    assert app.ingest_front is not None

    async def broken(request: Request) -> Response:
        raise RuntimeError("a bug")

    app.ingest_front.endpoints["/osmand"] = broken
    async with client(app) as c:
        with pytest.raises(RuntimeError, match="a bug"):  # on to the server, which logs it
            await c.get("/osmand", params={"id": "x"})
    async with client(app, raise_app_exceptions=False) as c:
        r = await c.get("/osmand", params={"id": "x"}, headers={"X-Request-Id": "dev-1"})
    assert (r.status_code, r.text) == (500, "Internal Server Error")
    assert r.headers["x-content-type-options"] == "nosniff" and r.headers["x-request-id"] == "dev-1"
    assert "cache-control" not in r.headers  # /osmand is not under /api/
