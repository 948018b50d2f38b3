"""The detector on the real database: the ingest path's dirty marks, the store's writes, and whole rounds.

Rounds run the real rules (derive.py) over fixes posted through the real ingest path; the `now` of each round is
given, so live silence is decided at known instants.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.ingest.writer import SMALL_FLUSH_ROWS
from telemetria.occurrences.detection import detector, store
from telemetria.occurrences.detection.detector import RoundStats
from telemetria.occurrences.detection.reconcile import NOTE_CHANGED, SILENCE_FILLED, Plan, Update, Withdrawal, reconcile
from telemetria.occurrences.model import Candidate, Kind, Status
from tests.db.conftest import People, Tracker
from tests.db.world import World, make_world

ALL_SLICES = detector.Part().slices

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    await conn.execute(
        "TRUNCATE detector_rescans, detector_run_days; UPDATE detector_state SET rescanned_through = NULL"
    )
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
    marks = await store.dirty(conn, 100, ALL_SLICES)
    assert [(m.vehicle_id, m.dirty_from) for m in marks] == [(tracker.vehicle_id, T0)]
    await post(client, tracker.token, [fix(T0 + timedelta(seconds=30))])  # a flush between the read and the clear
    await store.clear_dirty(conn, marks)
    again = await store.dirty(conn, 100, ALL_SLICES)
    assert [(m.vehicle_id, m.dirty_from) for m in again] == [(tracker.vehicle_id, T0)]
    # What it still waits for arrived after the read: its lag counts from then, not from the first mark.
    assert again[0].dirty_since == marks[0].read_at > marks[0].dirty_since
    await store.clear_dirty(conn, again)
    assert await store.dirty(conn, 100, ALL_SLICES) == []


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


async def test_a_run_is_the_contract_holders_and_late_is_judged_again_when_a_batch_completes_it(
    conn: asyncpg.Connection, world: World
) -> None:
    v = world["v1"]  # contractor c1's vehicle, making a run of c2's contract (another's vehicle: unauthorized)
    run = Candidate(Kind.UNAUTHORIZED_VEHICLE, v, T0, T0 + timedelta(hours=1), key="9:2026-03-02:1",
                    contractor_id=world["c2"])  # fmt: skip
    await insert_fix(conn, v, T0 + timedelta(minutes=10), T0 + timedelta(minutes=10, seconds=2), None)
    await insert_fix(conn, v, T0 + timedelta(minutes=12), T0 + timedelta(hours=2), None)  # store-and-forward
    live = Candidate(Kind.SPEEDING, v, T0 + timedelta(minutes=9), T0 + timedelta(minutes=10),
                     completed_ts=T0 + timedelta(minutes=10))  # fmt: skip
    async with conn.transaction():
        applied = await store.apply(conn, Plan(inserts=[run, live]), late_after_s=300)
    rows = await conn.fetch("SELECT * FROM occurrences WHERE id = ANY ($1) ORDER BY kind", applied.inserted)
    by_kind = {r["kind"]: r for r in rows}
    assert by_kind["unauthorized_vehicle"]["contractor_id"] == world["c2"]  # not the vehicle's owner, c1
    assert by_kind["speeding"]["contractor_id"] == world["c1"] and not by_kind["speeding"]["late"]
    # The batch showed the episode went on: the fix that completes it now arrived two hours late.
    longer = Candidate(Kind.SPEEDING, v, T0 + timedelta(minutes=9), T0 + timedelta(minutes=12),
                       completed_ts=T0 + timedelta(minutes=12))  # fmt: skip
    async with conn.transaction():
        await store.apply(conn, Plan(updates=[Update(by_kind["speeding"]["id"], longer)]), late_after_s=300)
    assert await conn.fetchval("SELECT late FROM occurrences WHERE id = $1", by_kind["speeding"]["id"])


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


# --- whole rounds, with the real rules -----------------------------------------------------------------------------

DAY = datetime(2026, 11, 30, tzinfo=store.LOCAL_TZ)  # a Monday; no school year registered: weekdays are due


def local(hh: int, mm: int, ss: int = 0) -> datetime:
    return DAY.replace(hour=hh, minute=mm, second=ss).astimezone(UTC)


def track(t0: datetime, t1: datetime, every_s: int = 30, speed: float = 25.0) -> list[dict[str, Any]]:
    """Fixes every `every_s` from t0 to t1 (inclusive) along the world's route line, garage → boarding → school."""
    (x0, y0), (x1, y1), (x2, y2) = LINE_POINTS
    span = (local(8, 10) - local(6, 50)).total_seconds()
    out = []
    t = t0
    while t <= t1:
        f = min(1.0, max(0.0, (t - local(6, 50)).total_seconds() / span)) * 2
        lon, lat = (
            (x0 + (x1 - x0) * f, y0 + (y1 - y0) * f) if f <= 1 else (x1 + (x2 - x1) * (f - 1), y1 + (y2 - y1) * (f - 1))
        )
        out.append(fix(t, lat=round(lat, 6), lon=round(lon, 6), speed=speed))
        t += timedelta(seconds=every_s)
    return out


