"""`telemetria vehicle|tracker|route`: the fleet and its routes."""

from __future__ import annotations

import argparse
from datetime import datetime
from pathlib import Path
from typing import Any

from telemetria.cli.common import CliError, Subparsers, emit, parse_when, run_db
from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings


def cmd_vehicle(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.registry import fleet

    async def run(conn: Any) -> Any:
        if args.action == "add":
            return await fleet.add_vehicle(conn, args.plate, args.prefix, args.description)
        if args.action == "list":
            return await fleet.list_vehicles(conn)
        await fleet.set_vehicle_active(conn, args.plate, args.action == "activate")
        return {"plate": fleet.normalize_plate(args.plate), "active": args.action == "activate"}

    emit(run_db(settings, run))


def cmd_tracker(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.registry import fleet

    async def run(conn: Any) -> Any:
        if args.action == "add":
            return await fleet.add_tracker(conn, args.unique_id, args.vehicle, args.since)
        if args.action == "move":
            at = args.at or datetime.now(LOCAL_TZ)
            return (await fleet.move_tracker(conn, args.unique_id, args.to, at)).as_json()
        if args.action == "list":
            return await fleet.list_trackers(conn)
        if args.action == "rotate-token":
            return {"unique_id": args.unique_id, "token": await fleet.rotate_token(conn, args.unique_id)}
        await fleet.set_tracker_active(conn, args.unique_id, args.action == "activate")
        return {"unique_id": args.unique_id, "active": args.action == "activate"}

    emit(run_db(settings, run))


def cmd_route(settings: Settings, args: argparse.Namespace) -> None:
    from pydantic import ValidationError as PydanticError

    from telemetria.audit.log import record
    from telemetria.registry import routefile, routes, schemas
    from telemetria.registry.errors import RegistryError

    body = args.file.read_bytes() if args.file.is_file() else b""
    try:
        geo = routefile.parse_route_file(body, routefile.detect_format(args.file.name, None, body))
        fields = schemas.RouteFields.model_validate(
            {k: v for k, v in vars(args).items() if k in schemas.RouteFields.model_fields and v is not None}
            | {"name": args.name or geo.name or args.code}
        )
    except routefile.RouteFileError as e:
        raise RegistryError(f"{args.file}: {e}", e.field) from None
    except PydanticError as e:
        raise CliError("; ".join(f"{'.'.join(map(str, x['loc']))}: {x['msg']}" for x in e.errors())) from None

    async def run(conn: Any) -> Any:
        async with conn.transaction():
            rid = await routes.create_route(conn, fields.model_dump(), geo)
            await record(conn, "registry.route.create", None, None, f"route:{rid}", {"via": "cli"})
            row = await routes.route(conn, None, rid)
        return {k: v for k, v in row.items() if k != "geometry"}

    emit(run_db(settings, run))


def add_commands(sub: Subparsers) -> None:
    """Add the `vehicle`, `tracker`, `route` commands to the `telemetria` parser."""
    veh = sub.add_parser("vehicle", help="register and list vehicles")
    vsub = veh.add_subparsers(dest="action", required=True)
    va = vsub.add_parser("add")
    va.add_argument("--plate", required=True)
    va.add_argument("--prefix")
    va.add_argument("--description")
    vsub.add_parser("list")
    for action in ("deactivate", "activate"):
        vsub.add_parser(action).add_argument("--plate", required=True)
    veh.set_defaults(func=cmd_vehicle)

    trk = sub.add_parser("tracker", help="register trackers and install them in vehicles")
    tsub = trk.add_subparsers(dest="action", required=True)
    ta = tsub.add_parser("add", help="register a tracker; prints its token once")
    ta.add_argument("--unique-id", required=True)
    ta.add_argument("--vehicle", required=True, help="plate of the vehicle it is installed in")
    ta.add_argument("--since", type=parse_when, help="installed from (default: no lower bound)")
    tm = tsub.add_parser("move", help="install the tracker in another vehicle from --at on")
    tm.add_argument("--unique-id", required=True)
    tm.add_argument("--to", required=True, help="plate of the new vehicle")
    tm.add_argument("--at", type=parse_when, help="from when (default: now)")
    tsub.add_parser("list")
    for action in ("deactivate", "activate", "rotate-token"):
        tsub.add_parser(action).add_argument("--unique-id", required=True)
    trk.set_defaults(func=cmd_tracker)

    rte = sub.add_parser("route", help="routes (itinerários)")
    rsub = rte.add_subparsers(dest="action", required=True)
    ri = rsub.add_parser("import", help="register a route from a GeoJSON, GPX or KML file")
    ri.add_argument("file", type=Path)
    ri.add_argument("--code", required=True)
    ri.add_argument("--name", help="default: the name in the file")
    ri.add_argument("--school-year", type=int)
    ri.add_argument("--shift", choices=["matutino", "vespertino", "noturno", "integral"])
    ri.add_argument("--declared-km", type=float, help="km in the contract")
    ri.add_argument("--speed-limit-kmh", type=float)
    rte.set_defaults(func=cmd_route)
