"""`telemetria verify FILE`: does an exported track file (CSV or XLSX) match its daily seals? (the database's)

Prints one line per vehicle-day and, for each that differs, the first differing row with the line expected and
the line found; `--json` prints the answer of `POST /api/v1/seals/verify` instead. Exit status: 0 when every day
matches its seal, 1 when one does not (or is not sealed), 2 when the file cannot be read as a track export.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from telemetria.cli.common import Subparsers, emit, run_db
from telemetria.settings import Settings

VALID, INVALID, UNUSABLE = 0, 1, 2


def describe(answer: dict[str, Any]) -> list[str]:
    """The answer as people read it, a day a line (and the difference under it)."""
    out = []
    for d in answer["days"]:
        version = f"versão {d['version']}" if d["version"] is not None else "sem selo"
        head = f"{d['date']} {d['plate'] or '?'} (veículo {d['vehicle_id']}), {version}, {d['rows']} linhas: "
        out.append(head + ("confere" if d["valid"] else "NÃO confere") + (f" ({d['reason']})" if d["reason"] else ""))
        diff = d["first_difference"]
        if diff is not None:
            out.append(f"    linha {diff['row']}: esperado {diff['expected']!r}, encontrado {diff['found']!r}")
    out.append(("VÁLIDO" if answer["valid"] else "INVÁLIDO") + (f": {answer['reason']}" if answer["reason"] else ""))
    return out


def cmd_verify(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.seals import verify, verify_store

    path: Path = args.file
    try:
        data = path.read_bytes()
    except OSError as e:
        print(f"telemetria: file: cannot read {path}: {e.strerror or e}", file=sys.stderr)
        sys.exit(UNUSABLE)
    try:
        parsed = verify.parse(data)
    except verify.NotAnExport as e:
        print(f"telemetria: {e}", file=sys.stderr)
        sys.exit(UNUSABLE)

    async def run(conn: Any) -> dict[str, Any]:
        return verify.report(await verify_store.check(conn, parsed, None))  # on the server: every vehicle

    answer = run_db(settings, run)
    if args.json:
        emit(answer)
    else:
        sys.stdout.write("".join(line + "\n" for line in describe(answer)))
    sys.exit(VALID if answer["valid"] else INVALID)


def add_commands(sub: Subparsers) -> None:
    """Add the `verify` command to the `telemetria` parser."""
    ver = sub.add_parser(
        "verify", help="check an exported track file (CSV or XLSX) against the daily seals (exit 0 valid, 1 not, 2 "
        "unreadable)",
    )  # fmt: skip
    ver.add_argument("file", type=Path, help="the exported file (trajetoria_....csv or .xlsx)")
    ver.add_argument("--json", action="store_true", help="print the answer as POST /api/v1/seals/verify gives it")
    ver.set_defaults(func=cmd_verify)
