"""PostgreSQL stopped under load (fast, then immediate shutdown): trackers see 503, retry, and
key by key every acknowledged fix is stored exactly once."""

from __future__ import annotations

import asyncio
from pathlib import Path

import asyncpg

from telemetria.settings import Settings
from telemetria.sim.demo import ensure_fleet
from telemetria.sim.outbox import KeyLedger
from telemetria.sim.runner import run_fleet
from tests.e2e.conftest import cli, serve
from tests.e2e.test_crash import assert_stored_once, stored_keys


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
    ledger = KeyLedger()
    try:
        stats, _ = await asyncio.gather(
            run_fleet(url, creds, interval_s=2, seed=11, speedup=30, duration_s=14, drain_s=15, ledger=ledger),
            outages(),
        )
    finally:
        server.close()

    rows, doubled = await stored_keys(settings.dsn(), [u for u, _ in creds])
    assert stats.by_status.get("503", 0) > 0, stats.summary()  # the outages were seen...
    assert set(stats.by_status) <= {"200", "503"}, stats.summary()  # ...as 503, never 500
    assert_stored_once(ledger, stats, rows, doubled)
