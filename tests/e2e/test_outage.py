"""PostgreSQL stopped under load (fast, then immediate shutdown): trackers see 503, retry, and
every acknowledged fix is stored exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from telemetria.demo import ensure_fleet
from telemetria.settings import Settings
from telemetria.sim.runner import run_fleet
from tests.e2e.conftest import cli, serve


async def test_database_restarts_under_load_lose_nothing(fresh_cluster_env: dict[str, str]) -> None:
    env = fresh_cluster_env
    cli(env, "db", "start")
    cli(env, "migrate")
    settings = Settings(data_dir=Path(env["TELEMETRIA_DATA_DIR"]), db_port=int(env["TELEMETRIA_DB_PORT"]))
    conn = await asyncpg.connect(settings.dsn())
    try:
        creds = await ensure_fleet(conn, settings, 10, prefix="OUT")
    finally:
        await conn.close()

    async def outages() -> None:
        for mode in ("fast", "immediate"):
            await asyncio.sleep(2.5)
            await asyncio.to_thread(cli, env, "db", "stop", "--mode", mode)
            await asyncio.sleep(1.5)
            await asyncio.to_thread(cli, env, "db", "start")

    server = serve(env)
    url = next(server)
    try:
        stats, _ = await asyncio.gather(
            run_fleet(url, creds, interval_s=2, seed=11, speedup=30, duration_s=14), outages()
        )
    finally:
        server.close()

    conn = await asyncpg.connect(settings.dsn())
    try:
        stored = await conn.fetchval("SELECT count(*) FROM fixes")
        doubled = await conn.fetchval(
            "SELECT count(*) FROM (SELECT 1 FROM fixes GROUP BY vehicle_id, ts HAVING count(*) > 1) d"
        )
    finally:
        await conn.close()
    assert stats.by_status.get("503", 0) > 0, stats.summary()  # the outages were seen...
    assert set(stats.by_status) <= {"200", "503"}, stats.summary()  # ...as 503, never 500
    assert stored == stats.accepted and doubled == 0, stats.summary()
    # Every fix made (and every copy re-sent) was stored, answered as a duplicate, or still waits
    # in a tracker's buffer.
    assert stats.generated + stats.resent == stats.accepted + stats.duplicates + stats.pending, stats.summary()
