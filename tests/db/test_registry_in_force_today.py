"""The current tables show what is in force today (issue 33, item 5; migrations/0033_registry_in_force_today.sql).

An edit dated ahead (within the year allowed) is a version from its day: until then every current read (the
registry's pages and lists, what a contractor may see) shows the version in force today, with the change
announced as `scheduled_change`; on its day the version is applied by date (registry_promote, called by every
pool on its first use of a day), not by a timer.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest

from telemetria.db import DayPromotion
from telemetria.localtime import LOCAL_TZ
from tests.db.conftest import People
from tests.db.world import World, make_world

TODAY = datetime.now(LOCAL_TZ).date()
AHEAD = TODAY + timedelta(days=20)
STOPS = [
    {"name": "Ponto 1", "lat": -10.43, "lon": -62.47, "kind": "boarding", "scheduled_time": "06:30"},
    {"name": "Escola", "lat": -10.44, "lon": -62.46, "kind": "school", "scheduled_time": "07:10"},
]


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    w = await make_world(conn, people)
    # The world was registered a month ago (its versions' first day), so that today's and later days differ.
    await conn.execute("UPDATE registry_versions SET valid_from = valid_from - 30")
    return w


async def _day_comes(conn: asyncpg.Connection) -> int:
    """AHEAD becomes today: every version moves 20 days earlier (the one dated AHEAD now starts today), and the
    day's promotion runs as a pool's first use of the day runs it."""
    await conn.execute("UPDATE registry_versions SET valid_from = valid_from - ($1::date - $2::date)", AHEAD, TODAY)
    await conn.execute("UPDATE registry_promoted SET through = $1", TODAY - timedelta(days=1))
    return int(await conn.fetchval("SELECT registry_promote($1)", TODAY))


async def _get(client: httpx.AsyncClient, path: str, h: dict[str, str]) -> dict[str, Any]:
    r = await client.get(path, headers=h)
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_a_route_moved_to_another_contract_from_next_month_keeps_its_contractor_until_then(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    """Route 1 (contractor 1's contract, no vehicle assigned) moves to contractor 2's contract from AHEAD: until
    then contractor 1 sees it as its own with its contract of today, and the change is announced."""
    await conn.execute("DELETE FROM route_assignments WHERE id = $1", world["ra1"])
    await conn.execute("UPDATE routes SET contract_id = $1 WHERE id = $2", world["k1"], world["r1"])
    admin, mine = world.people.auth("admin"), world.people.auth("contractor")
    r = await client.patch(
        f"/api/v1/routes/{world['r1']}",
        json={"contract_id": world["k2"], "name": "Linha 1 (lote 2)", "effective_from": AHEAD.isoformat()},
        headers=admin,
    )
    assert r.status_code == 200, r.text
    for h in (admin, mine):
        route = await _get(client, f"/api/v1/routes/{world['r1']}", h)
        assert (route["contract_id"], route["name"]) == (world["k1"], "Linha 1")
        assert route["scheduled_change"] == {
            "valid_from": AHEAD.isoformat(), "changed": ["contract_id", "name"], "deleted": False,
        }  # fmt: skip
    listed = (await _get(client, "/api/v1/routes", mine))["items"]
    assert [(i["id"], i["contract_id"]) for i in listed if i["id"] == world["r1"]] == [(world["r1"], world["k1"])]
    assert await conn.fetchval("SELECT contract_id FROM routes WHERE id = $1", world["r1"]) == world["k1"]

    assert await _day_comes(conn) == 1
    assert (await client.get(f"/api/v1/routes/{world['r1']}", headers=mine)).status_code == 404
    route = await _get(client, f"/api/v1/routes/{world['r1']}", admin)
    assert (route["contract_id"], route["name"], route["scheduled_change"]) == (world["k2"], "Linha 1 (lote 2)", None)
    assert await conn.fetchval("SELECT registry_promote($1)", TODAY) == 0  # once a day


async def test_stops_dated_ahead_wait_for_their_day_and_a_later_edit_builds_on_them(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    admin = world.people.auth("admin")
    url = f"/api/v1/routes/{world['r1']}"
    r = await client.put(f"{url}/stops", json={"stops": STOPS, "effective_from": AHEAD.isoformat()}, headers=admin)
    assert r.status_code == 200, r.text
    assert (await _get(client, url, admin))["stops"] == []
    # Editing the route again must be dated on or after AHEAD, and is made on AHEAD's version (its stops kept).
    later = AHEAD + timedelta(days=5)
    r = await client.patch(url, json={"name": "Linha 1B", "effective_from": later.isoformat()}, headers=admin)
    assert r.status_code == 200, r.text
    route = await _get(client, url, admin)
    assert (route["name"], route["stops"], route["scheduled_change"]["valid_from"]) == (
        "Linha 1",
        [],
        AHEAD.isoformat(),
    )
    newest = await conn.fetchval(
        "SELECT data FROM registry_versions WHERE kind = 'route' AND item_id = $1 AND valid_from = $2",
        world["r1"], later,
    )  # fmt: skip
    assert (newest["name"], [s["name"] for s in newest["stops"]]) == ("Linha 1B", ["Ponto 1", "Escola"])

    await _day_comes(conn)  # AHEAD is today; `later` is 5 days ahead
    route = await _get(client, url, admin)
    assert (route["name"], [s["name"] for s in route["stops"]]) == ("Linha 1", ["Ponto 1", "Escola"])
    assert route["stops"][0]["scheduled_time"].startswith("06:30")
    assert route["scheduled_change"]["changed"] == ["name"]


async def test_an_assignment_ended_from_next_month_is_listed_until_then(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    admin, mine = world.people.auth("admin"), world.people.auth("contractor")
    r = await client.delete(
        f"/api/v1/route-assignments/{world['ra1']}", params={"effective_from": AHEAD.isoformat()}, headers=admin
    )
    assert r.status_code == 200, r.text
    listed = (await _get(client, "/api/v1/route-assignments", mine))["items"]
    assert [i["id"] for i in listed] == [world["ra1"]]
    assert (await client.get(f"/api/v1/routes/{world['r1']}", headers=mine)).status_code == 200

    await _day_comes(conn)
    assert (await _get(client, "/api/v1/route-assignments", mine))["items"] == []
    assert (await client.get(f"/api/v1/routes/{world['r1']}", headers=mine)).status_code == 404


async def test_a_speed_limit_or_zone_dated_ahead_is_today_s_until_its_day(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    admin = world.people.auth("admin")
    await conn.execute("UPDATE vehicles SET speed_limit_kmh = 60 WHERE id = $1", world["v1"])
    vehicle, zones = f"/api/v1/vehicles/{world['v1']}", "/api/v1/speed-zones"
    r = await client.patch(vehicle, json={"speed_limit_kmh": 50, "effective_from": AHEAD.isoformat()}, headers=admin)
    assert r.status_code == 200, r.text
    item = await _get(client, vehicle, admin)
    assert (item["speed_limit_kmh"], item["scheduled_change"]["valid_from"]) == (60, AHEAD.isoformat())
    r = await client.patch(
        f"{zones}/{world['z1']}", json={"limit_kmh": 20, "effective_from": AHEAD.isoformat()}, headers=admin
    )
    assert r.status_code == 200 and r.json()["scheduled_change"]["valid_from"] == AHEAD.isoformat(), r.text
    assert [z["limit_kmh"] for z in (await _get(client, zones, admin))["items"]] == [30]
    await _day_comes(conn)
    assert (await _get(client, vehicle, admin))["speed_limit_kmh"] == 50
    assert [z["limit_kmh"] for z in (await _get(client, zones, admin))["items"]] == [20]


async def test_a_vehicle_s_plate_or_contractor_is_not_dated_ahead(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    """Only the speed limit of a vehicle is versioned: a new plate sent with a date ahead would show at once."""
    r = await client.patch(
        f"/api/v1/vehicles/{world['v1']}",
        json={"plate": "CCC3C33", "speed_limit_kmh": 50, "effective_from": AHEAD.isoformat()},
        headers=world.people.auth("admin"),
    )
    assert r.status_code == 422 and r.json()["field"] == "effective_from", r.text
    assert "plate" in r.json()["detail"]
    assert await conn.fetchval("SELECT plate FROM vehicles WHERE id = $1", world["v1"]) == "AAA1A11"


async def test_each_pool_promotes_on_its_first_use_of_a_day(
    world: World, conn: asyncpg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    await conn.execute("UPDATE routes SET name = 'Linha 1' WHERE id = $1", world["r1"])
    async with conn.transaction():
        await conn.execute("SELECT set_config('telemetria.effective_from', $1, true)", AHEAD.isoformat())
        await conn.execute("UPDATE routes SET name = 'Linha Nova' WHERE id = $1", world["r1"])
    assert await conn.fetchval("SELECT name FROM routes WHERE id = $1", world["r1"]) == "Linha 1"  # hand SQL too
    day: list[date] = [TODAY]
    monkeypatch.setattr(DayPromotion, "today", staticmethod(lambda: day[0]))
    promote = DayPromotion()
    await promote(conn)
    assert await conn.fetchval("SELECT name FROM routes WHERE id = $1", world["r1"]) == "Linha 1"
    day[0] = AHEAD
    await promote(conn)
    assert await conn.fetchval("SELECT name FROM routes WHERE id = $1", world["r1"]) == "Linha Nova"
    await conn.execute("UPDATE registry_promoted SET through = $1", TODAY)  # the scratch database's real today
