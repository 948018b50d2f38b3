"""`telemetria backup` then `telemetria restore` into a fresh database: same counts, same rows."""

from __future__ import annotations

import json
import shutil
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest

from telemetria.db import init_connection
from tests.conftest import ScratchDb, _with_dbname
from tests.db.conftest import register
from tests.e2e.conftest import cli

SAMPLE = """
SELECT vehicle_id, tracker_id, ts, received_at, lat, lon, speed_kmh, driver_id, attributes
FROM fixes ORDER BY vehicle_id, ts"""


@pytest.fixture
async def source(test_db: ScratchDb) -> AsyncIterator[asyncpg.Connection]:
    """The test database with a small fleet and fixes spread over several chunks."""
    conn = await asyncpg.connect(test_db.dsn)
    await init_connection(conn)
    await conn.execute("TRUNCATE fixes, tracker_installations, trackers, vehicles RESTART IDENTITY CASCADE")
    t1 = await register(conn, "BKP1A00", "bkp-0001")
    t2 = await register(conn, "BKP1A01", "bkp-0002")
    # Yesterday's noon (UTC): each day's 20 minutes stay inside one 1-day chunk whatever time the test runs
    # (at 00:10 UTC "now - 19 min" straddled midnight and each day made two chunks).
    now = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0) - timedelta(hours=12)
    rows = [
        (
            t.vehicle_id,
            t.id,
            now - timedelta(days=d, minutes=m),
            -10.4 - m / 1000,
            -62.4,
            30.0 + m,
            "CARD7",
            {"batt": m},
        )
        for t in (t1, t2)
        for d in (0, 3, 40)
        for m in range(20)
    ]
    await conn.copy_records_to_table(
        "fixes",
        records=rows,
        columns=["vehicle_id", "tracker_id", "ts", "lat", "lon", "speed_kmh", "driver_id", "attributes"],
    )
    yield conn
    await conn.close()


@pytest.fixture
async def empty_db(test_db: ScratchDb) -> AsyncIterator[str]:
    name = f"{test_db.name}_restore"
    admin = await asyncpg.connect(test_db.admin_dsn)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
        yield _with_dbname(test_db.dsn, name)
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


def read_backup(dump: Path) -> tuple[dict[str, Any], int]:
    """The manifest beside `dump`, and the dump's permission bits."""
    return json.loads(Path(f"{dump}.manifest.json").read_text()), dump.stat().st_mode & 0o777


def corrupt_copy(dump: Path, copy: Path) -> Path:
    """A copy of the backup with one byte of the dump flipped, beside the original manifest."""
    data = bytearray(dump.read_bytes())
    data[len(data) // 2] ^= 0xFF
    copy.write_bytes(bytes(data))
    shutil.copyfile(f"{dump}.manifest.json", f"{copy}.manifest.json")
    return copy


async def test_backup_and_restore_round_trip(
    source: asyncpg.Connection, empty_db: str, db_env: dict[str, str], tmp_path: Path
) -> None:
    dump = tmp_path / "nightly" / "telemetria.dump"
    out = json.loads(cli(db_env, "backup", "--out", str(dump)).stdout)
    manifest, mode = read_backup(dump)
    assert out["sha256"] == manifest["sha256"] and mode == 0o600
    assert manifest["tables"]["public.fixes"] == 120 and manifest["tables"]["public.vehicles"] == 2
    assert manifest["versions"]["timescaledb"] and manifest["versions"]["schema_migrations"][0] == 1
    lo, hi = await source.fetchrow("SELECT min(ts), max(ts) FROM fixes")
    assert manifest["time_ranges"]["public.fixes"] == {"column": "ts", "min": lo.isoformat(), "max": hi.isoformat()}

    restore_env = {**db_env, "TELEMETRIA_DATABASE_URL": empty_db}
    report = json.loads(cli(restore_env, "restore", str(dump)).stdout)
    assert report["verified"] is True and report["tables"] == manifest["tables"]

    target = await asyncpg.connect(empty_db)
    await init_connection(target)
    try:
        assert [dict(r) for r in await target.fetch(SAMPLE)] == [dict(r) for r in await source.fetch(SAMPLE)]
        chunks = "SELECT count(*) FROM timescaledb_information.chunks WHERE hypertable_name = 'fixes'"
        assert await source.fetchval(chunks) == 3
        assert await target.fetchval(chunks) == 3
        assert await target.fetchval("SHOW timescaledb.restoring") == "off"
        # The restored database takes new writes: identities continue after the restored rows.
        v = await target.fetchval("INSERT INTO vehicles (plate) VALUES ('NEW1A00') RETURNING id")
        assert v == 3
    finally:
        await target.close()

    again = cli(restore_env, "restore", str(dump), check=False)
    assert again.returncode == 1 and "not empty" in again.stderr

    bad = cli(restore_env, "restore", str(corrupt_copy(dump, tmp_path / "corrupt.dump")), check=False)
    assert bad.returncode == 1 and "sha256" in bad.stderr
