"""What every command shares: its errors, time arguments, JSON output, a database connection, a free port."""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from collections.abc import Awaitable, Callable
from datetime import date, datetime, time
from typing import Any, TypeAlias

import orjson

from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings

# What ArgumentParser.add_subparsers returns; each command group's add_commands(sub) adds its commands.
Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


class CliError(Exception):
    pass


def parse_expiry(text: str) -> datetime | None:
    """A token's expiry: 'never', a local date (its midnight), or a date-time as `parse_when` reads it."""
    if text.strip().lower() == "never":
        return None
    try:
        day = date.fromisoformat(text.strip())
    except ValueError:
        return parse_when(text)
    return datetime.combine(day, time(), LOCAL_TZ)


def parse_when(text: str) -> datetime:
    """RFC 3339 time; without an offset it is local time in America/Porto_Velho (UTC-4, no DST)."""
    try:
        t = datetime.fromisoformat(text.strip().replace("z", "Z"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a date-time like 2026-03-02T07:00:00-04:00") from None
    return t if t.tzinfo else t.replace(tzinfo=LOCAL_TZ)


def emit(value: Any) -> None:
    sys.stdout.write(orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str).decode() + "\n")


async def _with_conn(settings: Settings, fn: Callable[[Any], Awaitable[Any]]) -> Any:
    import asyncpg

    from telemetria.db import init_connection

    try:
        conn = await asyncpg.connect(settings.dsn())
    except (OSError, asyncpg.PostgresError) as e:
        raise CliError(f"cannot reach the database ({e}); is it running? try `telemetria db start`") from None
    try:
        await init_connection(conn)
        return await fn(conn)
    finally:
        await conn.close()


def run_db(settings: Settings, fn: Callable[[Any], Awaitable[Any]]) -> Any:
    return asyncio.run(_with_conn(settings, fn))


def free_port_or_say(host: str, port: int, command: str) -> None:
    """Refuse plainly, before anything starts, when another process (a second `./dev run`?) listens on the port."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a closed server's TIME_WAIT is not a listener
        try:
            sock.bind((host, port))
        except OSError as e:
            raise CliError(
                f"cannot listen on {host}:{port}: {e.strerror or e}. Is the service already running (another "
                f"`./dev run` or `telemetria serve`)? Stop it, or choose another port: `{command} --port {port + 1}` "
                f"(or TELEMETRIA_PORT={port + 1})."
            ) from None
