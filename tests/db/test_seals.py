"""Daily seals on the real database: sealed when the refresher closes a day, new versions for late fixes and tracker
moves, chained, fleet roots over the leaves, append-only; GET /api/v1/seals and the public roots."""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.app import create_app
from telemetria.localtime import LOCAL_TZ
from telemetria.ops import retention
from telemetria.registry import fleet
from telemetria.reports.store import rollup
from telemetria.seals import canonical, sealer, store
from tests.conftest import ScratchDb
from tests.db.conftest import People, Tracker, register

DAY = datetime.now(LOCAL_TZ).date() - timedelta(days=10)
NOON = datetime.combine(DAY, time(12), LOCAL_TZ).astimezone(UTC)


def fix(i: int, day: date = DAY) -> dict[str, Any]:
    """A fix i minutes after noon of `day`, north of Jaru; speed with more decimals than a line keeps."""
    ts = datetime.combine(day, time(12), LOCAL_TZ).astimezone(UTC) + timedelta(minutes=i, microseconds=250_000)
    return {"ts": ts.isoformat(), "lat": -10.43 + i * 0.0011, "lon": -62.4655, "speed_kmh": 38.26 + i}


async def post(client: httpx.AsyncClient, t: Tracker, fixes: list[dict[str, Any]]) -> None:
    r = await client.post(
        "/api/v1/fixes", content=orjson.dumps({"fixes": fixes}), headers={**t.auth, "Content-Type": "application/json"}
    )
    assert r.status_code == 200 and r.json()["accepted"] == len(fixes), r.text


async def refresh(pool: asyncpg.Pool) -> None:
    while await rollup.refresh(pool):
        pass


async def expected_lines(conn: asyncpg.Connection, vehicle_id: int, day: date = DAY) -> list[str]:
    """The canonical lines computed here, independently of the sealer's query, from the stored fixes."""
    start = datetime.combine(day, time(), LOCAL_TZ)
    rows = await conn.fetch(
        "SELECT ts, lat, lon, speed_kmh FROM fixes WHERE vehicle_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts",
        vehicle_id, start, start + timedelta(days=1),
    )  # fmt: skip
    return [canonical.line(r["ts"], r["lat"], r["lon"], r["speed_kmh"]) for r in rows]


async def seals_of(conn: asyncpg.Connection, vehicle_id: int, day: date = DAY) -> list[asyncpg.Record]:
    return await conn.fetch(
        "SELECT * FROM day_seals WHERE vehicle_id = $1 AND day = $2 ORDER BY version", vehicle_id, day
    )


async def roots_of(conn: asyncpg.Connection, day: date = DAY) -> list[asyncpg.Record]:
    return await conn.fetch("SELECT * FROM seal_roots WHERE day = $1 ORDER BY version", day)


@pytest.fixture
async def sealed(client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, clean: None) -> Tracker:
    """A vehicle with 10 fixes on DAY (a closed day), sealed by the refresher."""
    t = await register(conn, "SEL1A11", "seal-1", NOON - timedelta(days=30))
    await post(client, t, [fix(i) for i in range(0, 20, 2)])
    await refresh(pool)
    return t


async def test_a_closed_day_is_sealed_with_the_digest_of_its_fixes(conn: asyncpg.Connection, sealed: Tracker) -> None:
    [seal] = await seals_of(conn, sealed.vehicle_id)
    lines = await expected_lines(conn, sealed.vehicle_id)
    assert len(lines) == 10 and lines[0].endswith(";-62.465500;38.3\n")  # 38.26 km/h is written 38.3
    assert (seal["version"], seal["fixes"], seal["sha256"]) == (1, 10, canonical.digest(lines))
    assert seal["previous_sha256"] is None  # the vehicle's first sealed day
    assert seal["leaf_sha256"] == canonical.leaf(sealed.vehicle_id, DAY, 1, 10, seal["sha256"], None)
    assert (seal["added"], seal["removed"], seal["changes"]) == (0, 0, [])
    # Days without fixes (the sweep marks every day since the vehicle was registered) are not sealed.
    assert await conn.fetchval("SELECT count(*) FROM day_seals") == 1
    assert await store.version_lines(conn, sealed.vehicle_id, DAY, 1) == lines