LINE_POINTS = ((-62.4700, -10.4400), (-62.4650, -10.4400), (-62.4650, -10.4350))


async def schedule(conn: asyncpg.Connection, route_id: int) -> None:
    """The world's route gets its stops: the garage at 07:00, a boarding stop at 07:30, the school at 08:00."""
    (x0, y0), (x1, y1), (x2, y2) = LINE_POINTS
    await conn.executemany(
        "INSERT INTO route_stops (route_id, seq, name, lat, lon, kind, scheduled_time)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [
            (route_id, 1, "Garagem", y0, x0, "garage", local(7, 0).astimezone(store.LOCAL_TZ).time()),
            (route_id, 2, "Ponto 1", y1, x1, "boarding", local(7, 30).astimezone(store.LOCAL_TZ).time()),
            (route_id, 3, "Escola", y2, x2, "school", local(8, 0).astimezone(store.LOCAL_TZ).time()),
        ],
    )


async def occurrences(conn: asyncpg.Connection, vehicle_id: int, kind: Kind | None = None) -> list[asyncpg.Record]:
    return list(
        await conn.fetch(
            "SELECT * FROM occurrences WHERE vehicle_id = $1 AND ($2::text IS NULL OR kind = $2)"
            " ORDER BY start_ts, kind",
            vehicle_id,
            kind,
        )
    )


async def _silent_since_0710(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World
) -> tuple[str, int, RoundStats, asyncpg.Record]:
    """Vehicle 1 serves its route from 06:50 and falls silent at 07:10; the round of 07:20 finds it live."""
    await schedule(conn, world["r1"])
    token = await token_of(conn, world, 1)
    await post(client, token, track(local(6, 50), local(7, 10)))
    stats = await detector.run_round(pool, now=local(7, 20))
    [live] = await occurrences(conn, world["v1"], Kind.TRACKER_SILENT)
    return token, world["v1"], stats, live


