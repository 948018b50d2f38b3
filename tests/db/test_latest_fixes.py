"""latest_fixes, each vehicle's newest fix, against the brute-force newest fix in `fixes`.

The writer keeps the table in the transaction that stores the fixes, through each of its three paths
(the small-flush function, COPY, the staged insert that sorts out duplicates). Whatever arrives
(batches out of order and late, concurrent requests, re-sent fixes with other content, invalid
fixes) and whatever later deletes or moves stored fixes (retention, a tracker moved), the table
must hold exactly what a look through every chunk of `fixes` finds.
"""

from __future__ import annotations

import asyncio
import random
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson

from telemetria.ingest.writer import SMALL_FLUSH_ROWS
from telemetria.ops import retention
from telemetria.registry import fleet
from tests.db.conftest import People, Tracker, register

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=6)
KEYS = 2_000  # fix times per vehicle: T0 + 7 s × k

COLUMNS = "last_ts, valid_ts, received_at, lat, lon, speed_kmh, heading_deg, ignition, driver_id"
TABLE = f"SELECT vehicle_id, {COLUMNS} FROM latest_fixes ORDER BY vehicle_id"
# The newest fix of each vehicle (valid or not) and its newest valid fix, looked up in every chunk.
BRUTE_FORCE = """
SELECT v.id AS vehicle_id, n.last_ts, p.ts AS valid_ts, p.received_at, p.lat, p.lon, p.speed_kmh,
       p.heading_deg, p.ignition, p.driver_id
FROM vehicles v
JOIN LATERAL (SELECT max(f.ts) AS last_ts FROM fixes f WHERE f.vehicle_id = v.id) n ON n.last_ts IS NOT NULL
LEFT JOIN LATERAL (SELECT * FROM fixes f WHERE f.vehicle_id = v.id AND f.valid ORDER BY f.ts DESC LIMIT 1) p ON true
ORDER BY v.id"""


async def table_and_truth(conn: asyncpg.Connection) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return [dict(r) for r in await conn.fetch(TABLE)], [dict(r) for r in await conn.fetch(BRUTE_FORCE)]


def random_fix(rng: random.Random, ts: datetime, valid_share: float = 0.75) -> dict[str, Any]:
    """A fix at `ts` with content drawn anew on every call: a re-sent key differs from the stored one."""
    return {
        "ts": ts.isoformat(),
        "lat": round(rng.uniform(-10.50, -10.40), 6),
        "lon": round(rng.uniform(-62.50, -62.40), 6),
        "speed_kmh": round(rng.uniform(0, 80), 1),
        "heading_deg": round(rng.uniform(0, 359), 0),
        "ignition": rng.random() < 0.5,
        "driver_id": rng.choice([None, "CARD1", "CARD2"]),
        "valid": rng.random() < valid_share,
    }


async def post(client: httpx.AsyncClient, tracker: Tracker, fixes: list[dict[str, Any]]) -> dict[str, Any]:
    r = await client.post(
        "/api/v1/fixes",
        content=orjson.dumps({"fixes": fixes}),
        headers={**tracker.auth, "Content-Type": "application/json"},
    )
    assert r.status_code == 200, r.text
    answer: dict[str, Any] = r.json()
    assert not answer["rejected"], answer
    return answer


async def fleet_of(conn: asyncpg.Connection, n: int) -> list[Tracker]:
    return [await register(conn, f"LAT{i}A{i:02d}", f"latest-{i}") for i in range(n)]


