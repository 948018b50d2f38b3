"""`telemetria user|token`: people who log in and their personal API tokens."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from telemetria.auth.roles import Role
from telemetria.cli.common import CliError, Subparsers, emit, parse_expiry, run_db
from telemetria.settings import Settings


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
    from telemetria.auth import queries as auth_q
    from telemetria.auth import store

    row = await conn.fetchrow(auth_q.USER_BY_USERNAME, store.normalize_username(username))
    if row is None:
        raise CliError(f"no user {username!r}")
    return row


def cmd_user(settings: Settings, args: argparse.Namespace) -> None:
    from telemetria.audit.log import record
    from telemetria.auth import queries as auth_q
    from telemetria.auth import store

    async def run(conn: Any) -> Any:
        if args.action == "list":
            return [dict(r) for r in await conn.fetch(auth_q.LIST_USERS, 10_000, 0)]
        if args.action == "add":
            async with conn.transaction():
                user = await store.add_user(
                    conn, args.username, _password(), Role(args.role), args.contractor, args.full_name, args.designated
                )
                await record(conn, "user.create", None, None, f"user:{user['id']}", {"role": args.role, "via": "cli"})
            return user
        row = await _user(conn, args.username)
        if args.action == "unlock":  # lifting the lockouts is an audit entry: the limits are counted there
            await record(conn, "auth.unlock", None, None, f"user:{row['id']}", {"via": "cli"})
            return dict(row)
        changes: dict[str, Any] = {"active": args.action == "activate"} if args.action != "passwd" else {}
        if args.action in ("designate", "undesignate"):
            changes = {"designated": args.action == "designate"}
        elif args.action == "passwd":
            changes["password"] = _password()
        async with conn.transaction():
            user = await store.change_user(conn, row["id"], changes)
            await record(
                conn, "user.update", None, None, f"user:{row['id']}", {"fields": sorted(changes), "via": "cli"}
            )
        return user

    emit(run_db(settings, run))


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

    result = run_db(settings, run)
    if args.action == "create" and not args.json:
        print(result["token"])  # alone on stdout, for scripts; the expiry goes to the person, on stderr
        expires = result["expires_at"]
        print(f"expires {expires.isoformat() if expires else 'never'} (token {result['id']})", file=sys.stderr)
    else:
        emit(result)


def add_commands(sub: Subparsers) -> None:
    """Add the `user`, `token` commands to the `telemetria` parser."""
    usr = sub.add_parser("user", help="people who log in: admin, monitor, auditor, contractor")
    usub = usr.add_subparsers(dest="action", required=True)
    ua = usub.add_parser("add", help="create a user (password from TELEMETRIA_PASSWORD or asked)")
    ua.add_argument("--username", required=True)
    ua.add_argument("--role", required=True, choices=[r.value for r in Role])
    ua.add_argument("--contractor", type=int, help="contractor id (required for the contractor role)")
    ua.add_argument("--full-name")
    ua.add_argument("--designated", action="store_true", help="the designated servidor: decides occurrences")
    usub.add_parser("list")
    for action, what in (("designate", "make"), ("undesignate", "stop being")):
        usub.add_parser(action, help=f"{what} the designated servidor, who decides occurrences (Art. 42)").add_argument(
            "--username", required=True
        )
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
