"""Dates in a plausible range (issue 33, item 5): a registry edit's effective_from at most a year ahead (a
setting), and what a contractor may see follows the registry in force today, not an edit dated ahead."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import asyncpg
import httpx
import pytest

from telemetria.localtime import LOCAL_TZ
from tests.db.conftest import People
from tests.db.world import World, make_world

TODAY = datetime.now(LOCAL_TZ).date()


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    return await make_world(conn, people)


async def test_an_effective_from_years_ahead_is_refused_and_locks_nothing(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    h = world.people.auth("admin")
    url = f"/api/v1/routes/{world['r1']}"
    for far in (date(2062, 3, 1), date(9999, 12, 31), TODAY + timedelta(days=366)):
        r = await client.patch(url, json={"name": "Linha X", "effective_from": far.isoformat()}, headers=h)
        assert r.status_code == 422 and r.json()["field"] == "effective_from", (far, r.text)
        assert (TODAY + timedelta(days=365)).isoformat() in r.json()["detail"]
    assert await conn.fetchval("SELECT name FROM routes WHERE id = $1", world["r1"]) == "Linha 1"
    # A year ahead is accepted, and the item is not locked for the days before it only by a typo of decades.
    year = TODAY + timedelta(days=365)
    r = await client.patch(url, json={"name": "Linha Y", "effective_from": year.isoformat()}, headers=h)
    assert r.status_code == 200, r.text
    for path, body in (
        (f"/api/v1/speed-zones/{world['z1']}", {"limit_kmh": 40, "effective_from": "2062-03-01"}),
        (f"/api/v1/vehicles/{world['v1']}", {"speed_limit_kmh": 70, "effective_from": "9999-12-31"}),
    ):
        r = await client.patch(path, json=body, headers=h)
        assert r.status_code == 422 and r.json()["field"] == "effective_from", (path, r.text)


async def test_a_contract_change_dated_ahead_changes_no_visibility_today(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    """Route 2 (contractor 2's contract, no vehicle assigned) moves to contractor 1's contract in 30 days: until
    then contractor 1 does not see it."""
    await conn.execute("DELETE FROM route_assignments WHERE id = $1", world["ra2"])
    await conn.execute("UPDATE routes SET contract_id = $1 WHERE id = $2", world["k2"], world["r2"])
    ahead = (TODAY + timedelta(days=30)).isoformat()
    r = await client.patch(
        f"/api/v1/routes/{world['r2']}",
        json={"contract_id": world["k1"], "effective_from": ahead},
        headers=world.people.auth("admin"),
    )
    assert r.status_code == 200, r.text
    mine = world.people.auth("contractor")
    assert (await client.get(f"/api/v1/routes/{world['r2']}", headers=mine)).status_code == 404
    assert world["r2"] not in [i["id"] for i in (await client.get("/api/v1/routes", headers=mine)).json()["items"]]
