"""`telemetria retention|rollup|backup|restore`: keeping the data."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

from telemetria.cli.common import Subparsers, emit, run_db
from telemetria.settings import Settings


def cmd_retention(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.ops import retention

    async def run(conn: Any) -> Any:
        return (await retention.run(conn, settings.retention_days, dry_run=args.dry_run, source="cli")).as_json()

    emit(run_db(settings, run))


def cmd_rollup(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.db import create_pool
    from telemetria.reports.store import rollup

    async def run() -> int:
        pool = await create_pool(settings, min_size=1)
        try:
            if args.all:
                return await rollup.refresh_all(pool)
            done = 0
            while n := await rollup.refresh(pool):
                done += n
            return done
        finally:
            await pool.close()

    emit({"recomputed_vehicle_days": asyncio.run(run())})


def cmd_backup(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.ops.backup import backup

    _reachable(settings)
    manifest = backup(settings.dsn(), args.out)
    emit({"dump": str(args.out.resolve()), "manifest": str(args.out.resolve()) + ".manifest.json", **manifest})


def cmd_restore(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.ops.backup import restore

    _reachable(settings)
    emit(restore(settings.dsn(), args.file))


def _reachable(settings: Settings) -> None:
    async def ping(conn: Any) -> None:
        await conn.fetchval("SELECT 1")

    run_db(settings, ping)


def add_commands(sub: Subparsers) -> None:
    """Add the `retention`, `rollup`, `backup`, `restore` commands to the `telemetria` parser."""
    ret = sub.add_parser("retention", help="drop data older than the retention window (every hypertable)")
    rsub = ret.add_subparsers(dest="action", required=True)
    rrun = rsub.add_parser("run", help="drop whole chunks older than TELEMETRIA_RETENTION_DAYS")
    rrun.add_argument("--dry-run", action="store_true", help="list what would be dropped, drop nothing")
    ret.set_defaults(func=cmd_retention)

    rol = sub.add_parser("rollup", help="report rollups per vehicle and day")
    rosub = rol.add_subparsers(dest="action", required=True)
    rref = rosub.add_parser("refresh", help="recompute the stale ones now (the service does it every minute)")
    rref.add_argument("--all", action="store_true", help="every vehicle-day with fixes (after a restore or bulk load)")
    rol.set_defaults(func=cmd_rollup)

    bak = sub.add_parser("backup", help="pg_dump (custom format) of the database plus a manifest beside it")
    bak.add_argument("--out", type=Path, required=True, help="dump file; the manifest is FILE.manifest.json")
    bak.set_defaults(func=cmd_backup)

    res = sub.add_parser("restore", help="restore a backup into the (empty) database TELEMETRIA_DATABASE_URL names")
    res.add_argument("file", type=Path, help="the dump written by `telemetria backup`")
    res.set_defaults(func=cmd_restore)
