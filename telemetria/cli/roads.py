"""`telemetria roads import|status`: the municipality's roads from an OpenStreetMap extract (docs/roads.md)."""

from __future__ import annotations

import argparse
import getpass
import re
import sys
from collections.abc import Awaitable, Callable
from datetime import date
from pathlib import Path
from typing import Any

from telemetria.cli.common import CliError, Subparsers, emit, run_db
from telemetria.settings import Settings


def cmd_import(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.ops.backup import sha256_of
    from telemetria.roads import store
    from telemetria.roads.clip import Clip, load_polygon, parse_bbox
    from telemetria.roads.errors import RoadsError
    from telemetria.roads.osmread import file_format, read_localities, read_ways

    # Everything that can be refused before the database is touched: the options, then the file's kind.
    if args.bbox and args.polygon:
        raise RoadsError("give --bbox or --polygon, not both")
    clip = Clip(bbox=parse_bbox(args.bbox)) if args.bbox else load_polygon(args.polygon) if args.polygon else Clip()
    path: Path = args.file
    file_format(path)
    digest = sha256_of(path)

    def progress(message: str) -> None:
        print(f"roads: {message}", file=sys.stderr, flush=True)

    async def run(conn: Any) -> Any:
        ways = read_ways(path, clip, progress, every=args.progress_every)
        places = read_localities(path, clip)
        progress(f"{len(places)} named places (villages, hamlets, neighbourhoods) read")
        return await store.import_ways(
            conn, ways, source=path.name, sha256=digest, bbox=clip.bbox, polygon=clip.polygon, by=_user(),
            effective_from=args.effective_from, localities=places,
        )  # fmt: skip

    emit(network_json(_migrated(settings, run)))


def cmd_status(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.roads import store

    network = _migrated(settings, store.current)
    if network is None:
        emit({"network": None, "message": "no road network imported; run `telemetria roads import FILE`"})
    else:
        emit({"network": network_json(network)})


def _migrated(settings: Settings, fn: Callable[[Any], Awaitable[Any]]) -> Any:
    """run_db, saying what to do when the database predates the roads tables."""
    import asyncpg

    try:
        return run_db(settings, fn)
    except (asyncpg.UndefinedTableError, asyncpg.UndefinedColumnError):
        raise CliError("the database has not all the road tables yet; run `telemetria migrate` first") from None


def network_json(network: Any) -> dict[str, Any]:
    """What the commands print about a network (roads.model.Network): km rounded to metres."""
    return {
        "id": network.id,
        "source": network.source,
        "sha256": network.sha256,
        "imported_at": network.imported_at.isoformat(),
        "bbox": list(network.bbox) if network.bbox else None,
        "ways": network.ways,
        "km": round(network.km, 3),
        "named_km": round(network.named_km, 3),
        "paved_km": round(network.paved_km, 3),
        "unpaved_km": round(network.km - network.paved_km, 3),
        "effective_from": network.effective_from.isoformat() if network.effective_from else None,
        "localities": network.localities,
    }


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return n


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name (a container's anonymous uid)
        return "unknown"


def add_commands(sub: Subparsers) -> None:
    """Add the `roads` command and its `import`, `status` actions to the `telemetria` parser."""
    roads = sub.add_parser("roads", help="the municipality's roads from an OpenStreetMap extract")
    rsub = roads.add_subparsers(dest="action", required=True)
    imp = rsub.add_parser("import", help="import an .osm.pbf or .osm file as the road network in use, replacing it")
    imp.add_argument("file", type=Path, help="OpenStreetMap extract: .osm.pbf, .osm, .osm.gz or .osm.bz2")
    imp.add_argument(
        "--bbox", help="keep the roads with a vertex inside W,S,E,N (degrees), e.g. -62.9,-10.8,-62.0,-10.0"
    )
    imp.add_argument("--polygon", type=Path, help="keep the roads with a vertex inside this GeoJSON (Multi)Polygon")
    imp.add_argument(
        "--from",
        dest="effective_from",
        type=date.fromisoformat,
        help="first local day (YYYY-MM-DD) the km are measured on this network; default today: earlier days keep "
        "the network they had (a date in the past recomputes the days from it)",
    )
    imp.add_argument("--progress-every", type=_positive, default=50_000, help="report progress every N ways read")
    # `--bbox -62.9,-10.8,-62.0,-10.0` as an operator types it: argparse takes a word starting with '-' for an
    # option unless it reads as a negative number, and a comma-separated list of them does not by its rule.
    imp._negative_number_matcher = re.compile(r"^-\d+$|^-\d*\.\d+$|^-[\d.]+(,-?[\d.]*)+$")
    imp.set_defaults(func=cmd_import)
    sta = rsub.add_parser("status", help="the road network in use")
    sta.set_defaults(func=cmd_status)
