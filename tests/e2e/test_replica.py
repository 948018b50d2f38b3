"""Reports on a streaming replica: a hot standby of a local cluster (pg_basebackup -R, its own port and
socket directory) serves `app.state.reports_pool`, and sees what ingest writes on the primary."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import httpx
import pytest

from telemetria.app import create_app
from telemetria.ops.localdb import LocalDb
from telemetria.registry import fleet
from telemetria.reports.store.queries import last_fixes
from telemetria.settings import Settings
from tests.e2e.conftest import cli, free_port


@pytest.fixture
def standby(fresh_cluster_env: dict[str, str]) -> Iterator[tuple[Settings, LocalDb]]:
    """A started, migrated primary (the test's own cluster) and a hot standby streaming from it."""
    env = fresh_cluster_env
    cli(env, "db", "start")
    cli(env, "migrate")
    settings = Settings(data_dir=Path(env["TELEMETRIA_DATA_DIR"]), db_port=int(env["TELEMETRIA_DB_PORT"]))
    primary = LocalDb.from_settings(settings)
    replica = LocalDb(Path(tempfile.mkdtemp(prefix="telemetria-standby-", dir="/tmp")), free_port())
    replica.data_dir.chmod(0o755)
    try:
        replica.init_standby_of(primary)
        replica.start()  # its own telemetria.conf: its port, its socket directory
        yield settings, replica
    finally:
        replica.stop("immediate")
        shutil.rmtree(replica.data_dir, ignore_errors=True)


async def test_reports_read_from_the_standby_and_see_the_primary_writes(standby: tuple[Settings, LocalDb]) -> None:
    settings, replica = standby
    app = create_app(settings.model_copy(update={"reports_database_url": replica.url()}))
    async with app.router.lifespan_context(app):
        pool, reports = app.state.pool, app.state.reports_pool
        assert reports is not pool
        assert await pool.fetchval("SELECT pg_is_in_recovery()") is False
        assert await reports.fetchval("SELECT pg_is_in_recovery()") is True
        async with pool.acquire() as conn:
            token = (await fleet.add_tracker(conn, "rep-0001", (await fleet.add_vehicle(conn, "REP1A00"))["plate"]))[
                "token"
            ]
        ts = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as client:
            r = await client.post(
                "/api/v1/fixes",
                json={"ts": ts.isoformat(), "lat": -10.4, "lon": -62.4},
                headers={"Authorization": f"Bearer {token}"},
            )
            assert r.json()["accepted"] == 1
        seen = []
        for _ in range(100):  # streaming replication is asynchronous: usually milliseconds behind
            seen = await last_fixes(reports)
            if seen and seen[0].last_ts == ts:
                break
            await asyncio.sleep(0.1)
        assert [(f.plate, f.last_ts) for f in seen] == [("REP1A00", ts)]
        with pytest.raises(asyncpg.ReadOnlySQLTransactionError):
            await reports.execute("DELETE FROM fixes")

    plain = create_app(settings)
    async with plain.router.lifespan_context(plain):
        assert plain.state.reports_pool is plain.state.pool  # unset: reports use the primary
