"""What an anonymous request may cost (issue 33, item 2): the public itineraries are computed once per data
version (the registry generation, the school years, the day, the grid), off the event loop, and a revalidation
with the version's ETag is a 304 after one lookup."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from telemetria import jobs
from telemetria.publication import store
from telemetria.publication.api import local_today
from tests.conftest import ScratchDb
from tests.db.simcontract import app_client
from tests.db.test_publication_api import demo  # noqa: F401 (the fixture)
from tests.db.test_seals import DAY as SEAL_DAY
from tests.db.test_seals import sealed  # noqa: F401 (the fixture)


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


class _Counted:
    """The app's pool as request handlers reach it (`app.state.pool`), counting the connections they hold; the
    background tasks (retention, notifications...) were given the pool itself at start and are not counted, so
    what they take cannot make the count wrong."""

    def __init__(self, pool: asyncpg.Pool) -> None:
        self.pool, self.held, self.taken = pool, 0, 0

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pool, name)

    @contextlib.asynccontextmanager
    async def acquire(self, **kw: Any) -> AsyncIterator[asyncpg.Connection]:
        async with self.pool.acquire(**kw) as conn:
            self.held, self.taken = self.held + 1, self.taken + 1
            try:
                yield conn
            finally:
                self.held -= 1


async def _held_while_sent(app: Any, path: str, query: str) -> tuple[list[int], int, int]:
    """GET `path` straight through the ASGI app for a client that reads slowly: how many connections the request
    holds while each part of its body waits to be read, how many it took in all, and the status."""
    counted = app.state.pool = _Counted(app.state.pool)
    during, status = [], []
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": path, "raw_path": path.encode(), "root_path": "", "query_string": query.encode(),
        "headers": [(b"host", b"test")], "client": ("192.0.2.7", 40000), "server": ("test", 80),
    }  # fmt: skip

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            status.append(message["status"])
        elif message["type"] == "http.response.body":
            during.append(counted.held)  # the client has not read this part yet
            await asyncio.sleep(0.05)  # and reads it slowly

    try:
        await app(scope, receive, send)
    finally:
        app.state.pool = counted.pool
    return during, counted.taken, status[0]


# Every /public/* route, with arguments that give a full answer: those on the demo registry, those on a seal.
ON_DEMO = [
    ("/public/itineraries", ""),
    ("/public/itineraries", "format=csv"),
    ("/public/service", "month={month}"),
    ("/public/service", "month={month}&format=csv"),
]
ON_SEALS = [("/public/seals", ""), ("/public/seals/{day}", "")]


async def _slow_reader(db: ScratchDb, route: str, query: str) -> None:
    """Issue 33, item 2: ten anonymous clients reading a large answer slowly held ten connections of the (small)
    pool, and a tracker's post waited for one. Each public route gives its connection back before it sends."""
    month = (local_today() - timedelta(days=1)).strftime("%Y-%m")
    path, query = route.format(day=SEAL_DAY.isoformat()), query.format(month=month)
    async with app_client(db, public_enabled=True, public_boarding_precision_m=100) as c:
        during, taken, status = await _held_while_sent(c.app, path, query)  # type: ignore[attr-defined]
    assert status == 200 and during and taken >= 1, (path, status, taken)  # it did read the database
    assert max(during) == 0, f"{path}?{query}: {max(during)} connection(s) held while sending"


@pytest.mark.usefixtures("demo")
@pytest.mark.parametrize(("route", "query"), ON_DEMO)
async def test_a_slow_reader_holds_no_pool_connection(test_db: ScratchDb, route: str, query: str) -> None:
    await _slow_reader(test_db, route, query)


@pytest.mark.usefixtures("sealed")
@pytest.mark.parametrize(("route", "query"), ON_SEALS)
async def test_a_slow_reader_of_the_seals_holds_no_pool_connection(test_db: ScratchDb, route: str, query: str) -> None:
    await _slow_reader(test_db, route, query)


async def test_every_public_route_is_checked_for_slow_readers(public: httpx.AsyncClient) -> None:
    app = public.app  # type: ignore[attr-defined]
    routes = [r for top in app.routes for r in getattr(getattr(top, "original_router", None), "routes", [top])]
    served = {p for r in routes if (p := getattr(r, "path", "")).startswith("/public/")}
    assert served == {route for route, _ in ON_DEMO + ON_SEALS}
