"""Shared fixtures: a fresh database on the real TimescaleDB for this run, migrated once."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

import asyncpg
import pytest
from hypothesis import settings as hypothesis_settings

from telemetria.db import create_pool, migrate
from telemetria.occurrences.model import DEFAULT_CLASSIFICATION
from telemetria.settings import Settings

# Property tests judge what the code answers, never how fast: the machine is shared and noisy, so Hypothesis's
# per-example deadline (200 ms) failed a property test under load with a seed that passes alone.
hypothesis_settings.register_profile("telemetria", deadline=None)
hypothesis_settings.load_profile("telemetria")


def _with_dbname(dsn: str, name: str) -> str:
    parts = urlsplit(dsn)
    return urlunsplit((parts.scheme, parts.netloc, f"/{name}", parts.query, parts.fragment))


@dataclass(frozen=True)
class ScratchDb:
    dsn: str
    admin_dsn: str
    name: str

    def settings(self, **overrides: object) -> Settings:
        """Settings on this database. The occurrence detector is off unless a test turns it on: a test decides
        when occurrences are detected (occurrences.detector.run_round), at the `now` it gives."""
        return Settings(database_url=self.dsn, **{"detector_interval_s": 0, **overrides})  # type: ignore[arg-type]


@pytest.fixture(scope="session")
def base_settings() -> Settings:
    settings = Settings()
    if not settings.database_url:
        from telemetria.ops.localdb import LocalDb

        LocalDb.from_settings(settings).start()
    return settings


@asynccontextmanager
async def scratch_database(base_settings: Settings, prefix: str) -> AsyncIterator[ScratchDb]:
    """A migrated database named `<prefix>_<pid>` (several runs may share the cluster), dropped afterwards."""
    admin_dsn = _with_dbname(base_settings.dsn(), "postgres")
    name = f"{prefix}_{os.getpid()}"
    admin = await asyncpg.connect(admin_dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    db = ScratchDb(_with_dbname(base_settings.dsn(), name), admin_dsn, name)
    conn = await asyncpg.connect(db.dsn)
    try:
        await migrate(conn)
    finally:
        await conn.close()
    try:
        yield db
    finally:
        admin = await asyncpg.connect(admin_dsn)
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            await admin.close()


@pytest.fixture(scope="session")
async def test_db(base_settings: Settings) -> AsyncIterator[ScratchDb]:
    """A database of its own for this run, dropped at the end."""
    async with scratch_database(base_settings, "telemetria_test") as db:
        yield db


@pytest.fixture(scope="session")
async def pool(test_db: ScratchDb) -> AsyncIterator[asyncpg.Pool]:
    p = await create_pool(test_db.settings(), min_size=1, max_size=4)
    yield p
    await p.close()


@pytest.fixture
async def conn(pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Connection]:
    async with pool.acquire() as c:
        yield c


@pytest.fixture
async def clean(pool: asyncpg.Pool) -> None:
    """Each database test starts from empty tables."""
    await pool.execute(
        "TRUNCATE fixes, latest_fixes, report_rollups, rollup_stale, tracker_installations, trackers, vehicles,"
        " contractors,"
        " drivers, driver_assignments, routes, route_stops, route_assignments, speed_zones, users, sessions,"
        " api_tokens, audit_log, retention_runs, school_years, school_calendar_days, contracts, contract_terms,"
        " registry_versions, day_seals, seal_roots, seal_lines, road_networks, road_ways, road_localities,"
        " detector_run_days, municipal_holidays, upfm_values"
        " RESTART IDENTITY CASCADE;"
        " UPDATE rollup_horizon SET closed_through = NULL, swept_through = NULL"
    )
    await reset_classification(pool)


async def reset_classification(db: asyncpg.Pool | asyncpg.Connection) -> None:
    """The occurrence kinds' classification back to the law's defaults (a test, or the fuzzer as an admin, may edit
    it; the table outlives TRUNCATE since it is the installation's setting, not data)."""
    await db.execute(
        "UPDATE occurrence_kinds k SET duty = d.duty, article = d.article, severity = d.severity, updated_by = NULL"
        " FROM unnest($1::text[], $2::text[], $3::text[], $4::text[]) AS d(kind, article, severity, duty)"
        " WHERE k.kind = d.kind",
        [k.value for k in DEFAULT_CLASSIFICATION],
        [c.article for c in DEFAULT_CLASSIFICATION.values()],
        [c.severity.value if c.severity else None for c in DEFAULT_CLASSIFICATION.values()],
        [c.duty for c in DEFAULT_CLASSIFICATION.values()],
    )
