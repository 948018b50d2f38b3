"""`telemetria serve`: the HTTP service."""

from __future__ import annotations

import argparse

from telemetria.cli.common import Subparsers, free_port_or_say
from telemetria.settings import Settings


def cmd_serve(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.serve import run

    host, port = args.host or settings.host, args.port or settings.port
    free_port_or_say(host, port, "telemetria serve")
    run(settings, host, port, args.workers or settings.workers)


def add_commands(sub: Subparsers) -> None:
    """Add the `serve` command to the `telemetria` parser."""
    serve = sub.add_parser("serve", help="run the HTTP service (uvicorn, uvloop, httptools)")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int)
    serve.set_defaults(func=cmd_serve)
