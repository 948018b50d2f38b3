"""Users, sessions and personal API tokens in the database."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from types import EllipsisType
from typing import Any

import asyncpg

from telemetria.auth import passwords
from telemetria.auth import queries as q
from telemetria.auth.roles import Principal, Role
from telemetria.db import Conn
from telemetria.http import FieldError
from telemetria.paging import split_total

USER_TOKEN_PREFIX = "tlm_"
TOKEN_LIFETIME = timedelta(days=365)  # a personal API token's default life


class AuthError(FieldError):
    """A user-management request that cannot be carried out; `field` names what is wrong."""


def digest(secret: str) -> bytes:
    return hashlib.sha256(secret.encode()).digest()


def normalize_username(username: str) -> str:
    return username.strip().lower()


async def add_user(
    conn: Conn,
    username: str,
    password: str,
    role: Role,
    contractor_id: int | None = None,
    full_name: str | None = None,
    designated: bool = False,
    superior_authority: bool = False,
) -> dict[str, Any]:
    username = normalize_username(username)
    _check_designated(role, designated)
    _check_superior(role, superior_authority)
    if role is Role.CONTRACTOR and contractor_id is None:
        raise AuthError("contractor_id: a contractor user must name its contractor", "contractor_id")
    if role is not Role.CONTRACTOR and contractor_id is not None:
        raise AuthError("contractor_id: only contractor users belong to a contractor", "contractor_id")
    try:
        passwords.check_policy(password, username)
    except passwords.PasswordPolicyError as e:
        raise AuthError(str(e), "password") from None
    try:
        row = await conn.fetchrow(
            q.INSERT_USER,
            username,
            full_name,
            await _hash(password),
            role.value,
            contractor_id,
            designated,
            superior_authority,
        )
    except asyncpg.UniqueViolationError:
        raise AuthError(f"username: {username!r} is taken", "username", 409) from None
    except asyncpg.CheckViolationError:
        raise AuthError(
            "username: 2 to 64 characters, lower-case letters, digits and . _ @ -, starting with a letter or digit",
            "username",
        ) from None
    except asyncpg.ForeignKeyViolationError:
        raise AuthError(f"contractor_id: no contractor {contractor_id}", "contractor_id", 404) from None
    return dict(row)


DESIGNABLE = frozenset({Role.ADMIN, Role.MONITOR})  # servidores; the flag lets them decide occurrences


def _check_designated(role: Role, designated: bool | None) -> None:
    if designated and role not in DESIGNABLE:
        raise AuthError("designated: only a servidor (admin or monitor) may be the designated servidor", "designated")


def _check_superior(role: Role, superior: bool | None) -> None:
    if superior and role not in DESIGNABLE:
        raise AuthError(
            "superior_authority: only a servidor (admin or monitor) may be the superior authority", "superior_authority"
        )


async def is_superior_authority(conn: Conn, user_id: int) -> bool:
    """Whether the (active) user is flagged as the superior authority, who judges appeals (Lei 14.133/2021 Art.
    166, sole paragraph) besides the admins."""
    return bool(await conn.fetchval(q.USER_SUPERIOR, user_id))


async def is_designated(conn: Conn, user_id: int) -> bool:
    """Whether the (active) user is flagged as the designated servidor, who decides occurrences (Art. 42)."""
    return bool(await conn.fetchval(q.USER_DESIGNATED, user_id))


async def _hash(password: str) -> str:
    return await asyncio.to_thread(passwords.hash_password, password)


async def change_user(conn: Conn, user_id: int, changes: dict[str, Any]) -> dict[str, Any]:
    """Apply the given fields (full_name, role, contractor_id, active, password, designated, superior_authority);
    ends the user's sessions when the password, role or active flag changes. A role that may not be designated
    drops both flags."""
    current = await conn.fetchrow(q.USER_BY_ID, user_id)
    if current is None:
        raise AuthError(f"no user {user_id}", None, 404)
    role = Role(changes.get("role") or current["role"])
    contractor_id = changes["contractor_id"] if "contractor_id" in changes else current["contractor_id"]
    if role is not Role.CONTRACTOR:
        contractor_id = None
    elif contractor_id is None:
        raise AuthError("contractor_id: a contractor user must name its contractor", "contractor_id")
    password_hash = None
    if changes.get("password") is not None:
        try:
            passwords.check_policy(changes["password"], current["username"])
        except passwords.PasswordPolicyError as e:
            raise AuthError(str(e), "password") from None
        password_hash = await _hash(changes["password"])
    elif "password" in changes:
        raise AuthError("password: may not be null", "password")
    if "active" in changes and changes["active"] is None:
        raise AuthError("active: may not be null", "active")
    if "designated" in changes and changes["designated"] is None:
        raise AuthError("designated: may not be null", "designated")
    _check_designated(role, changes.get("designated"))
    designated = bool(changes["designated"]) if "designated" in changes else current["designated"]
    if role not in DESIGNABLE and designated:
        changes = {**changes, "designated": False}
        designated = False
    if "superior_authority" in changes and changes["superior_authority"] is None:
        raise AuthError("superior_authority: may not be null", "superior_authority")
    _check_superior(role, changes.get("superior_authority"))
    superior = bool(changes["superior_authority"]) if "superior_authority" in changes else current["superior_authority"]
    if role not in DESIGNABLE and superior:
        changes = {**changes, "superior_authority": False}
        superior = False
    if current["role"] == Role.ADMIN and (role is not Role.ADMIN or changes.get("active") is False):
        others = await conn.fetchval(q.OTHER_ACTIVE_ADMINS, user_id)
        if not others:
            raise AuthError("role: this is the last active admin; make another admin first", "role", 409)
    fields = [*changes, "contractor_id"] if "role" in changes else list(changes)
    try:
        row = await conn.fetchrow(
            q.UPDATE_USER,
            user_id,
            fields,
            changes.get("full_name"),
            role.value,
            contractor_id,
            changes.get("active"),
            password_hash,
            designated,
            superior,
        )
    except asyncpg.ForeignKeyViolationError:
        raise AuthError(f"contractor_id: no contractor {contractor_id}", "contractor_id", 404) from None
    if {"password", "role", "active", "contractor_id"} & set(changes):
        await conn.execute(q.DELETE_USER_SESSIONS, user_id)
    return dict(row)


@dataclass(frozen=True, slots=True)
class LoginResult:
    principal: Principal | None
    reason: str  # "ok", "unknown", "inactive", "bad_password"


async def check_login(conn: Conn, username: str, password: str, idle_s: float, max_age_s: float) -> LoginResult:
    """Verify a password; the limits on trying (auth/limits.py) are checked before this."""
    row = await conn.fetchrow(q.USER_FOR_LOGIN, normalize_username(username))
    # Always spend an argon2 verification, so the answer time does not tell which usernames exist.
    # argon2 costs tens of milliseconds of CPU: off the event loop.
    ok = await asyncio.to_thread(passwords.verify, row["password_hash"] if row else None, password)
    if row is None:
        return LoginResult(None, "unknown")
    if not row["active"]:
        return LoginResult(None, "inactive")
    if not ok:
        return LoginResult(None, "bad_password")
    rehash = await _hash(password) if passwords.needs_rehash(row["password_hash"]) else None
    await conn.execute(q.LOGIN_SUCCEEDED, row["id"], rehash)
    await conn.execute(q.DELETE_EXPIRED_SESSIONS, idle_s, max_age_s)  # housekeeping, at a moment that is rare
    return LoginResult(Principal(row["id"], row["username"], Role(row["role"]), row["contractor_id"], "session"), "ok")


async def spend_a_check(password: str) -> None:
    """The work of a password check, for an answer that is already decided: it takes as long as the others."""
    await asyncio.to_thread(passwords.verify, None, password)


async def create_session(conn: Conn, user_id: int, ip: str | None) -> tuple[str, str]:
    """A new session for the user: (session id for the cookie, CSRF token). Only the id's hash is kept."""
    session_id = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(32)
    await conn.execute(q.INSERT_SESSION, digest(session_id), user_id, csrf, ip)
    return session_id, csrf


