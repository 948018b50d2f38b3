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
    """The real application on the test database, driven in-process over ASGI."""
    app = create_app(test_db.settings())
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            c.app = app  # type: ignore[attr-defined]
            yield c
