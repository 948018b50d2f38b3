import asyncio, time, cProfile, pstats
from datetime import UTC, datetime, timedelta
from bench.benchdb import BenchDb
from bench import detector as bd
from telemetria.settings import Settings
from telemetria.db import create_pool
from telemetria.occurrences import derive

async def main():
    db = BenchDb.for_this_run(Settings())
    await db.create()
    try:
        fleet = await bd.register(db, 30)
        pool = await create_pool(Settings(database_url=db.dsn))
        now = datetime.now(UTC)
        async with pool.acquire() as conn:
            await derive.window_candidates(conn, fleet[0].vehicle_id, now - timedelta(hours=2, minutes=30), now, now=now)
            pr = cProfile.Profile(); pr.enable()
            t = time.perf_counter()
            for v in fleet:
                await derive.window_candidates(conn, v.vehicle_id, now - timedelta(hours=2, minutes=30), now, now=now)
            print("per window ms", (time.perf_counter() - t) / len(fleet) * 1000)
            pr.disable()
        pstats.Stats(pr).sort_stats("cumulative").print_stats(35)
        await pool.close()
    finally:
        await db.drop()
asyncio.run(main())
