"""The simulator against the real server process: what the trackers were told is what is stored."""

from __future__ import annotations

import asyncpg

from telemetria.sim.demo import ensure_fleet
from telemetria.sim.runner import run_fleet
from tests.conftest import ScratchDb


async def test_simulated_fleet_lands_exactly_once(server: str, test_db: ScratchDb) -> None:
    settings = test_db.settings()
    conn = await asyncpg.connect(test_db.dsn)
    try:
        creds = await ensure_fleet(conn, settings, 4, prefix="SIE")
        before = await conn.fetchval("SELECT count(*) FROM fixes")
        # Six wall seconds at 120x: twelve simulated minutes of four vehicles, fixes every 10 s,
        # including buffered batches that re-send already-acknowledged fixes.
        stats = await run_fleet(server, creds, interval_s=10, seed=7, speedup=120, duration_s=6)
        stored = await conn.fetchval("SELECT count(*) FROM fixes") - before
        vehicles = await conn.fetchval(
            "SELECT count(DISTINCT f.vehicle_id) FROM fixes f JOIN vehicles v ON v.id = f.vehicle_id "
            "WHERE v.plate LIKE 'SIE%'"
        )
    finally:
        await conn.close()
    assert stats.generated > 100, stats.summary()
    assert stats.http_errors == 0 and stats.rejected == 0 and stats.dropped == 0, stats.summary()
    assert stored == stats.accepted, stats.summary()
    assert stats.acknowledged == stats.accepted + stats.duplicates
    # Every fix made (and every copy re-sent) was stored, answered as a duplicate, or still waits
    # in a tracker's buffer.
    assert stats.generated + stats.resent == stats.accepted + stats.duplicates + stats.pending, stats.summary()
    assert vehicles == 4
