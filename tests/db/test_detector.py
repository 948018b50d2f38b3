"""The detector on the real database: the ingest path's dirty marks, the store's writes, and whole rounds.

Rounds run the real rules (derive.py) over fixes posted through the real ingest path; the `now` of each round is
given, so live silence is decided at known instants.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.ingest.writer import SMALL_FLUSH_ROWS
from telemetria.occurrences import store
from telemetria.occurrences.model import Candidate, Kind, Status
from telemetria.occurrences.reconcile import NOTE_CHANGED, SILENCE_FILLED, Plan, Update, Withdrawal, reconcile
from tests.db.conftest import People, Tracker
from tests.db.world import World, make_world

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    await conn.execute("TRUNCATE detector_rescans; UPDATE detector_state SET rescanned_through = NULL")
    return await make_world(conn, people)


def fix(ts: datetime, lat: float = -10.44, lon: float = -62.47, speed: float = 30.0, **kw: Any) -> dict[str, Any]:
    return {"ts": ts.isoformat(), "lat": lat, "lon": lon, "speed_kmh": speed, **kw}


async def post(client: httpx.AsyncClient, token: str, fixes: list[dict[str, Any]]) -> dict[str, Any]:
    r = await client.post(
        "/api/v1/fixes",
        content=orjson.dumps({"fixes": fixes}),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    assert not answer["rejected"], answer
    return answer


async def token_of(conn: asyncpg.Connection, world: World, n: int) -> str:
    from telemetria.registry import fleet

    return await fleet.rotate_token(conn, f"86000000000000{n}")


async def mark(conn: asyncpg.Connection, vehicle_id: int) -> asyncpg.Record | None:
    row: asyncpg.Record | None = await conn.fetchrow(
        "SELECT dirty_from, dirty_at FROM latest_fixes WHERE vehicle_id = $1", vehicle_id
    )
    return row


# --- the ingest path's marks -------------------------------------------------------------------------------------


async def test_every_flush_path_marks_the_least_fix_time_it_stored(
    client: httpx.AsyncClient, conn: asyncpg.Connection, tracker: Tracker
) -> None:
    v = tracker.vehicle_id
    await post(client, tracker.token, [fix(T0 + timedelta(seconds=30 * k)) for k in range(3)])  # small flush
    first = await mark(conn, v)
    assert first is not None and first["dirty_from"] == T0
    # A late batch (older fixes, through COPY: more than the small-flush rows) lowers it and moves dirty_at.
    late = [fix(T0 - timedelta(hours=1) + timedelta(seconds=10 * k)) for k in range(SMALL_FLUSH_ROWS + 5)]
    await post(client, tracker.token, late)
    second = await mark(conn, v)
    assert second is not None and second["dirty_from"] == T0 - timedelta(hours=1)
    assert second["dirty_at"] > first["dirty_at"]
    # Newer fixes keep the least time but move dirty_at (the detector's clear must not forget them).
    await post(client, tracker.token, [fix(T0 + timedelta(minutes=5))])
    third = await mark(conn, v)
    assert third is not None and third["dirty_from"] == second["dirty_from"] and third["dirty_at"] > second["dirty_at"]
    # Re-sent fixes store nothing, so they mark nothing (both paths: the function, and the staged insert).
    await post(client, tracker.token, [fix(T0)])
    await post(client, tracker.token, late)
    assert await mark(conn, v) == third
    # The staged path (duplicates mixed with new fixes) marks its new ones.
    await conn.execute("UPDATE latest_fixes SET dirty_from = NULL")
    mixed = late + [fix(T0 - timedelta(hours=2) + timedelta(seconds=10 * k)) for k in range(3)]
    await post(client, tracker.token, mixed)
    fourth = await mark(conn, v)
    assert fourth is not None and fourth["dirty_from"] == T0 - timedelta(hours=2)


async def test_clearing_keeps_a_mark_made_after_it_was_read(
    client: httpx.AsyncClient, conn: asyncpg.Connection, tracker: Tracker
) -> None:
    await post(client, tracker.token, [fix(T0)])
    marks = await store.dirty(conn, 100)
    assert [(m.vehicle_id, m.dirty_from) for m in marks] == [(tracker.vehicle_id, T0)]
    await post(client, tracker.token, [fix(T0 + timedelta(seconds=30))])  # a flush between the read and the clear
    await store.clear_dirty(conn, marks)
    again = await store.dirty(conn, 100)
    assert [(m.vehicle_id, m.dirty_from) for m in again] == [(tracker.vehicle_id, T0)]
    await store.clear_dirty(conn, again)
    assert await store.dirty(conn, 100) == []


# --- the store's writes ------------------------------------------------------------------------------------------


async def insert_fix(
    conn: asyncpg.Connection, vehicle_id: int, ts: datetime, received: datetime, card: str | None
) -> None:
    await conn.execute(
        "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon, speed_kmh, driver_id, received_at)"
        " SELECT $1, i.tracker_id, $2, -10.44, -62.47, 70, $3, $4 FROM tracker_installations i WHERE i.vehicle_id = $1",
        vehicle_id,
        ts,
        card,
        received,
    )


async def history(conn: asyncpg.Connection, occurrence_id: int) -> list[tuple[str, str | None, str | None]]:
    rows = await conn.fetch(
        "SELECT action, to_status, text FROM occurrence_history WHERE occurrence_id = $1 ORDER BY id", occurrence_id
    )
    return [(r["action"], r["to_status"], r["text"]) for r in rows]


async def test_insert_resolves_contractor_driver_and_classification_and_marks_late(
    conn: asyncpg.Connection, world: World
) -> None:
    v = world["v1"]
    # The admin made speeding grave before this one was found: the occurrence copies what is in force.
    await conn.execute("UPDATE occurrence_kinds SET severity = 'grave' WHERE kind = 'speeding'")
    try:
        await insert_fix(conn, v, T0, T0 + timedelta(seconds=2), None)  # no card: the assigned driver
        await insert_fix(conn, v, T0 + timedelta(minutes=1), T0 + timedelta(minutes=40), None)  # arrived 39 min late
        await insert_fix(conn, v, T0 + timedelta(minutes=5), T0 + timedelta(minutes=5, seconds=3), None)
        late = Candidate(Kind.SPEEDING, v, T0, T0 + timedelta(minutes=1), facts={"max_kmh": 70.0, "limit_kmh": 60.0})
        live = Candidate(Kind.SPEEDING, v, T0 + timedelta(minutes=5), T0 + timedelta(minutes=5, seconds=1),
                         completed_ts=T0 + timedelta(minutes=5))  # fmt: skip
        async with conn.transaction():
            applied = await store.apply(conn, Plan(inserts=[late, live]), late_after_s=300)
    finally:
        await conn.execute("UPDATE occurrence_kinds SET severity = 'media' WHERE kind = 'speeding'")
    rows = await conn.fetch("SELECT * FROM occurrences WHERE id = ANY ($1) ORDER BY start_ts", applied.inserted)
    assert [r["late"] for r in rows] == [True, False]
    first = rows[0]
    assert (first["contractor_id"], first["driver_id"]) == (world["c1"], world["d1"])
    assert (first["article"], first["severity"], first["status"]) == ("Art. 37, X", "grave", "detected")
    assert first["completed_ts"] == T0 + timedelta(minutes=1) and first["received_at"] == T0 + timedelta(minutes=40)
    assert first["day"] == T0.astimezone(store.LOCAL_TZ).date() and first["facts"] == {
        "max_kmh": 70.0,
        "limit_kmh": 60.0,
    }
    assert await history(conn, first["id"]) == [("detected", "detected", None)]


async def test_updates_and_withdrawals_touch_only_detected_ones_and_notes_never_touch_facts(
    conn: asyncpg.Connection, world: World
) -> None:
    v = world["v1"]
    silence = Candidate(Kind.TRACKER_SILENT, v, T0, None, facts={"since": T0.isoformat()})
    speeding = Candidate(Kind.SPEEDING, v, T0, T0 + timedelta(minutes=1), facts={"max_kmh": 70.0})
    async with conn.transaction():
        s_id, p_id = (await store.apply(conn, Plan(inserts=[silence, speeding]), 300)).inserted
    await conn.execute("UPDATE occurrences SET status = 'confirmed' WHERE id = $1", p_id)  # as the process would
    grown = Candidate(Kind.SPEEDING, v, T0, T0 + timedelta(minutes=2), facts={"max_kmh": 88.0})
    stored = await store.stored_window(conn, v, T0 - timedelta(hours=1), T0 + timedelta(hours=1))
    plan = reconcile(stored, [grown], (T0 - timedelta(hours=1), T0 + timedelta(hours=1)))
    assert plan.withdrawals == [Withdrawal(s_id, SILENCE_FILLED)] and [n.id for n in plan.notes] == [p_id]
    async with conn.transaction():
        applied = await store.apply(conn, plan, 300)
    assert (applied.withdrawn, applied.noted, applied.inserted) == (1, 1, [])
    rows = {r["id"]: r for r in await conn.fetch("SELECT id, status, facts, end_ts FROM occurrences")}
    assert rows[s_id]["status"] == "withdrawn"
    assert rows[p_id]["facts"] == {"max_kmh": 70.0} and rows[p_id]["end_ts"] == T0 + timedelta(minutes=1)
    assert await history(conn, s_id) == [("detected", "detected", None), ("withdrawn", "withdrawn", SILENCE_FILLED)]
    assert await history(conn, p_id) == [("detected", "detected", None), ("note", "confirmed", NOTE_CHANGED)]
    # The same round again has nothing to say (the note's data is remembered).
    stored = await store.stored_window(conn, v, T0 - timedelta(hours=1), T0 + timedelta(hours=1))
    assert not reconcile(stored, [grown], (T0 - timedelta(hours=1), T0 + timedelta(hours=1)))
    # An update aimed at a row the process moved on meanwhile changes nothing.
    async with conn.transaction():
        again = await store.apply(conn, Plan(updates=[Update(p_id, grown)]), 300)
    assert again.updated == 0
    assert (await conn.fetchval("SELECT facts FROM occurrences WHERE id = $1", p_id)) == {"max_kmh": 70.0}
    # A withdrawn one the data supports again comes back, with a history row saying so.
    async with conn.transaction():
        back = await store.apply(conn, Plan(updates=[Update(s_id, silence, restore=True)]), 300)
    assert (
        back.updated == 1
        and await conn.fetchval("SELECT status FROM occurrences WHERE id = $1", s_id) == Status.DETECTED
    )
    assert (await history(conn, s_id))[-1][:2] == ("restored", "detected")
