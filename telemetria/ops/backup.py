"""Backup and restore: a pg_dump custom-format file plus a JSON manifest beside it.

`backup` exports a snapshot, counts every table's rows (and each hypertable's time range) in it
and runs pg_dump on the same snapshot, so the manifest describes exactly what the dump holds
even while trackers keep posting. `restore` checks the dump's sha256 against the manifest,
refuses a target database that is not empty, follows TimescaleDB's procedure
(timescaledb_pre_restore → pg_restore → timescaledb_post_restore) and compares the restored
database with the manifest.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import asyncpg
import orjson

from telemetria import __version__
from telemetria.db import Conn
from telemetria.ops import queries as q
from telemetria.ops.localdb import pg_bin

MANIFEST_SUFFIX = ".manifest.json"
FORMAT = "pg_dump custom (-Fc), compressed"
_VERSION = re.compile(r"\d+\.\d+\.\d+")


class BackupError(RuntimeError):
    pass


def manifest_path(dump: Path) -> Path:
    return dump.with_name(dump.name + MANIFEST_SUFFIX)


def libpq_target(dsn: str) -> tuple[str, dict[str, str]]:
    """(dsn without its password, environment for the client tools): a password never shows in `ps`."""
    parts = urlsplit(dsn)
    env: dict[str, str] = {}
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, host = netloc.rsplit("@", 1)
        user, sep, password = userinfo.partition(":")
        if sep:
            env["PGPASSWORD"] = unquote(password)
            netloc = f"{user}@{host}"
    query = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "password":
            env["PGPASSWORD"] = value
        else:
            query.append((key, value))
    # Built by hand: urlunsplit drops the empty host of postgresql:///db?host=/socket/dir.
    text = f"{parts.scheme}://{netloc}{parts.path}"
    return (f"{text}?{urlencode(query, safe='/')}" if query else text), env


async def _tool(name: str, *args: str, dsn: str) -> None:
    exe = pg_bin() / name
    if not exe.exists():
        raise BackupError(f"{exe} not found: install postgresql-client-15 (or set TELEMETRIA_PG_BIN)")
    target, env = libpq_target(dsn)
    proc = await asyncio.create_subprocess_exec(
        str(exe),
        f"--dbname={target}",
        *args,
        env={**os.environ, **env},
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.PIPE,
    )
    _, err = await proc.communicate()
    if proc.returncode != 0:
        raise BackupError(f"{name} failed ({proc.returncode}): {err.decode(errors='replace').strip()}")


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


async def database_facts(conn: Conn) -> dict[str, Any]:
    """Row counts per table, each hypertable's time range, and the versions that must match on restore."""
    ranges = {r["hypertable"]: r["time_column"] for r in await conn.fetch(q.HYPERTABLES)}
    tables: dict[str, int] = {}
    time_ranges: dict[str, dict[str, Any]] = {}
    for (name,) in await conn.fetch(q.USER_TABLES):
        # `name` comes from the catalog, quoted by format('%I.%I').
        if name in ranges:
            col = f'"{ranges[name]}"'
            r = await conn.fetchrow(f"SELECT count(*) AS n, min({col}) AS lo, max({col}) AS hi FROM {name}")
            time_ranges[name] = {"column": ranges[name], "min": _iso(r["lo"]), "max": _iso(r["hi"])}
        else:
            r = await conn.fetchrow(f"SELECT count(*) AS n FROM {name}")
        tables[name] = r["n"]
    migrations = await conn.fetchval(q.MIGRATIONS_APPLIED) if "public.schema_migrations" in tables else []
    return {
        "tables": tables,
        "time_ranges": time_ranges,
        "versions": {
            "postgresql": await conn.fetchval(q.SERVER_VERSION),
            "timescaledb": await conn.fetchval(q.TIMESCALEDB_VERSION),
            "schema_migrations": list(migrations),
        },
    }


def _iso(t: Any) -> str | None:
    return t.isoformat() if isinstance(t, datetime) else (None if t is None else str(t))


