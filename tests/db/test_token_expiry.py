"""Personal API tokens expire: a year by default, another end or none only when asked for; an expired token is
refused with 401 naming when it expired; the expiry is in every answer that shows a token."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import httpx

from telemetria.db import MIGRATIONS_DIR, migrate
from tests.conftest import ScratchDb, _with_dbname
from tests.db.conftest import People, login


def parse(text: str) -> datetime:
    return datetime.fromisoformat(text)


async def test_a_token_expires_in_a_year_unless_asked_otherwise(client: httpx.AsyncClient, people: People) -> None:
    await login(client, "monitor")
    before = datetime.now(UTC)
    default = await client.post("/api/v1/tokens", json={"name": "export"})
    assert default.status_code == 201
    expires = parse(default.json()["expires_at"])
    assert before + timedelta(days=365) <= expires <= datetime.now(UTC) + timedelta(days=365)
    dated = await client.post("/api/v1/tokens", json={"name": "contract", "expires_at": "2031-03-02"})
    assert parse(dated.json()["expires_at"]) == datetime(2031, 3, 2, 4, tzinfo=UTC)  # local midnight, UTC−4
    never = await client.post("/api/v1/tokens", json={"name": "forever", "expires_at": None})
    assert never.status_code == 201 and never.json()["expires_at"] is None
    past = await client.post("/api/v1/tokens", json={"name": "late", "expires_at": "2020-01-01T00:00:00Z"})
    assert past.status_code == 400 and past.json()["field"] == "expires_at"
    listed = {t["name"]: t for t in (await client.get("/api/v1/tokens")).json()["items"]}
    assert parse(listed["export"]["expires_at"]) == expires and listed["export"]["expired"] is False
    assert listed["forever"]["expires_at"] is None and listed["forever"]["expired"] is False
    assert "late" not in listed


async def test_an_expired_token_is_refused_with_401_naming_its_expiry(
    client: httpx.AsyncClient, people: People, conn: asyncpg.Connection
) -> None:
    await login(client, "auditor")
    created = (await client.post("/api/v1/tokens", json={"name": "tce"})).json()
    client.cookies.clear()
    auth = {"Authorization": f"Bearer {created['token']}"}
    assert (await client.get("/api/v1/auth/me", headers=auth)).status_code == 200
    ended = await conn.fetchval(
        "UPDATE api_tokens SET expires_at = now() - interval '1 second', last_used_at = NULL WHERE id = $1"
        " RETURNING expires_at",
        created["id"],
    )
    r = await client.get("/api/v1/vehicles", headers=auth)
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    assert r.json()["detail"] == f"Authorization: API token expired at {ended.isoformat()}; create a new one"
    assert await conn.fetchval("SELECT last_used_at FROM api_tokens WHERE id = $1", created["id"]) is None
    await login(client, "auditor")
    [listed] = [t for t in (await client.get("/api/v1/tokens")).json()["items"] if t["id"] == created["id"]]
    assert listed["expired"] is True


def migrations_before(version: int, into: Path) -> Path:
    for path in MIGRATIONS_DIR.glob("*.sql"):
        if int(path.name[:4]) < version:
            shutil.copy(path, into)
    return into


async def test_the_migration_gives_existing_tokens_an_end_with_notice(test_db: ScratchDb, tmp_path: Path) -> None:
    """Tokens made before expiry existed get a year from their creation, and at least 30 days from the upgrade."""
    name = f"telemetria_tokmig_{os.getpid()}"
    admin = await asyncpg.connect(test_db.admin_dsn)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{name}"')
    conn = await asyncpg.connect(_with_dbname(test_db.dsn, name))
    try:
        await migrate(conn, migrations_before(8, tmp_path))
        user = await conn.fetchval(
            "INSERT INTO users (username, password_hash, role) VALUES ('old', 'x', 'admin') RETURNING id"
        )
        await conn.execute(
            "INSERT INTO api_tokens (user_id, name, token_hash, created_at) VALUES"
            " ($1, 'recent', 'a', now() - interval '10 days'), ($1, 'old', 'b', now() - interval '400 days')",
            user,
        )
        start = await conn.fetchval("SELECT now()")
        await migrate(conn)
        end = await conn.fetchval("SELECT now()")
        rows = {
            r["name"]: r
            for r in await conn.fetch("SELECT name, expires_at, created_at + interval '1 year' AS year FROM api_tokens")
        }
    finally:
        await conn.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
    assert rows["recent"]["expires_at"] == rows["recent"]["year"]
    assert start + timedelta(days=30) <= rows["old"]["expires_at"] <= end + timedelta(days=30)
