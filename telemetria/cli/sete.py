"""`telemetria sete import`: routes, vehicles, drivers and schools from the municipality's SETE (docs/sete.md)."""

from __future__ import annotations

import argparse
import asyncio
import getpass
import os
import re
import sys
from datetime import date
from typing import Any

from telemetria.cli.common import CliError, Subparsers, emit, run_db
from telemetria.settings import Settings

PASSWORD_ENV = "TELEMETRIA_SETE_PASSWORD"
EXIT_UNREACHABLE = 2


def cmd_sete(settings: Settings, args: argparse.Namespace) -> None:
    import httpx

    from telemetria.sete import importer
    from telemetria.sete.client import SeteClient, SeteError, SeteUnreachable

    if not re.fullmatch(r"[0-9]{7}", args.ibge):
        raise CliError(f"--ibge: {args.ibge!r} is not a 7-digit IBGE municipality code (Jaru/RO: 1100114)")
    if not re.match(r"https?://", args.url):
        raise CliError(f"--url: {args.url!r} is not an http(s) address")
    password = os.environ.get(PASSWORD_ENV)
    if not password and sys.stdin.isatty():
        password = getpass.getpass(f"SETE password for {args.user}: ")
    if not password:
        raise CliError(f"no password: set {PASSWORD_ENV} or run from a terminal to be asked")

    async def fetch() -> Any:
        async with httpx.AsyncClient(base_url=args.url.rstrip("/"), timeout=args.timeout) as http:
            client = SeteClient(http, args.ibge)
            await client.login(args.user, password)
            return await client.snapshot(pupil_counts=args.pupil_counts)

    try:
        snapshot = asyncio.run(fetch())
    except SeteUnreachable as e:
        print(f"telemetria: SETE unreachable at {args.url}: {e}", file=sys.stderr)
        sys.exit(EXIT_UNREACHABLE)
    except SeteError as e:
        raise CliError(f"SETE: {e}") from None

    async def run(conn: Any) -> Any:
        items = importer.items_of(snapshot, args.school_year)
        actions = await importer.plan(conn, args.ibge, items, args.school_year)
        if not args.dry_run:
            await importer.apply(conn, args.ibge, actions, f"sete:{args.user}", args.effective_from)
        return importer.report(args.ibge, actions, args.dry_run)

    emit(run_db(settings, run))


def add_commands(sub: Subparsers) -> None:
    """Add the `sete` command to the `telemetria` parser."""
    sete = sub.add_parser("sete", help="import the registry the municipality keeps in SETE (FNDE/UFG)")
    ssub = sete.add_subparsers(dest="action", required=True)
    si = ssub.add_parser(
        "import",
        help="bring routes, vehicles, drivers and schools from SETE; re-running updates what changed",
        description=f"The password is read from {PASSWORD_ENV}, else asked. Exit codes: 0 done, 1 error, "
        "2 SETE unreachable.",
    )
    si.add_argument("--url", required=True, help="SETE's API address, e.g. https://sete.example.gov.br/api")
    si.add_argument("--ibge", required=True, help="the municipality's 7-digit IBGE code")
    si.add_argument("--user", required=True, help="the SETE user's e-mail")
    si.add_argument("--dry-run", action="store_true", help="print what would change, change nothing")
    si.add_argument("--effective-from", type=date.fromisoformat, help="first day of the changes (default: today)")
    si.add_argument("--school-year", type=int, default=date.today().year, help="the routes' school year")
    si.add_argument("--pupil-counts", action="store_true", help="also count each route's pupils (a number only)")
    si.add_argument("--timeout", type=float, default=30.0, help="seconds per SETE request")
    sete.set_defaults(func=cmd_sete)