async def test_a_silence_found_live_is_withdrawn_when_a_late_batch_fills_it(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World
) -> None:
    token, v, stats, live = await _silent_since_0710(client, conn, pool, world)
    assert stats.windows >= 1 and stats.failed == 0
    assert stats.lag_s is not None and 0 < stats.lag_s < 60 and stats.inserted == 1
    # Issue 34: silent from half an interval after the last fix (its fixes come every 30 s), bounded by that fix
    # and the next it would have sent.
    assert (live["status"], live["start_ts"], live["end_ts"]) == ("detected", local(7, 10, 15), None)
    assert live["facts"] == {"since": local(7, 10).isoformat(), "start_min": local(7, 10).isoformat(),
                             "start_max": local(7, 10, 30).isoformat()}  # fmt: skip
    assert live["route_id"] == world["r1"]
    assert not live["late"]
    # Again at the same instant: nothing new (idempotent), the mark is cleared.
    again = await detector.run_round(pool, now=local(7, 20))
    assert (again.inserted, again.updated, again.withdrawn) == (0, 0, 0)
    assert await store.dirty(conn, 10, ALL_SLICES) == []
    # The tracker's stored fixes arrive: no gap remains, so the live silence is withdrawn, with the reason.
    await post(client, token, track(local(7, 10, 30), local(7, 45)))
    stats = await detector.run_round(pool, now=local(7, 46))
    assert stats.withdrawn == 1
    [gone] = await occurrences(conn, v, Kind.TRACKER_SILENT)
    assert (gone["id"], gone["status"]) == (live["id"], "withdrawn")
    assert await history(conn, gone["id"]) == [
        ("detected", "detected", None),
        ("withdrawn", "withdrawn", SILENCE_FILLED),
    ]


async def test_a_silence_still_there_when_data_resumes_is_the_same_row_with_its_end(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World
) -> None:
    token, v, _, live = await _silent_since_0710(client, conn, pool, world)
    await post(client, token, track(local(7, 25), local(7, 45)))  # it resumes at 07:25: 15 min were never sent
    await detector.run_round(pool, now=local(7, 46))
    [gap] = await occurrences(conn, v, Kind.TRACKER_SILENT)
    assert (gap["id"], gap["status"], gap["start_ts"], gap["end_ts"]) == (
        live["id"],
        "detected",
        local(7, 10, 15),
        local(7, 24, 45),  # half an interval before the first fix after it (issue 34)
    )
    assert gap["facts"]["gap_s"] == 900
    assert [h[0] for h in await history(conn, gap["id"])] == ["detected", "updated"]


def _shape(rows: list[asyncpg.Record]) -> list[tuple[Any, ...]]:
    return [(r["kind"], r["start_ts"], r["end_ts"], orjson.dumps(r["facts"], option=orjson.OPT_SORT_KEYS))
            for r in rows if r["status"] == "detected"]  # fmt: skip


