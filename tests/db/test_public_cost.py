"""What an anonymous request may cost (issue 33, item 2): the public itineraries are computed once per data
version (the registry generation, the school years, the day, the grid), off the event loop, and a revalidation
with the version's ETag is a 304 after one lookup."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import httpx
import pytest

from telemetria import jobs
from telemetria.publication import store
from tests.conftest import ScratchDb
from tests.db.simcontract import app_client
from tests.db.test_publication_api import demo  # noqa: F401 (the fixture)


@pytest.fixture
async def public(test_db: ScratchDb) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(test_db, public_enabled=True, public_boarding_precision_m=100) as c:
        yield c


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often the itineraries' data is read and their body computed in the job queue's process pool."""
    n = {"read": 0, "computed": 0}
    read, run = store.registered, jobs.Jobs.run_process

    async def registered(*a: Any) -> Any:
        n["read"] += 1
        return await read(*a)

    async def run_process(self: jobs.Jobs, *a: Any) -> Any:
        n["computed"] += 1
        return await run(self, *a)

    monkeypatch.setattr(store, "registered", registered)
    monkeypatch.setattr(jobs.Jobs, "run_process", run_process)
    return n


@pytest.mark.usefixtures("demo")
async def test_itineraries_are_computed_once_per_data_version(
    public: httpx.AsyncClient, conn: asyncpg.Connection, counted: dict[str, int]
) -> None:
    answers = await asyncio.gather(*(public.get("/public/itineraries") for _ in range(10)))
    assert {r.status_code for r in answers} == {200} and len({r.content for r in answers}) == 1
    assert counted == {"read": 1, "computed": 1}  # ten anonymous callers at once: one computation, in the pool
    etag = answers[0].headers["etag"]
    again = await public.get("/public/itineraries")
    assert again.content == answers[0].content and again.headers["etag"] == etag
    for _ in range(5):
        r = await public.get("/public/itineraries", headers={"If-None-Match": etag})
        assert r.status_code == 304 and r.content == b""
    assert counted == {"read": 1, "computed": 1}
    # A registry edit is a new version: a new ETag, computed once more.
    await conn.execute("UPDATE routes SET name = name || ' (nova)' WHERE id = (SELECT min(id) FROM routes)")
    r = await public.get("/public/itineraries", headers={"If-None-Match": etag})
    assert r.status_code == 200 and r.headers["etag"] != etag and "(nova)" in r.text
    assert counted == {"read": 2, "computed": 2}
    # The CSV is another answer of the same version, with its own ETag.
    csv = await public.get("/public/itineraries", params={"format": "csv"})
    assert csv.status_code == 200 and csv.headers["etag"] != r.headers["etag"]
    assert counted == {"read": 3, "computed": 3}
