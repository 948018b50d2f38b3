"""Scope and attribution by day (issue 33, items 1 and 7): a driver's card names a driver only among the drivers
of the contractor that had the vehicle that day, and a contractor reads a moved vehicle's track, trips and seals
of its own days only (migrations/0028_scope_by_day.sql)."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import asyncpg
import httpx
import pytest

from telemetria.localtime import LOCAL_TZ
from telemetria.seals import sealer
from tests.db.conftest import People
from tests.db.world import World, make_world

TODAY = datetime.now(LOCAL_TZ).date()
BEFORE, AFTER = TODAY - timedelta(days=4), TODAY - timedelta(days=2)  # the move is dated between them


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    return await make_world(conn, people)


async def _drive(conn: asyncpg.Connection, w: World, n: int, day: date, card: str | None = None) -> datetime:
    start = datetime.combine(day, datetime.min.time(), LOCAL_TZ) + timedelta(hours=7)
    await conn.executemany(
        "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon, speed_kmh, driver_id)"
        " VALUES ($1, $2, $3, $4, $5, 40, $6)",
        [(w[f"v{n}"], w[f"t{n}"], start + timedelta(seconds=30 * i), -10.44 + i * 3e-4, -62.46, card)
         for i in range(20)],
    )  # fmt: skip
    return start


async def _move(conn: asyncpg.Connection, vehicle: int, contractor: int, day: date) -> None:
    """Vehicle to `contractor` from local `day` on, as a registry edit dated that day would record it."""
    async with conn.transaction():
        await conn.execute("SELECT set_config('telemetria.effective_from', $1, true)", day.isoformat())
        await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", contractor, vehicle)


async def test_another_contractors_card_names_nobody_of_theirs(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    """Contractor 1's vehicle posts contractor 2's card: the driver is the assignment's, as for an unknown card."""
    await _drive(conn, world, 1, TODAY - timedelta(days=1), card="CARD2")
    start = await _drive(conn, world, 1, TODAY - timedelta(days=3), card="CARD1")
    own = await conn.fetchval("SELECT fix_driver($1, $2, 'CARD1')", world["v1"], start)
    foreign = await conn.fetchval("SELECT fix_driver($1, $2, 'CARD2')", world["v1"], start)
    unknown = await conn.fetchval("SELECT fix_driver($1, $2, 'NOBODY9')", world["v1"], start)
    assert (own, foreign, unknown) == (world["d1"], world["d1"], world["d1"])
    # Without an assignment the foreign card and an unknown one both resolve to nothing.
    await conn.execute("DELETE FROM driver_assignments WHERE id = $1", world["da1"])
    assert await conn.fetchval("SELECT fix_driver($1, $2, 'CARD2')", world["v1"], start) is None
    assert await conn.fetchval("SELECT fix_driver($1, $2, 'CARD1')", world["v1"], start) == world["d1"]
    # The live map and the trips report of contractor 1 never show contractor 2's driver's name.
    await conn.execute(
        "INSERT INTO latest_fixes (vehicle_id, last_ts, valid_ts, lat, lon, driver_id)"
        " VALUES ($1, now(), now(), -10.44, -62.46, 'CARD2')"
        " ON CONFLICT (vehicle_id) DO UPDATE SET valid_ts = now(), driver_id = 'CARD2'",
        world["v1"],
    )
    h = world.people.auth("contractor")
    live = await client.get("/api/v1/live", headers=h)
    assert live.status_code == 200 and "Condutor 2" not in live.text, live.text
    day = (TODAY - timedelta(days=1)).isoformat()
    trips = await client.get("/api/v1/reports/trips", params={"from": day, "to": day}, headers=h)
    assert trips.status_code == 200 and "Condutor 2" not in trips.text


async def test_a_card_follows_the_contractor_of_the_day(world: World, conn: asyncpg.Connection) -> None:
    """Vehicle 2 moves from contractor 2 to 1: contractor 1's card names its driver only from the move on."""
    await conn.execute("DELETE FROM driver_assignments")
    await _move(conn, world["v2"], world["c1"], AFTER - timedelta(days=1))
    before = datetime.combine(BEFORE, datetime.min.time(), LOCAL_TZ) + timedelta(hours=9)
    after = datetime.combine(AFTER, datetime.min.time(), LOCAL_TZ) + timedelta(hours=9)
    got = [await conn.fetchval("SELECT fix_driver($1, $2, $3)", world["v2"], at, card)
           for at, card in ((before, "CARD1"), (before, "CARD2"), (after, "CARD1"), (after, "CARD2"))]  # fmt: skip
    assert got == [None, world["d2"], world["d1"], None]


async def test_a_moved_vehicle_is_read_by_each_contractor_for_its_own_days(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection, people: People
) -> None:
    """Vehicle 2 was contractor 2's until the move, contractor 1's after: track, trips and seals follow the day."""
    await _drive(conn, world, 2, BEFORE)
    await _drive(conn, world, 2, AFTER)
    await _move(conn, world["v2"], world["c1"], AFTER - timedelta(days=1))
    for day in (BEFORE, AFTER):
        assert await sealer.seal_day(conn, world["v2"], day)
    span = {"from": BEFORE.isoformat(), "to": AFTER.isoformat(), "vehicle_id": str(world["v2"])}
    for role, days in (("contractor", {AFTER}), ("auditor", {BEFORE, AFTER})):
        h = people.auth(role)
        track = await client.get("/api/v1/reports/track", params=span, headers=h)
        assert track.status_code == 200, track.text
        assert {datetime.fromisoformat(p["time"]).date() for p in track.json()["positions"]} == days, role
        trips = await client.get("/api/v1/reports/trips", params=span, headers=h)
        assert {datetime.fromisoformat(t["start"]).date() for t in trips.json()["trips"]} == days, role
        seals = await client.get("/api/v1/seals", params=span, headers=h)
        assert {date.fromisoformat(s["date"]) for s in seals.json()["items"]} == days, role
