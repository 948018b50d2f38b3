"""Fixtures for tests that talk to the real database: a registered fleet and the in-process app."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import datetime

import asyncpg
import httpx
import pytest

from telemetria.app import create_app
from telemetria.registry import fleet
from tests.conftest import ScratchDb


@dataclass
class Tracker:
    unique_id: str
    token: str
    id: int
    vehicle_id: int

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


async def register(conn: asyncpg.Connection, plate: str, unique_id: str, since: datetime | None = None) -> Tracker:
    vehicle = await fleet.add_vehicle(conn, plate)
    t = await fleet.add_tracker(conn, unique_id, plate, since)
    return Tracker(unique_id, t["token"], t["id"], vehicle["id"])


@pytest.fixture
async def tracker(conn: asyncpg.Connection, clean: None) -> Tracker:
    return await register(conn, "ABC1D23", "860000000000001")


@pytest.fixture
async def client(test_db: ScratchDb) -> AsyncIterator[httpx.AsyncClient]:
    """The real application on the test database, driven in-process over ASGI.

    Its rollup refresher is off, so a test decides when rollups are computed (rollup.refresh).
    """
    app = create_app(test_db.settings(rollup_interval_s=0))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            c.app = app  # type: ignore[attr-defined]
            yield c


# --- users of every role ---------------------------------------------------------------------

PASSWORD = "correct horse battery"


@dataclass
class People:
    """One user per role (the contractor user belongs to `contractor_id`), with an API token each."""

    contractor_id: int
    other_contractor_id: int
    ids: dict[str, int]
    tokens: dict[str, str]

    def auth(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[role]}"}


async def make_people(conn: asyncpg.Connection) -> People:
    from telemetria.auth import store
    from telemetria.auth.roles import Role

    c1 = await conn.fetchval(
        "INSERT INTO contractors (name, cnpj) VALUES ('Transportes Jaru Ltda', '11222333000181') RETURNING id"
    )
    c2 = await conn.fetchval(
        "INSERT INTO contractors (name, cnpj) VALUES ('Viação Vale do Jamari', '11444777000161') RETURNING id"
    )
    ids: dict[str, int] = {}
    tokens: dict[str, str] = {}
    for role in Role:
        user = await store.add_user(conn, role.value, PASSWORD, role, c1 if role is Role.CONTRACTOR else None)
        ids[role.value] = user["id"]
        tokens[role.value] = (await store.create_token(conn, user["id"], "tests"))["token"]
    return People(c1, c2, ids, tokens)


@pytest.fixture
async def people(conn: asyncpg.Connection, clean: None) -> People:
    return await make_people(conn)


async def login(client: httpx.AsyncClient, username: str, password: str = PASSWORD) -> httpx.Response:
    """Log in; on success the client keeps the session cookie and sends the CSRF token on writes."""
    client.cookies.clear()
    client.headers.pop("X-CSRF-Token", None)
    r = await client.post("/api/v1/auth/login", json={"username": username, "password": password})
    if r.status_code == 200:
        client.headers["X-CSRF-Token"] = r.json()["csrf_token"]
    return r