async def test_random_out_of_order_batches_duplicates_and_invalid_fixes(
    client: httpx.AsyncClient, conn: asyncpg.Connection, clean: None
) -> None:
    rng = random.Random(14)
    trackers = await fleet_of(conn, 4)
    unsent = {t.vehicle_id: rng.sample(range(KEYS), KEYS) for t in trackers}  # in random order

    def batch(t: Tracker, n: int, fresh: bool) -> list[dict[str, Any]]:
        """n fixes of t's vehicle: never sent (fresh) or drawn with replacement from every key (re-sends)."""
        keys = [unsent[t.vehicle_id].pop() for _ in range(n)] if fresh else [rng.randrange(KEYS) for _ in range(n)]
        return [random_fix(rng, T0 + timedelta(seconds=7 * k)) for k in keys]

    sizes = [1, 1, 2, 5, SMALL_FLUSH_ROWS, SMALL_FLUSH_ROWS + 1, 150]  # each side of the small-flush limit
    accepted = duplicates = 0
    split = 0  # checks where some vehicle's newest fix was invalid, so the two notions differed
    for _ in range(12):
        # Concurrent requests, so a flush holds several of them and two flushers write at once; half
        # of them re-send fixes already stored or twice in one batch (the staged insert, for large
        # flushes). Then, alone, a large and a small batch of new fixes: the COPY path and the
        # small-flush function. Keys come in random order: batches are late and out of order.
        sent = [(t, batch(t, rng.choice(sizes), rng.random() < 0.5)) for t in rng.choices(trackers, k=10)]
        sent += [(t, batch(t, n, True)) for t, n in zip(rng.sample(trackers, 2), (100, 3), strict=True)]
        answers = await asyncio.gather(*(post(client, t, fixes) for t, fixes in sent[:-2]))
        answers += [await post(client, t, fixes) for t, fixes in sent[-2:]]
        accepted += sum(a["accepted"] for a in answers)
        duplicates += sum(a["duplicates"] for a in answers)
        table, truth = await table_and_truth(conn)
        assert table == truth
        split += any(r["last_ts"] != r["valid_ts"] for r in truth)
    assert accepted > 1000 and duplicates > 300 and split > 0, (accepted, duplicates, split)

    # The migration's backfill derives the same table from the fixes alone.
    await conn.execute("TRUNCATE latest_fixes")
    await conn.execute("SELECT refresh_latest_fixes(NULL)")
    assert await table_and_truth(conn) == (truth, truth)


async def test_a_re_sent_fix_never_changes_the_table(
    client: httpx.AsyncClient, conn: asyncpg.Connection, clean: None
) -> None:
    """Not even when the copy claims to be valid where the stored fix was not: the stored fix counts."""
    rng = random.Random(5)
    (t,) = await fleet_of(conn, 1)
    newest = T0 + timedelta(hours=1)
    await post(client, t, [random_fix(rng, T0, valid_share=1.0), random_fix(rng, newest, valid_share=0.0)])
    before, _ = await table_and_truth(conn)
    for n in (1, SMALL_FLUSH_ROWS):  # with n older fixes: through the function, then through the staged insert
        older = [random_fix(rng, T0 - timedelta(seconds=100 * n + k)) for k in range(n)]
        answer = await post(client, t, [*older, random_fix(rng, newest, valid_share=1.0)])
        assert answer["duplicates"] == 1
        assert await table_and_truth(conn) == (before, before)


async def test_a_late_batch_never_moves_the_newest_fix_back(
    client: httpx.AsyncClient, conn: asyncpg.Connection, clean: None
) -> None:
    rng = random.Random(1)
    (t,) = await fleet_of(conn, 1)
    newest = T0 + timedelta(hours=1)
    await post(client, t, [random_fix(rng, newest, valid_share=1.0)])
    before, _ = await table_and_truth(conn)
    for n in (1, SMALL_FLUSH_ROWS + 1):  # through the function, then through COPY
        late = [random_fix(rng, T0 + timedelta(seconds=7 * k), valid_share=1.0) for k in range(n)]
        await post(client, t, late)
        assert await table_and_truth(conn) == (before, before)
    # Only invalid fixes newer than the position: the newest fix moves on, the position stays.
    await post(client, t, [random_fix(rng, newest + timedelta(seconds=30), valid_share=0.0)])
    table, truth = await table_and_truth(conn)
    assert table == truth and table[0]["last_ts"] > table[0]["valid_ts"] == newest


