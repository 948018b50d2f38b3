"""Every answer carries `X-Content-Type-Options: nosniff`; every /api answer (and /metrics) `Cache-Control:
no-store`, errors included, since they hold personal data (CPFs, names, positions) no cache should keep."""

from __future__ import annotations

import httpx

from telemetria.web.pages import LOGIN
from tests.db.conftest import People, Tracker


def private(r: httpx.Response) -> bool:
    return r.headers.get("x-content-type-options") == "nosniff" and r.headers.get("cache-control") == "no-store"


async def test_every_api_answer_is_nosniff_and_no_store(
    client: httpx.AsyncClient, people: People, tracker: Tracker
) -> None:
    paths = client.app.openapi()["paths"]  # type: ignore[attr-defined]
    gets = sorted(path for path, ops in paths.items() if "get" in ops and path.startswith("/api/"))
    assert len(gets) > 15
    answers = {}
    for path in gets:
        url = path.replace("{", "").replace("}", "")  # a path parameter becomes a bad id: the 4xx is checked too
        answers[f"GET {path}"] = await client.get(url, headers=people.auth("admin"))
    answers["GET /api/v1/vehicles anonymous"] = await client.get("/api/v1/vehicles")
    answers["POST /api/v1/fixes"] = await client.post(
        "/api/v1/fixes", json={"ts": "2026-11-30T12:00:00Z", "lat": -10.43, "lon": -62.47}, headers=tracker.auth
    )
    answers["POST /api/v1/fixes 401"] = await client.post("/api/v1/fixes", json={})
    answers["413"] = await client.post(
        "/api/v1/auth/login", content=b"x" * (17 * 1024 * 1024), headers={"Content-Type": "application/json"}
    )
    answers["NUL 400"] = await client.get(
        "/api/v1/contractors", params={"search": "\x00"}, headers=people.auth("admin")
    )
    answers["422"] = await client.post("/api/v1/auth/login", json={})
    answers["/metrics"] = await client.get("/metrics")
    statuses = {r.status_code for r in answers.values()}
    assert {200, 400, 401, 413, 422} <= statuses
    assert [name for name, r in answers.items() if not private(r)] == []


async def test_pages_static_files_and_probes_are_nosniff_and_keep_their_own_cache_rules(
    client: httpx.AsyncClient,
) -> None:
    for url in ("/healthz", "/readyz", LOGIN, "/static/app.css", "/osmand", "/nowhere"):
        r = await client.get(url)
        assert r.headers.get("x-content-type-options") == "nosniff", url
        assert r.headers.get_list("x-content-type-options") == ["nosniff"], url  # never twice
    assert (await client.get("/static/app.css")).headers["cache-control"] == "no-cache"  # its own, kept
    assert (await client.get(LOGIN)).headers["cache-control"] == "no-store"
