"""Moving a tracker re-attributes its stored fixes: the report rollups of both vehicles' days are stale then."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import asyncpg

from telemetria.localtime import LOCAL_TZ
from telemetria.registry import fleet
from telemetria.reports.store import rollup


async def _stale(conn: asyncpg.Connection) -> list[tuple[int, date]]:
    rows = await conn.fetch("SELECT DISTINCT vehicle_id, day FROM rollup_stale ORDER BY vehicle_id, day")
    return [(r["vehicle_id"], r["day"]) for r in rows]


async def test_a_move_marks_the_days_of_the_fixes_it_moves_on_both_vehicles(
    conn: asyncpg.Connection, clean: None
) -> None:
    a = await fleet.add_vehicle(conn, "MOV1A11")
    b = await fleet.add_vehicle(conn, "MOV1B22")
    tracker = await fleet.add_tracker(conn, "move-rollups-1", "MOV1A11")
    day = datetime.now(LOCAL_TZ).date() - timedelta(days=10)
    noon = datetime.combine(day, time(12), LOCAL_TZ)
    for k in range(5):  # one fix a minute around noon of a closed day, stored as vehicle A's
        await conn.execute(
            "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon) VALUES ($1, $2, $3, -10.44, -62.47)",
            a["id"], tracker["id"], noon + timedelta(minutes=k),
        )  # fmt: skip
    assert await rollup.close_days(conn, datetime.now(UTC)) is not None
    await conn.execute("DELETE FROM rollup_stale")  # as if the refresher had recomputed every closed day

    moved = await fleet.move_tracker(conn, "move-rollups-1", "MOV1B22", noon - timedelta(hours=4))

    assert moved.fixes_reattributed == 5
    assert await _stale(conn) == sorted([(a["id"], day), (b["id"], day)])


async def test_a_move_that_moves_no_fix_marks_nothing(conn: asyncpg.Connection, clean: None) -> None:
    await fleet.add_vehicle(conn, "MOV2A11")
    await fleet.add_vehicle(conn, "MOV2B22")
    await fleet.add_tracker(conn, "move-rollups-2", "MOV2A11")
    assert await rollup.close_days(conn, datetime.now(UTC)) is not None
    moved = await fleet.move_tracker(conn, "move-rollups-2", "MOV2B22", datetime.now(UTC))
    assert moved.fixes_reattributed == 0 and await _stale(conn) == []