@pytest.mark.parametrize("read_ahead", ["chunk", "none"])
async def test_the_same_occurrences_whatever_the_arrival_order(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World, read_ahead: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """ "none": the chunk's read-ahead budget spent at once (chunkread.PREFETCH_FIXES), so every window reads its
    own day, as those past the budget do under a heavy day (bench.soak): the same occurrences."""
    from telemetria.occurrences.detection import chunkread, detector
    from tests.db.conftest import register

    if read_ahead == "none":
        monkeypatch.setattr(chunkread, "PREFETCH_FIXES", 0)

    await schedule(conn, world["r1"])
    # A morning with a 15-minute silence (07:10-07:25) and a speeding burst at 07:40.
    fixes = track(local(6, 50), local(7, 10)) + track(local(7, 25), local(8, 10))
    for f in fixes:
        if local(7, 40) <= datetime.fromisoformat(f["ts"]) <= local(7, 42):
            f["speed_kmh"] = 88.0
    chunks = [fixes[k : k + 20] for k in range(0, len(fixes), 20)]
    orders = {
        "in order": chunks,
        "reversed": chunks[::-1],
        "interleaved": chunks[1::2] + chunks[::2],
        "at once": [fixes],
    }
    shapes = {}
    for n, (name, order) in enumerate(orders.items()):
        t = await register(conn, f"ORD{n}A00", f"order-{n}")
        await conn.execute(
            "INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, '2026-02-01')",
            world["r1"],
            t.vehicle_id,
        )
        for chunk in order:
            await post(client, t.token, chunk)
            last = max(datetime.fromisoformat(f["ts"]) for f in chunk)
            assert (await detector.run_round(pool, now=last + timedelta(seconds=60))).failed == 0
        assert (await detector.run_round(pool, now=local(9, 30))).failed == 0
        shapes[name] = _shape(await occurrences(conn, t.vehicle_id))
    expected = shapes["at once"]
    assert any(s[0] == Kind.TRACKER_SILENT for s in expected) and any(s[0] == Kind.SPEEDING for s in expected)
    for name, shape in shapes.items():
        assert shape == expected, name


def _long_way_to_school() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Pupils board at Ponto 1 at 07:25; the vehicle then drives up and down the garage side of the line (never
    standing still) until 10:20, and reaches the school at 10:22: a leg to school of about 3 h. The fixes up to
    10:20, and those from then on."""
    (x0, y0), (x1, _), (x2, y2) = LINE_POINTS
    before: list[dict[str, Any]] = []
    t = local(7, 25)
    while t <= local(7, 32):  # standing at the boarding stop
        before.append(fix(t, lat=y0, lon=x1, speed=0.0))
        t += timedelta(seconds=30)
    while t <= local(10, 20):  # 550 m each way at 25 km/h: a triangle of 160 s
        phase = ((t - local(7, 32)).total_seconds() % 160) / 80
        f = phase if phase <= 1 else 2 - phase
        before.append(fix(t, lat=y0, lon=round(x1 + (x0 - x1) * f, 6), speed=25.0))
        t += timedelta(seconds=30)
    after = []
    while t <= local(10, 40):
        f = min(1.0, (t - local(10, 20)).total_seconds() / 80)  # at the school from 10:21:20 on
        after.append(fix(t, lat=round(y0 + (y2 - y0) * f, 6), lon=x2, speed=25.0 if f < 1 else 0.0))
        t += timedelta(seconds=30)
    return before, after


async def test_a_leg_to_school_longer_than_the_window_s_context_is_found_live(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World
) -> None:
    await schedule(conn, world["r1"])
    token = await token_of(conn, world, 1)
    before, after = _long_way_to_school()
    await post(client, token, before)
    assert (await detector.run_round(pool, now=local(10, 21))).failed == 0
    assert await occurrences(conn, world["v1"], Kind.OVER_2H_ON_BOARD) == []  # not at the school yet
    # The arrival at the school completes the leg, 2 h 55 min after the boarding: more than CONTEXT before the
    # change, yet found by this round, not only by the day's rescan.
    await post(client, token, after)
    assert (await detector.run_round(pool, now=local(10, 41))).failed == 0
    [leg] = await occurrences(conn, world["v1"], Kind.OVER_2H_ON_BOARD)
    assert local(10, 20) - detector.CONTEXT > leg["start_ts"] >= local(7, 25)
    assert leg["start_ts"] <= local(7, 26) and local(10, 20) <= leg["end_ts"] <= local(10, 23)
    assert leg["facts"]["leg"] == "to_school" and leg["facts"]["minutes"] > 170


async def test_late_marks_what_a_late_fix_completed_and_not_what_arrived_in_time(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World
) -> None:
    token = await token_of(conn, world, 1)
    v = world["v1"]
    real = datetime.now(UTC).replace(microsecond=0)
    burst = [fix(real - timedelta(seconds=240 - 30 * k), speed=88.0 if 2 <= k <= 5 else 30.0) for k in range(8)]
    await post(client, token, burst)  # live: sent as it happens
    old = [fix(local(7, 30) + timedelta(seconds=30 * k), speed=88.0 if 2 <= k <= 5 else 30.0) for k in range(8)]
    await post(client, token, old)  # days late (store-and-forward)
    assert (await detector.run_round(pool, now=real + timedelta(seconds=5))).failed == 0
    rows = await occurrences(conn, v, Kind.SPEEDING)
    late = {r["start_ts"].astimezone(UTC).date() == local(7, 30).date(): r for r in rows}
    assert len(rows) == 2, rows
    old_one, live_one = late[True], late[False]
    assert old_one["late"] and not live_one["late"]
    assert old_one["completed_ts"] is not None and old_one["received_at"] - old_one["completed_ts"] > timedelta(days=1)
    assert live_one["received_at"] - live_one["completed_ts"] < timedelta(seconds=300)


async def test_a_split_detector_works_each_part_s_vehicles_and_hands_run_days_to_the_first(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World
) -> None:
    from telemetria.occurrences.detection import queries

    await schedule(conn, world["r1"])
    await conn.execute("TRUNCATE detector_run_days")
    v1, v2 = world["v1"], world["v2"]
    tokens = [await token_of(conn, world, 1), await token_of(conn, world, 2)]
    for token in tokens:
        await post(client, token, track(local(6, 50), local(7, 10)))
    second = v1 if v1 % queries.SLICES % 2 == 1 else v2  # the vehicle of part 1 of 2
    first = v2 if second == v1 else v1
    one = await detector.run_round(pool, now=local(7, 20), part=detector.Part(1, 2))
    assert (one.windows, one.days, one.failed) == (1, 0, 0)
    assert [m.vehicle_id for m in await store.dirty(conn, 10, ALL_SLICES)] == [first]
    # The runs are the first part's to judge: the day the cleared change may decide was handed over to it.
    assert await conn.fetchval("SELECT array_agg(day) FROM detector_run_days") == [DAY.date()]
    zero = await detector.run_round(pool, now=local(7, 20), part=detector.Part(0, 2))
    # (the first part also queued the day before for its complete rescan, and rescanned its own vehicle's)
    assert (zero.windows - zero.rescans, zero.rescans, zero.failed) == (1, 1, 0) and zero.days >= 1
    assert await conn.fetchval("SELECT array_agg(vehicle_id) FROM detector_rescans") == [second]
    assert await store.dirty(conn, 10, ALL_SLICES) == []
    assert await conn.fetchval("SELECT count(*) FROM detector_run_days") == 0
    # Split or whole, the same occurrences: vehicle 1's live silence, found by whichever part holds it.
    [silent] = await occurrences(conn, v1, Kind.TRACKER_SILENT)
    assert (silent["start_ts"], silent["end_ts"]) == (local(7, 10, 15), None)
    # A slice another process holds is left to it: its vehicle's mark waits, the other vehicle's is cleared.
    for token in tokens:
        await post(client, token, track(local(7, 10, 30), local(7, 15)))
    slice_of_v1 = v1 % queries.SLICES
    async with pool.acquire() as other:
        await other.execute("SELECT pg_advisory_lock($1::int, $2::int)", queries.SLICE_LOCK, slice_of_v1)
        try:
            held = await detector.run_round(pool, now=local(7, 20))
        finally:
            await other.execute("SELECT pg_advisory_unlock($1::int, $2::int)", queries.SLICE_LOCK, slice_of_v1)
    assert held.windows - held.rescans == 1 and not held.skipped
    assert [m.vehicle_id for m in await store.dirty(conn, 10, ALL_SLICES)] == [v1]
    [still] = await occurrences(conn, v1, Kind.TRACKER_SILENT)
    assert (still["id"], still["status"]) == (silent["id"], "detected")
    after = await detector.run_round(pool, now=local(7, 20))
    assert after.windows - after.rescans == 1 and after.withdrawn == 1
    assert await store.dirty(conn, 10, ALL_SLICES) == []
    [filled] = await occurrences(conn, v1, Kind.TRACKER_SILENT)
    assert (filled["id"], filled["status"]) == (silent["id"], "withdrawn")


async def test_a_chunk_whose_registry_cannot_be_read_at_once_has_each_window_read_its_own(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from telemetria.occurrences.detection import derive
    from telemetria.reports.model import Selection

    real = derive.context.load

    async def only_one_at_a_time(c: Any, scope: Any, sel: Selection, win: Any) -> Any:
        if sel.vehicle_ids is not None and len(sel.vehicle_ids) > 1:
            raise RuntimeError("a chunk's read broke")
        return await real(c, scope, sel, win)

    monkeypatch.setattr(derive.context, "load", only_one_at_a_time)
    await schedule(conn, world["r1"])
    for n in (1, 2):
        await post(client, await token_of(conn, world, n), track(local(6, 50), local(7, 10)))
    stats = await detector.run_round(pool, now=local(7, 20))
    assert stats.windows - stats.rescans == 2 and stats.failed == 0
    assert await store.dirty(conn, 10, ALL_SLICES) == []
    [silent] = await occurrences(conn, world["v1"], Kind.TRACKER_SILENT)
    assert (silent["start_ts"], silent["end_ts"]) == (local(7, 10, 15), None)


async def test_a_chunk_takes_what_arrived_after_the_round_read_its_marks(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A vehicle reporting every 30 s is marked again while a long round works the chunks before its own: its
    chunk takes those fixes too and clears the mark, so a change waits about one round, not two."""
    token = await token_of(conn, world, 1)
    v = world["v1"]
    real = datetime.now(UTC).replace(microsecond=0)
    await post(client, token, [fix(real - timedelta(seconds=300 - 30 * k)) for k in range(4)])
    read = store.dirty

    async def then_a_burst_arrives(c: asyncpg.Connection, limit: int, slices: Any) -> list[store.Mark]:
        marks = await read(c, limit, slices)
        # Fix times after the round's `now`: they arrive while the round is under way.
        burst = [fix(real + timedelta(seconds=30 * k), speed=88.0 if k < 4 else 30.0) for k in range(5)]
        await post(client, token, burst)
        return marks

    monkeypatch.setattr(detector.store, "dirty", then_a_burst_arrives)
    stats = await detector.run_round(pool, now=real - timedelta(seconds=60))
    assert stats.failed == 0
    assert await read(conn, 10, ALL_SLICES) == []  # nothing left waiting for the next round
    [speeding] = await occurrences(conn, v, Kind.SPEEDING)
    # It starts at its first fix (the one before is 210 s away: no bound) and ends midway to the fix under the
    # limit 30 s after its last (issue 34).
    assert (speeding["start_ts"], speeding["end_ts"]) == (real, real + timedelta(seconds=105))


async def test_a_round_gives_way_to_a_busy_service_and_still_does_its_windows(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    from telemetria.occurrences.detection import yielding

    monkeypatch.setattr(yielding, "STEP_S", 0.05)
    monkeypatch.setattr(yielding, "MAX_PAUSE_S", 0.2)
    for n in (1, 2):
        await post(client, await token_of(conn, world, n), [fix(T0 + timedelta(seconds=30 * k)) for k in range(3)])
    busy = yielding.Gate(50.0, time.monotonic)  # a "service" using a whole core all along
    assert not busy.busy()  # its first sample, taken when the detector process starts
    await asyncio.sleep(0.06)
    stats = await detector.run_round(pool, now=T0 + timedelta(minutes=5), gate=busy)
    assert stats.failed == 0 and stats.windows == 4 and stats.rescans == 2  # the vehicles' days closed: rescanned
    assert stats.paused_s >= 2 * 0.2 and busy.paused_s == stats.paused_s  # before each, 0.2 s at most
    idle = yielding.Gate(50.0, lambda: 0.0)
    for n in (1, 2):
        await post(client, await token_of(conn, world, n), [fix(T0 + timedelta(minutes=2))])
    stats = await detector.run_round(pool, now=T0 + timedelta(minutes=5), gate=idle)
    assert stats.windows - stats.rescans == 2 and stats.paused_s == 0.0


async def _six_fixes_kept(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World
) -> tuple[str, int, datetime, datetime]:
    """Six fixes of vehicle 1 from 20 minutes ago, one detector round: the process keeps its day of six fixes.
    (token, vehicle id, the first fix's time, the start of its local day)"""
    from telemetria.reports.analysis.days import day_bounds

    token = await token_of(conn, world, 1)
    v = world["v1"]
    real = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)
    d0 = day_bounds(real.astimezone(detector.LOCAL_TZ).date())[0]
    await post(client, token, [fix(real + timedelta(seconds=30 * k)) for k in range(6)])
    assert (await detector.run_round(pool, now=real + timedelta(minutes=4))).failed == 0
    _, stamps = await store.dirty_of(conn, [v])
    kept = detector._KEPT.get(v, d0, stamps[v])
    assert kept is not None and len(kept) == 6
    return token, v, real, d0


async def test_a_round_reads_only_what_was_stored_since_unless_another_process_cleared_the_mark(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World
) -> None:
    """What a process kept of a vehicle's day (trackcache.py) plus what was stored from its dirty_from on is the
    day; but once another process cleared the mark in between, what it kept is stale and the day is read whole."""
    from telemetria.occurrences.detection import derive

    token, v, real, d0 = await _six_fixes_kept(client, conn, pool, world)

    # Kept and valid: the next round extends it with what arrived, and finds what a whole read finds.
    await post(client, token, [fix(real + timedelta(seconds=30 * k)) for k in range(6, 9)])
    now = real + timedelta(minutes=6)
    assert (await detector.run_round(pool, now=now)).failed == 0
    _, stamps = await store.dirty_of(conn, [v])
    kept = detector._KEPT.get(v, d0, stamps[v])
    assert kept is not None and len(kept) == 9
    computed = detector._KEPT.computed(v, d0, stamps[v])  # its analysis' values, for the next round's
    assert computed is not None and len(computed.per_fix.keep) == 9

    # Another process takes the vehicle (a speeding burst), clears its mark; then one more fix arrives.
    burst = [fix(real + timedelta(seconds=30 * k), speed=88.0 if k < 13 else 30.0) for k in range(9, 14)]
    await post(client, token, burst)
    marks, _ = await store.dirty_of(conn, [v])
    await store.clear_dirty(conn, list(marks.values()))  # as the other process would, having stored its own
    await post(client, token, [fix(real + timedelta(seconds=30 * 14))])
    now = real + timedelta(minutes=8)
    assert (await detector.run_round(pool, now=now)).failed == 0
    [speeding] = await occurrences(conn, v, Kind.SPEEDING)
    # Midway from the fixes under the limit around it to its first and last above (issue 34).
    assert (speeding["start_ts"], speeding["end_ts"]) == (real + timedelta(seconds=255), real + timedelta(seconds=375))
    _, stamps = await store.dirty_of(conn, [v])
    kept = detector._KEPT.get(v, d0, stamps[v])
    assert kept is not None and len(kept) == 15
    whole = await derive.window_candidates(conn, v, d0, now + timedelta(minutes=10), now=now)
    assert [c.kind for c in whole if c.start >= real] == [Kind.SPEEDING]


async def test_a_day_left_to_its_window_by_the_read_ahead_budget_is_not_kept_stale(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, world: World,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    """A kept day whose chunk's read-ahead budget is spent (chunkread.PREFETCH_FIXES) is read by its window, not
    by the chunk, so what the process kept of it is older than the day; the round then clears the vehicle's mark
    and restamps what is kept as current. Kept, it would be taken as the whole day next round (no mark: nothing
    stored since) and the fixes stored in between never analysed: it must be dropped."""
    from telemetria.occurrences.detection import chunkread

    token, v, real, d0 = await _six_fixes_kept(client, conn, pool, world)

    # Three more fixes today and a late one of the day before: the mark's dirty_from lies before today, so today's
    # kept day is read whole, and with the budget spent, by its window.
    await post(client, token, [fix(real + timedelta(seconds=30 * k)) for k in range(6, 9)])
    await post(client, token, [fix(real - timedelta(days=1))])
    monkeypatch.setattr(chunkread, "PREFETCH_FIXES", 0)
    assert (await detector.run_round(pool, now=real + timedelta(minutes=6))).failed == 0
    _, stamps = await store.dirty_of(conn, [v])
    kept = detector._KEPT.get(v, d0, stamps[v])
    assert kept is None or len(kept) == 9, len(kept)