async def test_a_vehicle_with_only_invalid_fixes_has_no_position(
    client: httpx.AsyncClient, conn: asyncpg.Connection, clean: None
) -> None:
    rng = random.Random(2)
    (t,) = await fleet_of(conn, 1)
    await post(client, t, [random_fix(rng, T0 + timedelta(seconds=k), valid_share=0.0) for k in range(3)])
    table, truth = await table_and_truth(conn)
    assert table == truth and table[0]["valid_ts"] is None and table[0]["lat"] is None


async def test_a_tracker_moved_takes_its_newest_fixes_to_the_other_vehicle(
    client: httpx.AsyncClient, conn: asyncpg.Connection, clean: None
) -> None:
    rng = random.Random(3)
    a, b = await fleet_of(conn, 2)
    await post(client, a, [random_fix(rng, T0 + timedelta(seconds=10 * k)) for k in range(100)])
    await post(client, b, [random_fix(rng, T0 + timedelta(seconds=10 * k + 3)) for k in range(50)])
    result = await fleet.move_tracker(conn, a.unique_id, "LAT1A01", T0 + timedelta(seconds=600))
    assert (result.fixes_reattributed, result.fixes_dropped_as_duplicates) == (40, 0)
    table, truth = await table_and_truth(conn)
    assert table == truth and table[0]["last_ts"] == T0 + timedelta(seconds=590)
    assert table[1]["last_ts"] == T0 + timedelta(seconds=990)


async def test_retention_leaves_each_vehicle_its_newest_remaining_fix(
    client: httpx.AsyncClient, conn: asyncpg.Connection, clean: None
) -> None:
    rng = random.Random(4)
    gone, position_gone, kept = await fleet_of(conn, 3)
    now = datetime.now(UTC).replace(microsecond=0)
    old, recent = now - timedelta(days=4), now - timedelta(hours=1)
    await post(client, gone, [random_fix(rng, old, valid_share=1.0)])
    await post(client, position_gone, [random_fix(rng, old, valid_share=1.0)])
    await post(client, position_gone, [random_fix(rng, recent, valid_share=0.0)])
    await post(client, kept, [random_fix(rng, old, valid_share=1.0), random_fix(rng, recent, valid_share=1.0)])
    # Two years on, less two days: the chunk of the old fixes lies entirely before the cutoff.
    run = await retention.run(conn, 731, now=now + timedelta(days=729))
    assert sum(len(h.chunks) for h in run.hypertables if h.hypertable == "public.fixes") >= 1
    table, truth = await table_and_truth(conn)
    assert table == truth
    rows = {r["vehicle_id"]: r for r in table}
    assert gone.vehicle_id not in rows
    assert rows[position_gone.vehicle_id]["valid_ts"] is None and rows[position_gone.vehicle_id]["last_ts"] == recent
    assert rows[kept.vehicle_id]["valid_ts"] == recent


async def test_the_reads_show_the_newest_fix_and_the_live_map_the_newest_valid_one(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    rng = random.Random(6)
    (t,) = await fleet_of(conn, 1)
    now = datetime.now(UTC).replace(microsecond=0)
    position, newest = now - timedelta(minutes=20), now - timedelta(minutes=5)
    shown = random_fix(rng, position, valid_share=1.0)
    await post(client, t, [shown, random_fix(rng, newest, valid_share=0.0)])
    await post(client, t, [random_fix(rng, position - timedelta(minutes=1))])  # late: changes nothing

    vehicles = (await client.get("/api/v1/vehicles", headers=people.auth("admin"))).json()["items"]
    assert [datetime.fromisoformat(v["last_fix_at"]) for v in vehicles] == [newest]
    metrics = (await client.get("/metrics")).text
    age = next(line for line in metrics.splitlines() if line.startswith("telemetria_vehicle_last_fix_age_seconds{"))
    assert 300 <= float(age.rsplit(" ", 1)[1]) < 360
    live = (await client.get("/api/v1/live", headers=people.auth("admin"))).json()["vehicles"]
    assert [(datetime.fromisoformat(v["time"]), v["lat"], v["lon"]) for v in live] == [
        (position, shown["lat"], shown["lon"])
    ]
