"""`telemetria db start|stop|status|url` (the project-local cluster) and `telemetria migrate`."""

from __future__ import annotations

import argparse
import sys

from telemetria.cli.common import CliError, Subparsers, emit, run_db
from telemetria.settings import Settings


def cmd_db(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.ops.localdb import LocalDb

    if settings.database_url and args.action != "url":
        raise CliError("TELEMETRIA_DATABASE_URL is set: the local database is not used")
    db = LocalDb.from_settings(settings)
    if args.action == "start":
        started = db.start()
        print(("started" if started else "already running") + f": {db.url()}")
    elif args.action == "stop":
        print("stopped" if db.stop(args.mode) else "not running")
    elif args.action == "status":
        emit(db.status())
        if not db.running():
            sys.exit(3)
    elif args.action == "url":
        print(settings.dsn())


def cmd_migrate(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.db import migrate

    applied = run_db(settings, migrate)
    print("applied: " + ", ".join(f"{m.version:04d}_{m.name}" for m in applied) if applied else "up to date")


def add_commands(sub: Subparsers) -> None:
    """Add the `db`, `migrate` commands to the `telemetria` parser."""
    db = sub.add_parser("db", help="the project-local PostgreSQL + TimescaleDB cluster")
    db.add_argument("action", choices=["start", "stop", "status", "url"])
    db.add_argument("--mode", choices=["smart", "fast", "immediate"], default="fast", help="stop mode")
    db.set_defaults(func=cmd_db)

    sub.add_parser("migrate", help="apply pending SQL migrations").set_defaults(func=cmd_migrate)
