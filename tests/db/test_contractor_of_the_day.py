"""The contractor of the day concerned, not today's registry row (issue 33, scope and attribution by day): the live
map shows a vehicle to the contractor that has it today (a move dated ahead changes nothing until its day) and
never a position of another contractor's day; a boletim's substitute is one of the contract holder's vehicles on
the run's day, and a vehicle the holder only has since is flagged unauthorized (migrations/0028)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import asyncpg
import httpx
import pytest

from telemetria.localtime import LOCAL_TZ
from tests.db.conftest import People, register
from tests.db.test_measurement_api import _drive, _garage, _post_fixes
from tests.db.test_measurement_once import _boletim, _contract, _route
from tests.db.world import World, make_world

TODAY = datetime.now(LOCAL_TZ).date()


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    return await make_world(conn, people)


async def _move(conn: asyncpg.Connection, vehicle: int, contractor: int, day: date) -> None:
    """Vehicle to `contractor` from local `day` on, as a registry edit dated that day records it."""
    async with conn.transaction():
        await conn.execute("SELECT set_config('telemetria.effective_from', $1, true)", day.isoformat())
        await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", contractor, vehicle)


async def _newest(conn: asyncpg.Connection, vehicle: int, at: datetime, kmh: float = 0.0) -> None:
    await conn.execute(
        "INSERT INTO latest_fixes (vehicle_id, last_ts, valid_ts, lat, lon, speed_kmh)"
        " VALUES ($1, $2, $2, -10.44, -62.46, $3)"
        " ON CONFLICT (vehicle_id) DO UPDATE SET last_ts = $2, valid_ts = $2, lat = -10.44, lon = -62.46,"
        " speed_kmh = $3",
        vehicle, at, kmh,
    )  # fmt: skip


async def _live(client: httpx.AsyncClient, world: World, role: str = "contractor") -> dict[int, dict[str, object]]:
    r = await client.get("/api/v1/live", headers=world.people.auth(role))
    assert r.status_code == 200, r.text
    return {v["vehicle_id"]: v for v in r.json()["vehicles"]}


async def test_a_move_dated_ahead_leaves_the_live_map_as_it_is_today(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    """Vehicle 1 goes to contractor 2 and vehicle 2 to contractor 1 next week: today each is still its own."""
    ahead = TODAY + timedelta(days=7)
    await _move(conn, world["v1"], world["c2"], ahead)
    await _move(conn, world["v2"], world["c1"], ahead)
    mine = await _live(client, world)
    assert list(mine) == [world["v1"]]
    assert mine[world["v1"]]["contractor_id"] == world["c1"]
    every = await _live(client, world, "admin")
    assert {v: every[v]["contractor_id"] for v in every} == {world["v1"]: world["c1"], world["v2"]: world["c2"]}
    # The day panel too: contractor 1's vehicle in service today is vehicle 1.
    for v in (world["v1"], world["v2"]):
        await _newest(conn, v, datetime.now(LOCAL_TZ) - timedelta(seconds=20), kmh=40.0)
    r = await client.get("/api/v1/day", headers=world.people.auth("contractor"))
    assert r.status_code == 200, r.text
    assert [v["vehicle_id"] for v in r.json()["vehicles"]["items"]] == [world["v1"]]


async def test_the_live_map_shows_no_position_of_another_contractors_day(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    """Vehicle 2 is contractor 1's since yesterday; its newest fix is of the day before, contractor 2's day."""
    before = datetime.combine(TODAY - timedelta(days=2), datetime.min.time(), LOCAL_TZ) + timedelta(hours=9)
    await _newest(conn, world["v2"], before)
    await _move(conn, world["v2"], world["c1"], TODAY - timedelta(days=1))
    shown = (await _live(client, world))[world["v2"]]
    assert shown["contractor_id"] == world["c1"]
    assert (shown["time"], shown["lat"], shown["lon"], shown["trail"]) == (None, None, None, [])
    # The Secretaria sees the vehicle's newest position, whoever had it then.
    assert (await _live(client, world, "admin"))[world["v2"]]["lat"] == -10.44
    # Once it reports on a day of contractor 1, contractor 1 sees it.
    await _newest(conn, world["v2"], datetime.now(LOCAL_TZ) - timedelta(seconds=20))
    assert (await _live(client, world))[world["v2"]]["lat"] == -10.44


DAY = "2026-03-04"  # a Wednesday of the 2026 school year


async def _one_route_drive_by_another(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, drives_for: int
) -> tuple[int, int, int]:
    """Contract 021/2026 of contractor 1 with route L01, assigned to a vehicle that stays at the garage on DAY;
    another vehicle, contractor `drives_for`'s on DAY, drives the route then. Returns (contract, assigned,
    driver's vehicle)."""
    assigned = await register(conn, "EEE5E55", "861000000000501")
    other = await register(conn, "FFF6F66", "861000000000502")
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id,
                       assigned.vehicle_id)  # fmt: skip
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", drives_for, other.vehicle_id)
    r = await client.put("/api/v1/school-years/2026", headers=people.auth("monitor"),
                         json={"start": "2026-02-02", "end": "2026-12-18"})  # fmt: skip
    assert r.status_code == 200, r.text
    k = await _contract(client, people, "021/2026", "2026-02-01", "2026-12-31")
    await _route(conn, "L01", k, assigned.vehicle_id, "2026-02-01")
    day = date.fromisoformat(DAY)
    await _post_fixes(client, assigned, _garage(day))
    await _post_fixes(client, other, _drive(day))
    return k, assigned.vehicle_id, other.vehicle_id


async def test_a_substitute_is_the_holders_vehicle_on_the_runs_day(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, clean: None
) -> None:
    """The substitute was contractor 1's on DAY and is contractor 2's since today: it made contractor 1's run as
    an authorized substitute."""
    k, _, sub = await _one_route_drive_by_another(client, conn, people, people.contractor_id)
    await _move(conn, sub, people.other_contractor_id, TODAY)
    (run,) = (await _boletim(client, people, k, DAY, DAY))["runs"]
    assert (run["status"], run["vehicle_id"], run["substitution"], run["unauthorized"]) == ("made", sub, True, False)


async def test_a_vehicle_the_holder_only_has_since_is_no_substitute_of_that_day(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, clean: None
) -> None:
    """The vehicle that drove was contractor 2's on DAY and is contractor 1's since today: it is not contractor
    1's substitute on DAY (the run is not made), and never flagged authorized."""
    k, assigned, other = await _one_route_drive_by_another(client, conn, people, people.other_contractor_id)
    await _move(conn, other, people.contractor_id, TODAY)
    (run,) = (await _boletim(client, people, k, DAY, DAY))["runs"]
    assert (run["status"], run["vehicle_id"], run["substitution"]) == ("not_made", assigned, False)
