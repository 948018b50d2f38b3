"""`GET /api/v1/live`: newest position, driver, route of the day and freshness of each visible vehicle."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import asyncpg
import httpx
import pytest

from telemetria.localtime import LOCAL_TZ
from telemetria.registry import fleet
from tests.db.conftest import People
from tests.db.world import World, make_world


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    return await make_world(conn, people)


async def _fix(
    client: httpx.AsyncClient, conn: asyncpg.Connection, n: int, ago_s: float, lat: float, valid: bool = True
) -> None:
    """A fix of vehicle n from ago_s seconds ago, sent by its tracker through the ingest API."""
    token = await fleet.rotate_token(conn, f"86000000000000{n}")
    ts = datetime.now(UTC) - timedelta(seconds=ago_s)
    body = {"ts": ts.isoformat(), "lat": lat, "lon": -62.465, "speed_kmh": 42.5, "heading_deg": 90, "ignition": True}
    r = await client.post("/api/v1/fixes", json=body | {"valid": valid}, headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 200 and r.json()["accepted"] == 1, r.text


async def _live(client: httpx.AsyncClient, people: People, role: str, **params: str) -> dict[str, dict]:  # type: ignore[type-arg]
    r = await client.get("/api/v1/live", params=params, headers=people.auth(role))
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["online_s"] == 60 and body["offline_s"] == 600
    return {v["plate"]: v for v in body["vehicles"]}


async def test_each_vehicle_has_its_newest_position_driver_route_and_freshness(
    client: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    await _fix(client, conn, 1, 300, -10.4410)
    await _fix(client, conn, 1, 10, -10.4400)
    await _fix(client, conn, 1, 5, -10.4390, valid=False)  # an invalid fix is never the position shown
    await _fix(client, conn, 2, 240, -10.4300)
    quiet = await fleet.add_vehicle(conn, "CCC3C33")
    live = await _live(client, world.people, "monitor")

    v1 = live["AAA1A11"]
    assert v1["status"] == "online" and 9 <= v1["age_s"] <= 30
    shown = (v1["lat"], v1["lon"], v1["speed_kmh"], v1["heading_deg"], v1["ignition"])
    assert shown == (-10.44, -62.465, 42.5, 90, True)
    assert v1["driver"] == "Condutor 1" and v1["contractor"] == "Transportes Jaru Ltda"
    weekday = datetime.now(UTC).astimezone(LOCAL_TZ).isoweekday()
    assert v1["routes"] == ("R1" if weekday <= 5 else None)  # assigned Monday to Friday
    assert v1["time"].endswith("-04:00")  # local time of the service's zone
    assert [p[0] for p in v1["trail"]] == [-10.441, -10.44]  # oldest first, invalid fix left out

    assert live["BBB2B22"]["status"] == "late"
    assert live["CCC3C33"]["status"] == "never" and live["CCC3C33"]["lat"] is None
    assert live["CCC3C33"]["vehicle_id"] == quiet["id"]


async def test_a_silent_vehicle_is_offline_and_the_trail_is_bounded(
    client: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    await _fix(client, conn, 1, 1200, -10.4410)
    await _fix(client, conn, 1, 700, -10.4400)
    live = await _live(client, world.people, "auditor", trail_s="900")
    assert live["AAA1A11"]["status"] == "offline"
    assert len(live["AAA1A11"]["trail"]) == 1  # only the fix of the last 900 s
    assert (await _live(client, world.people, "auditor", trail_s="0"))["AAA1A11"]["trail"] == []


async def test_a_contractor_sees_only_its_own_vehicles(
    client: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    await _fix(client, conn, 1, 10, -10.44)
    await _fix(client, conn, 2, 10, -10.43)
    assert set(await _live(client, world.people, "contractor")) == {"AAA1A11"}
    assert await _live(client, world.people, "contractor", vehicle_id=str(world["v2"])) == {}
    assert set(await _live(client, world.people, "admin", vehicle_id=str(world["v2"]))) == {"BBB2B22"}


async def test_bad_parameters_are_refused_naming_them(client: httpx.AsyncClient, world: World) -> None:
    for params, field in (({"trail_s": "-1"}, "trail_s"), ({"vehicle_id": "x"}, "vehicle_id")):
        r = await client.get("/api/v1/live", params=params, headers=world.people.auth("admin"))
        assert r.status_code == 422 and field in r.json()["detail"]
    assert (await client.get("/api/v1/live")).status_code == 401
