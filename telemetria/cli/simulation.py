"""`telemetria simulate|demo|simulate-osm`: simulated vehicles posting real HTTP, alone or with the service; the
simulated roads as an OpenStreetMap file."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

from telemetria.cli.common import Subparsers, emit, free_port_or_say, run_db
from telemetria.settings import Settings


def cmd_simulate(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.sim.demo import ensure_fleet, run_simulator

    creds = run_db(settings, lambda conn: ensure_fleet(conn, settings, args.vehicles, prefix=args.fleet))
    asyncio.run(
        run_simulator(
            args.url,
            creds,
            interval_s=args.interval,
            seed=args.seed,
            speedup=args.speedup,
            duration_s=args.duration,
            loss_per_hour=args.signal_loss_per_hour,
        )
    )


def cmd_demo(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.sim.demo import run_demo

    host, port = args.host or settings.host, args.port or settings.port
    free_port_or_say(host, port, "./dev run")
    asyncio.run(
        run_demo(
            settings,
            host=host,
            port=port,
            vehicles=args.vehicles,
            speedup=args.speedup,
            seed=args.seed,
        )
    )


def cmd_simulate_osm(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.sim.osm import write_osm
    from telemetria.sim.roadnet import grid_localities, grid_ways
    from telemetria.sim.roads import make_grid

    # make_grid(seed): the grid `simulate` and `demo` drive on with the same --seed (sim/runner.py).
    grid = make_grid(args.seed)
    ways, places = grid_ways(grid), grid_localities(grid)
    write_osm(ways, args.out, places)
    emit({"out": str(args.out.resolve()), "seed": args.seed, "ways": len(ways), "localities": len(places)})


def add_commands(sub: Subparsers) -> None:
    """Add the `simulate`, `demo`, `simulate-osm` commands to the `telemetria` parser."""
    sim = sub.add_parser("simulate", help="drive simulated vehicles that post real HTTP fixes")
    sim.add_argument("--vehicles", type=int, default=5)
    sim.add_argument("--interval", type=float, default=30.0, help="seconds between fixes")
    sim.add_argument("--url", required=True, help="base URL of the service, e.g. http://127.0.0.1:8000")
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--speedup", type=float, default=1.0, help="simulated seconds per wall-clock second")
    sim.add_argument("--duration", type=float, help="wall-clock seconds to run (default: until Ctrl-C)")
    sim.add_argument("--fleet", default="SIM", help="three-letter plate prefix of the simulated fleet")
    sim.add_argument(
        "--signal-loss-per-hour",
        type=float,
        help="how often a tracker loses its signal and stores fixes until it returns (default 1; 0: never)",
    )
    sim.set_defaults(func=cmd_simulate)

    demo = sub.add_parser("demo", help="the service plus a simulated demo fleet, in one process")
    demo.add_argument("--host")
    demo.add_argument("--port", type=int)
    demo.add_argument("--vehicles", type=int, default=5)
    demo.add_argument("--speedup", type=float, default=1.0)
    demo.add_argument("--seed", type=int, default=1)
    demo.set_defaults(func=cmd_demo)

    osm = sub.add_parser("simulate-osm", help="write the simulated roads as an OpenStreetMap file (.osm or .osm.pbf)")
    osm.add_argument("--out", type=Path, required=True, help="file to write; a name ending in .pbf gives PBF, else XML")
    osm.add_argument("--seed", type=int, default=1, help="the seed of the simulation whose roads to write")
    osm.set_defaults(func=cmd_simulate_osm)
