"""Retention on the real TimescaleDB: exactly the chunks entirely older than the window go, on every
hypertable; a dry run lists the same; the service's periodic task runs it once per interval."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest

from telemetria.app import create_app
from telemetria.ops import retention
from tests.conftest import ScratchDb

DAYS = 731
INSERT_FIX = "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon) VALUES (1, 1, $1, -10.43, -62.47)"
CHUNKS = """
SELECT format('%I.%I', chunk_schema, chunk_name) AS chunk, range_start, range_end
FROM timescaledb_information.chunks WHERE hypertable_name = $1 ORDER BY range_start"""


async def chunks(conn: asyncpg.Connection, hypertable: str = "fixes") -> dict[str, tuple[datetime, datetime]]:
    return {r["chunk"]: (r["range_start"], r["range_end"]) for r in await conn.fetch(CHUNKS, hypertable)}


async def shown(conn: asyncpg.Connection, hypertable: str = "fixes") -> set[str]:
    return {r[0] for r in await conn.fetch(f"SELECT show_chunks('{hypertable}')::text")}


@pytest.fixture
async def audit_log(conn: asyncpg.Connection) -> AsyncIterator[str]:
    """The audit log: a second hypertable (time column `at`, 30-day chunks), kept as long as the fixes."""
    await conn.execute("TRUNCATE audit_log")
    yield "audit_log"
    await conn.execute("TRUNCATE audit_log")


@pytest.fixture
async def history(conn: asyncpg.Connection, clean: None) -> datetime:
    """Fixes 800 and 700 days old, just either side of the chunk holding the cutoff, and recent."""
    await conn.execute("TRUNCATE retention_runs")
    now = datetime.now(UTC)
    cutoff = now - timedelta(days=DAYS)
    cutoff_day = cutoff.replace(hour=0, minute=0, second=0, microsecond=0)  # 1-day chunks start at 00:00 UTC
    for ts in (
        now - timedelta(days=800),
        cutoff_day - timedelta(minutes=1),  # its chunk ends at cutoff_day <= cutoff: dropped
        cutoff_day + (cutoff - cutoff_day) / 2,  # older than the cutoff, but in the chunk holding it: kept
        now - timedelta(days=700),
        now - timedelta(hours=1),
    ):
        await conn.execute(INSERT_FIX, ts)
    return now


async def test_drops_exactly_the_chunks_entirely_older_than_the_window(conn, history, audit_log) -> None:
    now = history
    cutoff = now - timedelta(days=DAYS)
    for days in (900, 800, 100):
        await conn.execute("INSERT INTO audit_log (at, action) VALUES ($1, 'x')", now - timedelta(days=days))
    before = await chunks(conn)
    assert set(before) == await shown(conn) and len(before) == 5
    expect_gone = {c for c, (_, end) in before.items() if end <= cutoff}
    assert len(expect_gone) == 2  # the 800-day-old chunk and the one just before the cutoff's
    audit_before = await chunks(conn, audit_log)
    audit_gone = {c for c, (_, end) in audit_before.items() if end <= cutoff}
    assert len(audit_gone) == 2

    dry = await retention.run(conn, DAYS, dry_run=True, now=now)
    listed = {h.hypertable: {c.name for c in h.chunks} for h in dry.hypertables}
    # Every hypertable is covered: the report rollups and the sealer's lines too (empty here).
    assert listed == {
        "public.fixes": expect_gone, "public.audit_log": audit_gone, "public.report_rollups": set(),
        "public.seal_lines": set(),
    }  # fmt: skip
    assert dry.cutoff == cutoff and await shown(conn) == set(before)  # nothing dropped
    assert await conn.fetchval("SELECT count(*) FROM retention_runs") == 0

    done = await retention.run(conn, DAYS, now=now)
    assert {h.hypertable: {c.name for c in h.chunks} for h in done.hypertables} == listed
    assert await shown(conn) == set(before) - expect_gone
    assert await shown(conn, audit_log) == set(audit_before) - audit_gone
    fixes = await conn.fetchval("SELECT count(*) FROM fixes")
    oldest = await conn.fetchval("SELECT min(ts) FROM fixes")
    assert fixes == 3 and oldest < cutoff  # the chunk holding the cutoff stays whole
    by_table = {h.hypertable: h for h in done.hypertables}
    assert by_table["public.fixes"].oldest_kept == min(s for c, (s, _) in before.items() if c not in expect_gone)
    assert (
        by_table["public.fixes"].oldest_kept == {h.hypertable: h for h in dry.hypertables}["public.fixes"].oldest_kept
    )
    run = await conn.fetchrow("SELECT * FROM retention_runs")
    assert run["cutoff"] == cutoff and run["retention_days"] == DAYS and len(run["chunks"]) == 4
    out = done.as_json()
    assert out["cutoff"] == cutoff.isoformat() and len(out["hypertables"][0]["dropped"]) == 2

    again = await retention.run(conn, DAYS, now=now)
    assert again.chunk_count == 0


async def test_windows_under_two_years_are_refused(conn, history) -> None:
    with pytest.raises(retention.RetentionError, match=r"Art\. 15"):
        await retention.run(conn, 729, now=history)
    assert len(await shown(conn)) == 5


async def test_run_if_due_runs_once_per_interval_and_one_process_at_a_time(pool, conn, history) -> None:
    async with pool.acquire() as other:
        await other.execute("SELECT pg_advisory_lock($1)", retention.RETENTION_LOCK)
        try:
            assert await retention.run_if_due(pool, DAYS, 3600) is None  # another process holds it
        finally:
            await other.execute("SELECT pg_advisory_unlock($1)", retention.RETENTION_LOCK)
    first = await retention.run_if_due(pool, DAYS, 3600)
    assert first is not None and first.chunk_count == 2
    assert await retention.run_if_due(pool, DAYS, 3600) is None  # ran less than an hour ago
    assert await retention.run_if_due(pool, DAYS, 0.001) is not None


async def test_the_service_runs_retention_in_the_background(test_db: ScratchDb, conn, history) -> None:
    app = create_app(test_db.settings(retention_interval_s=0.2))
    async with app.router.lifespan_context(app):
        for _ in range(100):
            if len(await shown(conn)) == 3:
                break
            await asyncio.sleep(0.1)
    assert len(await shown(conn)) == 3
    assert await conn.fetchval("SELECT source FROM retention_runs ORDER BY id LIMIT 1") == "service"
