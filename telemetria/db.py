"""Connection pool set-up and the migrations runner. No domain logic here."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any, TypeAlias

import asyncpg
import orjson

from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings

log = logging.getLogger(__name__)

Conn: TypeAlias = asyncpg.Connection
Pool: TypeAlias = asyncpg.Pool
# What a lost or refused database connection can look like from here: answered with 503, never
# 500. The server refuses connections with several SQLSTATE classes: 08 connection exception,
# 53 insufficient resources (too many connections), 57 operator intervention (shutdown, starting
# up), 58 system error, and 55000 (database not accepting connections).
# asyncpg's InternalClientError ("another operation is in progress") was seen on a connection
# the server had just dropped in an immediate shutdown: the connection is unusable, not the query.
DB_ERRORS = (asyncpg.PostgresError, asyncpg.InterfaceError, asyncpg.InternalClientError, OSError, TimeoutError)
_UNAVAILABLE_CLASSES = ("08", "53", "57", "58")


def is_unavailable(exc: BaseException) -> bool:
    """True when `exc` means the database cannot be reached now (retry later), not a bad query."""
    if isinstance(exc, asyncpg.PostgresError):
        state = getattr(exc, "sqlstate", "") or ""
        return state[:2] in _UNAVAILABLE_CLASSES or state in ("55000", "3D000")
    return isinstance(exc, asyncpg.InterfaceError | asyncpg.InternalClientError | OSError | TimeoutError)


# Shipped inside the package (package data), so a wheel carries them and no working directory matters.
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")
# Any constant works; it only keeps two migrators from running at once.
_MIGRATION_LOCK = 4_242_001


async def init_connection(conn: Conn) -> None:
    """Per-connection set-up: jsonb travels as orjson, not the stdlib json."""
    # Binary format, so that jsonb also travels in binary COPY (the ingest writer's path):
    # jsonb's binary form is a version byte (1) followed by the JSON text.
    await conn.set_type_codec(
        "jsonb",
        encoder=lambda v: b"\x01" + orjson.dumps(v),
        decoder=lambda b: orjson.loads(b[1:]),
        schema="pg_catalog",
        format="binary",
    )


async def connect(settings: Settings, dsn: str | None = None) -> Conn:
    """One connection set up like the pool's (for long-lived connections such as the writer's)."""
    conn = await asyncpg.connect(dsn or settings.dsn(), command_timeout=settings.db_command_timeout_s)
    await init_connection(conn)
    return conn


class DayPromotion:
    """The registry's versions whose day has come, applied to the current tables on a pool's first use of each
    local day (migrations/0033_registry_in_force_today.sql): by date, not by a timer that may not run. The
    database function is idempotent and takes turns, so every process and pool may call it; after the first
    call of a day the check is a comparison of dates, no query."""

    def __init__(self) -> None:
        self.done: date | None = None

    @staticmethod
    def today() -> date:
        return datetime.now(LOCAL_TZ).date()

    async def __call__(self, conn: Conn) -> None:
        today = self.today()
        if self.done == today:
            return
        try:
            await conn.execute("SELECT registry_promote($1)", today)
        except asyncpg.UndefinedFunctionError:
            return  # a database not migrated yet: the next use tries again
        except asyncpg.PostgresError as e:  # e.g. a read-only role (the reports' pool): not this pool's job
            log.warning("registry versions of %s not promoted by this pool: %s", today, e)
        self.done = today


async def create_pool(settings: Settings, dsn: str | None = None, *, promote: bool = True, **kw: Any) -> Pool:
    """A pool whose connections are set up by init_connection; with `promote`, each local day's first acquire
    applies the registry versions whose day has come (DayPromotion)."""
    if promote:
        kw.setdefault("setup", DayPromotion())
    pool = await asyncpg.create_pool(
        dsn or settings.dsn(),
        min_size=kw.pop("min_size", settings.db_pool_min),
        max_size=kw.pop("max_size", settings.db_pool_max),
        command_timeout=settings.db_command_timeout_s,
        init=init_connection,
        **kw,
    )
    assert pool is not None
    return pool


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    path: Path


def list_migrations(directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    found = []
    for path in sorted(directory.glob("*.sql")):
        m = _MIGRATION_NAME.match(path.name)
        if not m:
            raise ValueError(f"migration file name {path.name!r} is not NNNN_name.sql")
        found.append(Migration(int(m.group(1)), m.group(2), path))
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise ValueError("two migration files share a version number")
    return found


CREATE_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version    int PRIMARY KEY,
    name       text NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
)"""


async def migrate(conn: Conn, directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Apply the migrations not yet recorded, each in its own transaction; returns those applied."""
    applied: list[Migration] = []
    await conn.execute("SELECT pg_advisory_lock($1)", _MIGRATION_LOCK)
    try:
        await conn.execute(CREATE_MIGRATIONS_TABLE)
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
        for mig in list_migrations(directory):
            if mig.version in done:
                continue
            async with conn.transaction():
                await conn.execute(mig.path.read_text())
                await conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)", mig.version, mig.name
                )
            applied.append(mig)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", _MIGRATION_LOCK)
    return applied


async def pending_migrations(conn: Conn, directory: Path = MIGRATIONS_DIR) -> list[Migration]:
    """Migrations on disk that the database has not recorded (empty means current)."""
    exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
    done = set()
    if exists:
        done = {r["version"] for r in await conn.fetch("SELECT version FROM schema_migrations")}
    return [m for m in list_migrations(directory) if m.version not in done]