async def test_refreshing_again_with_the_same_fixes_adds_no_version(
    pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    await conn.execute("INSERT INTO rollup_stale (vehicle_id, day) VALUES ($1, $2)", sealed.vehicle_id, DAY)
    await conn.execute("UPDATE rollup_horizon SET swept_through = NULL")  # refresh_all: every day marked again
    await refresh(pool)
    assert [s["version"] for s in await seals_of(conn, sealed.vehicle_id)] == [1]
    assert len(await roots_of(conn)) == 1


async def test_a_late_fix_gives_version_2_naming_the_added_line(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    before = await expected_lines(conn, sealed.vehicle_id)
    await post(client, sealed, [fix(5)])  # between two fixes already sealed
    await refresh(pool)
    v1, v2 = await seals_of(conn, sealed.vehicle_id)
    lines = await expected_lines(conn, sealed.vehicle_id)
    added = next(x for x in lines if x not in before)
    assert (v2["version"], v2["fixes"], v2["sha256"]) == (2, 11, canonical.digest(lines))
    assert v2["previous_sha256"] == v1["sha256"]
    assert (v2["added"], v2["removed"], v2["changes"]) == (1, 0, [{"op": "+", "line": added}])
    assert added.startswith(canonical.utc_second(datetime.fromisoformat(fix(5)["ts"])))
    # Both versions' lines can still be had: the old export verifies against version 1.
    assert await store.version_lines(conn, sealed.vehicle_id, DAY, 1) == before
    assert await store.version_lines(conn, sealed.vehicle_id, DAY, 2) == lines
    assert await store.version_lines(conn, sealed.vehicle_id, DAY, 3) is None
    # The fleet root follows: a second version pointing to the first, over the new leaf.
    r1, r2 = await roots_of(conn)
    assert r2["previous_sha256"] == r1["root_sha256"] and r2["version"] == 2
    assert r2["root_sha256"] == canonical.merkle_root([v2["leaf_sha256"]])
    assert [s.version for s in await store.refs_for(conn, [sealed.vehicle_id], NOON, NOON + timedelta(hours=1))] == [2]


async def test_a_pending_change_is_sealed_before_lines_are_given(
    client: httpx.AsyncClient, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    before = await expected_lines(conn, sealed.vehicle_id)
    await post(client, sealed, [fix(7)])  # the refresher has not run since
    assert await store.version_lines(conn, sealed.vehicle_id, DAY, 1) == before
    assert [s["version"] for s in await seals_of(conn, sealed.vehicle_id)] == [1, 2]


async def test_the_chain_links_a_vehicles_days(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    later, earlier = DAY + timedelta(days=2), DAY - timedelta(days=3)
    await post(client, sealed, [fix(i, later) for i in range(3)] + [fix(i, earlier) for i in range(4)])
    await refresh(pool)
    [first] = await seals_of(conn, sealed.vehicle_id, earlier)
    [middle] = await seals_of(conn, sealed.vehicle_id)
    [last] = await seals_of(conn, sealed.vehicle_id, later)
    assert last["previous_sha256"] == middle["sha256"]  # the latest seal of the latest earlier sealed day
    # A day sealed after a later one chains to what was sealed before it, not after; the later one is unchanged.
    assert first["previous_sha256"] is None and middle["previous_sha256"] is None
    assert [r["root_sha256"] for r in await roots_of(conn, later)] == [canonical.merkle_root([last["leaf_sha256"]])]


async def test_a_tracker_move_reseals_both_vehicles(
    pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    other = await fleet.add_vehicle(conn, "SEL2B22")
    old = await expected_lines(conn, sealed.vehicle_id)
    moved = await fleet.move_tracker(conn, sealed.unique_id, "SEL2B22", NOON + timedelta(minutes=11))
    assert moved.fixes_reattributed == 4  # 12, 14, 16, 18 past noon
    await refresh(pool)
    _, a2 = await seals_of(conn, sealed.vehicle_id)
    [b1] = await seals_of(conn, other["id"])
    assert (a2["fixes"], a2["added"], a2["removed"]) == (6, 0, 4)
    assert [c["op"] for c in a2["changes"]] == ["-"] * 4
    assert [c["line"] for c in a2["changes"]] == old[6:]
    assert (b1["version"], b1["fixes"], b1["sha256"]) == (1, 4, canonical.digest(old[6:]))
    assert await store.version_lines(conn, sealed.vehicle_id, DAY, 1) == old
    [root] = (await roots_of(conn))[-1:]
    leaves = sorted([(sealed.vehicle_id, a2["leaf_sha256"]), (other["id"], b1["leaf_sha256"])])
    assert root["vehicles"] == 2 and root["root_sha256"] == canonical.merkle_root([x for _, x in leaves])


async def test_no_root_while_a_vehicle_of_the_day_is_stale(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    await post(client, sealed, [fix(9)])  # marks the day
    await conn.execute("INSERT INTO rollup_stale (vehicle_id, day) VALUES (999999, $1)", DAY)  # marked after it
    assert await rollup.refresh(pool, limit=1) == 1
    assert len(await seals_of(conn, sealed.vehicle_id)) == 2
    assert len(await roots_of(conn)) == 1  # the day's root waits for its last stale vehicle-day
    await refresh(pool)
    assert len(await roots_of(conn)) == 2


async def test_a_day_retention_dropped_is_not_sealed_again_and_has_no_lines(
    pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    old = DAY - timedelta(days=800)  # older than the retention window: stored as a restore would
    noon = datetime.combine(old, time(12), LOCAL_TZ)
    for k in range(3):
        await conn.execute(
            "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon) VALUES ($1, $2, $3, -10.44, -62.47)",
            sealed.vehicle_id, sealed.id, noon + timedelta(minutes=k),
        )  # fmt: skip
    await conn.execute("UPDATE rollup_horizon SET swept_through = NULL")
    await refresh(pool)
    [seal] = await seals_of(conn, sealed.vehicle_id, old)
    assert seal["fixes"] == 3 and len(await store.version_lines(conn, sealed.vehicle_id, old, 1) or []) == 3

    dropped = await retention.run(conn, 730)
    assert any(h.hypertable.endswith("fixes") and h.chunks for h in dropped.hypertables)
    assert await store.version_lines(conn, sealed.vehicle_id, old, 1) is None
    await conn.execute("INSERT INTO rollup_stale (vehicle_id, day) VALUES ($1, $2)", sealed.vehicle_id, old)
    await refresh(pool)
    assert [s["version"] for s in await seals_of(conn, sealed.vehicle_id, old)] == [1]  # no empty version 2
    assert len(await store.version_lines(conn, sealed.vehicle_id, DAY, 1) or []) == 10  # the recent day is whole


async def waiting_for_a_lock(pool: asyncpg.Pool) -> None:
    """Until a session of the test database waits for an advisory lock."""
    for _ in range(500):
        if await pool.fetchval(
            "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
        ):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("nobody waited for the vehicle-day's lock")


async def test_lines_asked_while_the_refresher_seals_wait_and_seal_nothing_more(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    before = await expected_lines(conn, sealed.vehicle_id)
    await post(client, sealed, [fix(5)])  # a change not sealed yet: version_lines would seal it
    async with pool.acquire() as refresher, sealer.vehicle_day_locked(refresher, sealed.vehicle_id, DAY):
        asked = asyncio.create_task(store.version_lines(conn, sealed.vehicle_id, DAY, 1))
        await waiting_for_a_lock(pool)  # it waits for the lock before reading the fixes and the latest version
        assert await rollup.refresh_one(refresher, sealed.vehicle_id, DAY)  # the refresher seals version 2
    assert await asked == before
    _, v2 = await seals_of(conn, sealed.vehicle_id)  # and no version 3 from lines read before version 2
    [added] = [x for x in await expected_lines(conn, sealed.vehicle_id) if x not in before]
    assert v2["changes"] == [{"op": "+", "line": added}]


async def test_the_refresher_waits_for_a_seal_in_flight_and_computes_from_it(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    await post(client, sealed, [fix(5)])
    async with pool.acquire() as asking:
        tx = asking.transaction()  # version_lines sealing the late fix, not committed yet
        await tx.start()
        in_flight = await sealer.seal_current(asking, sealed.vehicle_id, DAY)
        assert in_flight is not None and (in_flight.version, in_flight.new) == (2, True)
        refreshing = asyncio.create_task(rollup.refresh_one(conn, sealed.vehicle_id, DAY))
        await waiting_for_a_lock(pool)  # before its snapshot: it will see version 2
        await tx.commit()
    assert await refreshing is False  # no primary-key conflict, nothing more to seal
    assert [s["version"] for s in await seals_of(conn, sealed.vehicle_id)] == [1, 2]
    assert not await conn.fetchval("SELECT count(*) FROM rollup_stale WHERE day = $1", DAY)


async def test_a_root_waits_for_a_seal_of_its_day_in_flight(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    await post(client, sealed, [fix(5)])
    await conn.execute("DELETE FROM rollup_stale")  # its root is due once version 2 is sealed
    async with pool.acquire() as asking:
        tx = asking.transaction()
        await tx.start()
        assert await sealer.seal_day(asking, sealed.vehicle_id, DAY)  # version 2, not committed yet
        rooting = asyncio.create_task(sealer.seal_root(conn, DAY))
        await waiting_for_a_lock(pool)
        await tx.commit()
    assert await rooting  # computed over version 2, with a later computed_at: nothing is due any more
    _, v2 = await seals_of(conn, sealed.vehicle_id)
    _, root = await roots_of(conn)
    assert root["root_sha256"] == canonical.merkle_root([v2["leaf_sha256"]]) and root["computed_at"] > v2["sealed_at"]
    assert await sealer.seal_roots(conn) == 0 and len(await roots_of(conn)) == 2


async def test_a_failed_refresh_leaves_no_day_without_its_root(
    client: httpx.AsyncClient,
    pool: asyncpg.Pool,
    conn: asyncpg.Connection,
    sealed: Tracker,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = DAY + timedelta(days=1)  # refreshed after DAY: marked after it, and a later day
    await post(client, sealed, [fix(5)])
    await conn.execute("INSERT INTO rollup_stale (vehicle_id, day) VALUES ($1, $2)", sealed.vehicle_id, broken)
    compute_day = rollup.compute_day

    async def failing(c: asyncpg.Connection, vehicle_id: int, day: date) -> Any:
        if day == broken:
            raise RuntimeError("the refresh of the day after fails")
        return await compute_day(c, vehicle_id, day)

    monkeypatch.setattr(rollup, "compute_day", failing)
    with pytest.raises(RuntimeError):
        await rollup.refresh(pool)
    [*_, v2] = await seals_of(conn, sealed.vehicle_id)
    [*_, root] = await roots_of(conn)  # DAY lost its mark: its root follows all the same
    assert (v2["version"], root["version"]) == (2, 2)
    assert root["root_sha256"] == canonical.merkle_root([v2["leaf_sha256"]])
    monkeypatch.undo()
    await refresh(pool)
    assert len(await roots_of(conn)) == 2 and not await roots_of(conn, broken)  # nothing more, nothing sealed there


async def test_seals_and_roots_are_append_only(conn: asyncpg.Connection, sealed: Tracker) -> None:
    for sql in (
        "UPDATE day_seals SET fixes = 0", "DELETE FROM day_seals", "UPDATE seal_roots SET vehicles = 0",
        "DELETE FROM seal_roots",
    ):  # fmt: skip
        with pytest.raises(asyncpg.InsufficientPrivilegeError, match="append-only"):
            await conn.execute(sql)


async def test_get_seals_lists_every_version_in_the_callers_scope(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People
) -> None:
    mine = await register(conn, "SEL3C33", "seal-3", NOON - timedelta(days=30))
    theirs = await register(conn, "SEL4D44", "seal-4", NOON - timedelta(days=30))
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id, mine.vehicle_id)
    await conn.execute(
        "UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.other_contractor_id, theirs.vehicle_id
    )
    await post(client, mine, [fix(0), fix(2)])
    await post(client, theirs, [fix(1)])
    await refresh(pool)
    await post(client, mine, [fix(4)])
    await refresh(pool)
    params = {"from": DAY.isoformat(), "to": DAY.isoformat()}

    r = await client.get("/api/v1/seals", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200 and r.headers["cache-control"] == "no-store"
    items = r.json()["items"]
    assert [(i["vehicle_id"], i["version"]) for i in items] == [(mine.vehicle_id, 1), (mine.vehicle_id, 2),
                                                                 (theirs.vehicle_id, 1)]  # fmt: skip
    v1, v2 = await seals_of(conn, mine.vehicle_id)
    assert items[1] == {
        "vehicle_id": mine.vehicle_id, "plate": "SEL3C33", "date": DAY.isoformat(), "version": 2, "fixes": 3,
        "sha256": v2["sha256"], "previous_sha256": v1["sha256"], "sealed_at": v2["sealed_at"].isoformat(),
    }  # fmt: skip

    r = await client.get("/api/v1/seals", params=params, headers=people.auth("contractor"))
    assert [i["vehicle_id"] for i in r.json()["items"]] == [mine.vehicle_id] * 2
    r = await client.get(
        "/api/v1/seals", params={**params, "vehicle_id": str(theirs.vehicle_id)}, headers=people.auth("contractor")
    )
    assert r.status_code == 404 and r.json()["field"] == "vehicle_id"
    r = await client.get("/api/v1/seals", params={**params, "to": "2020-01-01"}, headers=people.auth("auditor"))
    assert r.status_code == 400 and r.json()["field"] == "to"
    r = await client.get("/api/v1/seals", params={**params, "from": "ontem"}, headers=people.auth("auditor"))
    assert r.status_code == 400 and r.json()["field"] == "from"
    assert (await client.get("/api/v1/seals", params=params)).status_code == 401


async def test_public_roots_only_when_publication_is_on(
    client: httpx.AsyncClient, test_db: ScratchDb, conn: asyncpg.Connection, sealed: Tracker
) -> None:
    assert (await client.get("/public/seals")).status_code == 404  # off by default
    assert (await client.get(f"/public/seals/{DAY.isoformat()}")).status_code == 404

    app = create_app(test_db.settings(rollup_interval_s=0, public_enabled=True))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as public:
            r = await public.get("/public/seals")
            assert r.status_code == 200 and r.headers["cache-control"] == "public, max-age=300"
            [root] = await roots_of(conn)
            assert r.json()["items"] == [{
                "date": DAY.isoformat(), "version": 1, "root_sha256": root["root_sha256"], "previous_sha256": None,
                "vehicles": 1, "computed_at": root["computed_at"].isoformat(),
            }]  # fmt: skip
            r = await public.get(f"/public/seals/{DAY.isoformat()}")
            assert r.status_code == 200 and r.headers["cache-control"] == "public, max-age=300"
            body = r.json()
            [seal] = await seals_of(conn, sealed.vehicle_id)
            assert body["date"] == DAY.isoformat() and [x["version"] for x in body["roots"]] == [1]
            assert body["leaves"] == [{
                "vehicle_id": sealed.vehicle_id, "version": 1, "fixes": 10, "sha256": seal["sha256"],
                "previous_sha256": None, "leaf_sha256": seal["leaf_sha256"],
            }]  # fmt: skip
            assert canonical.merkle_root([x["leaf_sha256"] for x in body["leaves"]]) == root["root_sha256"]
            assert (await public.get(f"/public/seals/{(DAY + timedelta(days=1)).isoformat()}")).status_code == 404
            again = await public.get(f"/public/seals/{DAY.isoformat()}", headers={"If-None-Match": r.headers["etag"]})
            assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == r.headers["etag"]
            r = await public.get("/public/seals/2026-02-30")
            assert r.status_code == 400 and r.json()["field"] == "day"
