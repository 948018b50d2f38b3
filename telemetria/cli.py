"""`telemetria` command line: local database, migrations, service, registry, simulator, demo."""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from collections.abc import Awaitable, Callable
from datetime import date, datetime, time
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from telemetria.auth.roles import Role
from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings, SettingsError


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


def _run_db(settings: Settings, fn: Callable[[Any], Awaitable[Any]]) -> Any:
    return asyncio.run(_with_conn(settings, fn))


# --- db ---------------------------------------------------------------------------------------


def cmd_db(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.localdb import LocalDb

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

    applied = _run_db(settings, migrate)
    print("applied: " + ", ".join(f"{m.version:04d}_{m.name}" for m in applied) if applied else "up to date")


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


def cmd_serve(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.serve import run

    host, port = args.host or settings.host, args.port or settings.port
    free_port_or_say(host, port, "telemetria serve")
    run(settings, host, port, args.workers or settings.workers)


# --- operations -------------------------------------------------------------------------------


def cmd_retention(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.ops import retention

    async def run(conn: Any) -> Any:
        return (await retention.run(conn, settings.retention_days, dry_run=args.dry_run, source="cli")).as_json()

    emit(_run_db(settings, run))


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

    _run_db(settings, ping)


# --- registry ---------------------------------------------------------------------------------


def cmd_vehicle(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.registry import fleet

    async def run(conn: Any) -> Any:
        if args.action == "add":
            return await fleet.add_vehicle(conn, args.plate, args.prefix, args.description)
        if args.action == "list":
            return await fleet.list_vehicles(conn)
        await fleet.set_vehicle_active(conn, args.plate, args.action == "activate")
        return {"plate": fleet.normalize_plate(args.plate), "active": args.action == "activate"}

    emit(_run_db(settings, run))


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

    emit(_run_db(settings, run))


# --- users and tokens -------------------------------------------------------------------------


def _password() -> str:
    import getpass
    import os

    password = os.environ.get("TELEMETRIA_PASSWORD")
    if password:
        return password
    if not sys.stdin.isatty():
        raise CliError("set TELEMETRIA_PASSWORD or run in a terminal to be asked for the password")
    password = getpass.getpass("password: ")
    if getpass.getpass("again: ") != password:
        raise CliError("the two passwords differ")
    return password


async def _user(conn: Any, username: str) -> Any:
    from telemetria.auth import store

    row = await conn.fetchrow(store.q.USER_BY_USERNAME, store.normalize_username(username))
    if row is None:
        raise CliError(f"no user {username!r}")
    return row


def cmd_user(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.audit.log import record
    from telemetria.auth import store

    async def run(conn: Any) -> Any:
        if args.action == "list":
            return [dict(r) for r in await conn.fetch(store.q.LIST_USERS, 10_000, 0)]
        if args.action == "add":
            async with conn.transaction():
                user = await store.add_user(
                    conn, args.username, _password(), Role(args.role), args.contractor, args.full_name
                )
                await record(conn, "user.create", None, None, f"user:{user['id']}", {"role": args.role, "via": "cli"})
            return user
        row = await _user(conn, args.username)
        if args.action == "unlock":  # lifting the lockouts is an audit entry: the limits are counted there
            await record(conn, "auth.unlock", None, None, f"user:{row['id']}", {"via": "cli"})
            return dict(row)
        changes: dict[str, Any] = {"active": args.action == "activate"} if args.action != "passwd" else {}
        if args.action == "passwd":
            changes["password"] = _password()
        async with conn.transaction():
            user = await store.change_user(conn, row["id"], changes)
            await record(
                conn, "user.update", None, None, f"user:{row['id']}", {"fields": sorted(changes), "via": "cli"}
            )
        return user

    emit(_run_db(settings, run))


def cmd_token(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.audit.log import record
    from telemetria.auth import store

    async def run(conn: Any) -> Any:
        row = await _user(conn, args.username)
        if args.action == "list":
            return (await store.list_tokens(conn, row["id"]))[0]
        async with conn.transaction():
            if args.action == "create":
                token = await store.create_token(conn, row["id"], args.name, args.expires)
                expires = token["expires_at"].isoformat() if token["expires_at"] else "never"
                await record(
                    conn, "token.create", None, None, f"token:{token['id']}", {"via": "cli", "expires_at": expires}
                )
                return token
            revoked = await store.revoke_token(conn, args.id, row["id"], False)
            if revoked is None:
                raise CliError(f"user {args.username!r} has no token {args.id}")
            await record(conn, "token.revoke", None, None, f"token:{args.id}", {"via": "cli"})
            return revoked

    result = _run_db(settings, run)
    if args.action == "create" and not args.json:
        print(result["token"])  # alone on stdout, for scripts; the expiry goes to the person, on stderr
        expires = result["expires_at"]
        print(f"expires {expires.isoformat() if expires else 'never'} (token {result['id']})", file=sys.stderr)
    else:
        emit(result)


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

    emit(_run_db(settings, run))


# --- simulator and demo -----------------------------------------------------------------------


def cmd_simulate(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.demo import ensure_fleet, run_simulator

    creds = _run_db(settings, lambda conn: ensure_fleet(conn, settings, args.vehicles, prefix=args.fleet))
    asyncio.run(
        run_simulator(
            args.url, creds, interval_s=args.interval, seed=args.seed, speedup=args.speedup, duration_s=args.duration
        )
    )


def cmd_demo(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.demo import run_demo

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


# --- parser -----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="telemetria", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    db = sub.add_parser("db", help="the project-local PostgreSQL + TimescaleDB cluster")
    db.add_argument("action", choices=["start", "stop", "status", "url"])
    db.add_argument("--mode", choices=["smart", "fast", "immediate"], default="fast", help="stop mode")
    db.set_defaults(func=cmd_db)

    sub.add_parser("migrate", help="apply pending SQL migrations").set_defaults(func=cmd_migrate)

    serve = sub.add_parser("serve", help="run the HTTP service (uvicorn, uvloop, httptools)")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.add_argument("--workers", type=int)
    serve.set_defaults(func=cmd_serve)

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

    usr = sub.add_parser("user", help="people who log in: admin, monitor, auditor, contractor")
    usub = usr.add_subparsers(dest="action", required=True)
    ua = usub.add_parser("add", help="create a user (password from TELEMETRIA_PASSWORD or asked)")
    ua.add_argument("--username", required=True)
    ua.add_argument("--role", required=True, choices=[r.value for r in Role])
    ua.add_argument("--contractor", type=int, help="contractor id (required for the contractor role)")
    ua.add_argument("--full-name")
    usub.add_parser("list")
    for action in ("deactivate", "activate", "passwd"):
        usub.add_parser(action).add_argument("--username", required=True)
    unlock = usub.add_parser("unlock", help="let every address try this user's password again (see auth/limits.py)")
    unlock.add_argument("--username", required=True)
    usr.set_defaults(func=cmd_user)

    tok = sub.add_parser("token", help="personal API tokens (Authorization: Bearer) for scripts")
    toksub = tok.add_subparsers(dest="action", required=True)
    tc = toksub.add_parser("create", help="print a new token for the user (shown once)")
    tc.add_argument("--username", required=True)
    tc.add_argument("--name", default="cli", help="what the token is for")
    tc.add_argument(
        "--expires",
        type=parse_expiry,
        default=...,
        help="when it stops working: RFC 3339, a local date or date-time, or 'never' (default: a year from now)",
    )
    tc.add_argument("--json", action="store_true", help="print id, name, expiry and token as JSON")
    toksub.add_parser("list").add_argument("--username", required=True)
    tr = toksub.add_parser("revoke")
    tr.add_argument("--username", required=True)
    tr.add_argument("--id", type=int, required=True)
    tok.set_defaults(func=cmd_token)

    sim = sub.add_parser("simulate", help="drive simulated vehicles that post real HTTP fixes")
    sim.add_argument("--vehicles", type=int, default=5)
    sim.add_argument("--interval", type=float, default=30.0, help="seconds between fixes")
    sim.add_argument("--url", required=True, help="base URL of the service, e.g. http://127.0.0.1:8000")
    sim.add_argument("--seed", type=int, default=1)
    sim.add_argument("--speedup", type=float, default=1.0, help="simulated seconds per wall-clock second")
    sim.add_argument("--duration", type=float, help="wall-clock seconds to run (default: until Ctrl-C)")
    sim.add_argument("--fleet", default="SIM", help="three-letter plate prefix of the simulated fleet")
    sim.set_defaults(func=cmd_simulate)

    demo = sub.add_parser("demo", help="the service plus a simulated demo fleet, in one process")
    demo.add_argument("--host")
    demo.add_argument("--port", type=int)
    demo.add_argument("--vehicles", type=int, default=5)
    demo.add_argument("--speedup", type=float, default=1.0)
    demo.add_argument("--seed", type=int, default=1)
    demo.set_defaults(func=cmd_demo)
    return p


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    try:
        settings = Settings()
    except ValidationError as e:
        bad = "; ".join(
            f"TELEMETRIA_{'_'.join(str(x) for x in err['loc']).upper()}: {err['msg']}" for err in e.errors()
        )
        print(f"telemetria: invalid settings: {bad}", file=sys.stderr)
        sys.exit(2)
    except SettingsError as e:
        print(f"telemetria: invalid settings: {e}", file=sys.stderr)
        sys.exit(2)
    try:
        args.func(settings, args)
    except KeyboardInterrupt:
        pass
    except CliError as e:
        print(f"telemetria: {e}", file=sys.stderr)
        sys.exit(1)
    except Exception as e:
        from telemetria.http import FieldError
        from telemetria.localdb import LocalDbError
        from telemetria.ops.backup import BackupError
        from telemetria.ops.retention import RetentionError

        if isinstance(e, FieldError | LocalDbError | BackupError | RetentionError):
            print(f"telemetria: {e}", file=sys.stderr)
            sys.exit(1)
        raise


if __name__ == "__main__":
    main()
