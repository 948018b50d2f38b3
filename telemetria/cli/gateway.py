"""`telemetria gateway`: Traccar servers that forward their trackers' positions here (docs/trackers.md)."""

from __future__ import annotations

import argparse
from typing import Any

from telemetria.cli.common import Subparsers, emit, run_db
from telemetria.settings import Settings


def cmd_gateway(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.audit.log import record
    from telemetria.traccar import gateways

    async def run(conn: Any) -> Any:
        async with conn.transaction():
            if args.action == "add":
                row = await gateways.add_gateway(conn, args.name, args.contractor)
                await record(conn, "traccar.gateway.create", None, None, f"gateway:{row['id']}", {"via": "cli"})
                return row
            if args.action == "list":
                return await gateways.list_gateways(conn)
            if args.action == "rotate-token":
                token = await gateways.rotate_token(conn, args.id)
                await record(conn, "traccar.gateway.rotate", None, None, f"gateway:{args.id}", {"via": "cli"})
                return {"id": args.id, "token": token}
            active = args.action == "activate"
            await gateways.set_active(conn, args.id, active)
            await record(conn, f"traccar.gateway.{args.action}", None, None, f"gateway:{args.id}", {"via": "cli"})
            return {"id": args.id, "active": active}

    emit(run_db(settings, run))


def add_commands(sub: Subparsers) -> None:
    """Add the `gateway` command to the `telemetria` parser."""
    gw = sub.add_parser("gateway", help="Traccar servers forwarding positions (a token each)")
    gsub = gw.add_subparsers(dest="action", required=True)
    ga = gsub.add_parser("add", help="register a Traccar server; prints its token once")
    ga.add_argument("--name", required=True, help="which Traccar server, e.g. 'traccar da Secretaria'")
    ga.add_argument("--contractor", type=int, help="speak only for this contractor's trackers (default: every one)")
    gsub.add_parser("list")
    for action in ("deactivate", "activate", "rotate-token"):
        gsub.add_parser(action).add_argument("--id", type=int, required=True)
    gw.set_defaults(func=cmd_gateway)
