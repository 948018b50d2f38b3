"""The benches' key lookup on the real database: stored rows grouped by request number, gaps and strays seen."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from bench.benchdb import BenchDb
from bench.copy_ceiling import COLUMNS, build_chunks
from bench.keys import Run, Stored, account
from telemetria.settings import Settings
from tests.conftest import scratch_database

MS = timedelta(milliseconds=1)


async def test_stored_rows_come_back_as_runs_of_request_numbers(base_settings: Settings) -> None:
    async with scratch_database(base_settings, "telemetria_benchkeys") as scratch:
        db = BenchDb(scratch.name, scratch.dsn, scratch.admin_dsn)
        *fleet, stray = await db.register_fleet(4)  # the last one is not in the phase's fleet
        ids = [v.tracker_id for v in fleet]
        base = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1)
        rows = [r for chunk in build_chunks(fleet, base, 30) for r in chunk]  # row r is request g = r of one fix
        del rows[17]  # request 17 lost
        strays = [
            (stray.vehicle_id, stray.tracker_id, base + 2 * MS, *rows[0][3:]),  # unknown tracker
            (fleet[0].vehicle_id, fleet[0].tracker_id, base + 50 * MS + timedelta(microseconds=500), *rows[0][3:]),
        ]
        outside = (fleet[1].vehicle_id, fleet[1].tracker_id, base + timedelta(hours=2), *rows[0][3:])
        conn = await db.connect(jsonb_codec=False)
        try:
            await conn.copy_records_to_table("fixes", records=[*rows, *strays, outside], columns=COLUMNS)
        finally:
            await conn.close()

        stored, off = await db.stored_runs(base, base + timedelta(minutes=5), MS, 1, ids)
        assert stored == [Stored(0, 17, 1, 1), Stored(18, 12, 1, 1)]
        assert off == 2

        # The same rows as requests of 5 fixes: g = k * 3 + t with k = step // 5, and row 17 (step 5,
        # tracker 2) belonged to request 5, which is one short.
        batches, _ = await db.stored_runs(base, base + timedelta(minutes=5), MS, 5, ids)
        assert batches == [Stored(0, 5, 5, 5), Stored(5, 1, 4, 4)]

        a = account([Run(0, 30, 200)], stored, 1, off_grid_rows=off)
        assert (a.lost, a.unsent, a.stored) == (1, 2, 31)