async def session_principal(
    conn: Conn, session_id: str, idle_s: float, max_age_s: float
) -> tuple[Principal, str] | None:
    h = digest(session_id)
    row = await conn.fetchrow(q.TOUCH_SESSION, h, idle_s, max_age_s)
    if row is None:
        return None
    p = Principal(row["id"], row["username"], Role(row["role"]), row["contractor_id"], "session", session_hash=h)
    return p, row["csrf_token"]


async def end_session(conn: Conn, session_hash: bytes) -> None:
    await conn.execute(q.DELETE_SESSION, session_hash)


def default_token_expiry(now: datetime | None = None) -> datetime:
    """When a personal API token made now expires, unless its creator chooses otherwise."""
    return (now or datetime.now(UTC)) + TOKEN_LIFETIME


async def create_token(
    conn: Conn, user_id: int, name: str = "", expires_at: datetime | EllipsisType | None = ...
) -> dict[str, Any]:
    """A personal API token, returned once; it carries its user's role and scope.

    It expires at `expires_at` (a year from now if not given); None, asked for explicitly, means never.
    """
    if expires_at is ...:
        expires_at = default_token_expiry()
    elif expires_at is not None and expires_at <= datetime.now(UTC):
        raise AuthError(f"expires_at: {expires_at.isoformat()} is not in the future", "expires_at")
    token = USER_TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = await conn.fetchrow(q.INSERT_TOKEN, user_id, name, digest(token), expires_at)
    return {**dict(row), "token": token}


class TokenExpired(Exception):
    """A personal API token past its expiry."""

    def __init__(self, expires_at: datetime) -> None:
        super().__init__(expires_at.isoformat())
        self.expires_at = expires_at


async def token_principal(conn: Conn, token: str) -> Principal | None:
    """The principal a token stands for; None if unknown or revoked; TokenExpired past its expiry."""
    row = await conn.fetchrow(q.TOKEN_PRINCIPAL, digest(token))
    if row is None:
        return None
    if row["expired"]:
        raise TokenExpired(row["expires_at"])
    return Principal(row["user_id"], row["username"], Role(row["role"]), row["contractor_id"], "token", None, row["id"])


async def revoke_token(conn: Conn, token_id: int, user_id: int, any_user: bool) -> dict[str, Any] | None:
    row = await conn.fetchrow(q.REVOKE_TOKEN, token_id, user_id, any_user)
    return dict(row) if row else None


async def list_tokens(conn: Conn, user_id: int, limit: int = 500, offset: int = 0) -> tuple[list[dict[str, Any]], int]:
    """The user's tokens (never the secrets) and how many there are."""
    return split_total(await conn.fetch(q.LIST_TOKENS, user_id, limit, offset))