def backup(dsn: str, out: Path) -> dict[str, Any]:
    """Write `out` (pg_dump -Fc) and `out`.manifest.json from one snapshot; returns the manifest."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(out.name + ".partial")
    # The dump holds tokens' hashes and drivers' card codes: readable by its owner only.
    partial.touch(mode=0o600)
    os.chmod(partial, 0o600)
    try:
        facts = asyncio.run(_dump(dsn, partial))
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    manifest = {
        "format": FORMAT,
        "dump": out.name,
        "bytes": partial.stat().st_size,
        "sha256": sha256_of(partial),
        "created_at": datetime.now(UTC).isoformat(),
        "telemetria": __version__,
        **facts,
    }
    partial.replace(out)
    manifest_path(out).write_bytes(orjson.dumps(manifest, option=orjson.OPT_INDENT_2) + b"\n")
    return manifest


async def _dump(dsn: str, file: Path) -> dict[str, Any]:
    """pg_dump into `file` and count rows, both in one exported snapshot; returns the counts."""
    conn = await asyncpg.connect(dsn)
    try:
        async with conn.transaction(isolation="repeatable_read", readonly=True):
            snapshot = await conn.fetchval(q.EXPORT_SNAPSHOT)
            dump = asyncio.create_task(
                _tool("pg_dump", "--format=custom", f"--snapshot={snapshot}", f"--file={file}", dsn=dsn)
            )
            try:
                return await database_facts(conn)  # counted in the snapshot pg_dump reads
            finally:
                await dump  # the snapshot must stay exported until pg_dump has finished
    finally:
        await conn.close()


def read_manifest(dump: Path) -> dict[str, Any]:
    path = manifest_path(dump)
    try:
        manifest: dict[str, Any] = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise BackupError(f"{path} not found: a backup is the dump and its manifest beside it") from None
    except orjson.JSONDecodeError as e:
        raise BackupError(f"{path} is not valid JSON: {e}") from None
    if not isinstance(manifest, dict) or not {"sha256", "tables", "versions"} <= manifest.keys():
        raise BackupError(f"{path} is not a telemetria backup manifest")
    return manifest


def restore(dsn: str, dump: Path) -> dict[str, Any]:
    """Restore `dump` into the empty database `dsn` and check it against the manifest."""
    manifest = read_manifest(dump)
    digest = sha256_of(dump)
    if digest != manifest["sha256"]:
        raise BackupError(f"{dump}: sha256 {digest} does not match the manifest's {manifest['sha256']}: corrupt copy")
    tsdb = str(manifest["versions"].get("timescaledb") or "")
    if not _VERSION.fullmatch(tsdb):
        raise BackupError(f"manifest names no usable TimescaleDB version ({tsdb!r})")
    facts = asyncio.run(_restore(dsn, dump, tsdb))
    problems = compare(manifest, facts)
    if problems:
        raise BackupError("restored database differs from the manifest: " + "; ".join(problems))
    return {
        "restored": str(dump),
        "sha256": digest,
        "verified": True,
        "tables": facts["tables"],
        "time_ranges": facts["time_ranges"],
        "versions": facts["versions"],
    }


async def _restore(dsn: str, dump: Path, tsdb: str) -> dict[str, Any]:
    conn = await asyncpg.connect(dsn)
    try:
        found = [r[0] for r in await conn.fetch(q.FOREIGN_RELATIONS)]
        if found:
            raise BackupError(
                f"the target database is not empty (it has {', '.join(found)}); restore needs an empty one"
            )
        row = await conn.fetchrow(q.TIMESCALEDB_AVAILABLE)
        if row is None:
            raise BackupError("TimescaleDB is not installed on the target server")
        installed = row["installed_version"]
        if installed and installed != tsdb:
            raise BackupError(f"the target has TimescaleDB {installed}; the dump needs {tsdb} (versions must match)")
        try:
            # `tsdb` was checked to be digits and dots by the caller.
            await conn.execute(f"CREATE EXTENSION IF NOT EXISTS timescaledb VERSION '{tsdb}'")
        except asyncpg.PostgresError as e:
            raise BackupError(f"cannot create TimescaleDB {tsdb} on the target: {e}") from None
        await conn.execute("SELECT timescaledb_pre_restore()")
        try:
            await _tool("pg_restore", "--no-owner", "--exit-on-error", str(dump), dsn=dsn)
        finally:
            await conn.execute("SELECT timescaledb_post_restore()")
        return await database_facts(conn)
    finally:
        await conn.close()


def compare(manifest: dict[str, Any], facts: dict[str, Any]) -> list[str]:
    """What differs between a manifest and a database's facts (empty: they agree)."""
    problems = []
    want, got = manifest["tables"], facts["tables"]
    for name in sorted(want.keys() | got.keys()):
        if want.get(name) != got.get(name):
            problems.append(f"{name}: {got.get(name)} rows, manifest says {want.get(name)}")
    if manifest.get("time_ranges", {}) != facts["time_ranges"]:
        problems.append(f"time ranges {facts['time_ranges']} differ from the manifest's {manifest.get('time_ranges')}")
    if manifest["versions"].get("schema_migrations") != facts["versions"]["schema_migrations"]:
        problems.append("schema migrations differ from the manifest's")
    return problems
