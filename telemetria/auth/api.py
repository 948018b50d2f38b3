"""Login, logout, who am I, personal API tokens and (admins) users."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import Response
from pydantic import BaseModel, Field

from telemetria.audit.log import record
from telemetria.auth import limits, store
from telemetria.auth import queries as auth_q
from telemetria.auth.guard import CSRF_COOKIE, SESSION_COOKIE, authenticate, client_ip, require
from telemetria.auth.roles import Perm, Principal, Role
from telemetria.deps import Conn
from telemetria.http import HttpError, json_response
from telemetria.ids import IdPath, IdQuery
from telemetria.localtime import LocalDateTime
from telemetria.paging import Page, page, split_total

router = APIRouter(prefix="/api/v1", tags=["auth"])


class Login(BaseModel):
    username: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=1024)


class NewToken(BaseModel):
    name: str = Field(default="", max_length=100)
    expires_at: LocalDateTime | None = Field(
        default_factory=store.default_token_expiry,
        description="when the token stops working: RFC 3339, or a local date or date-time (America/Porto_Velho); "
        "omitted: one year from now; null: never (asked for explicitly)",
    )


class NewUser(BaseModel):
    username: str = Field(min_length=2, max_length=64)
    password: str
    role: Role
    contractor_id: IdQuery = None
    full_name: str | None = Field(default=None, max_length=200)
    designated: bool = Field(default=False, description="the designated servidor: decides occurrences (Art. 42)")
    superior_authority: bool = Field(
        default=False, description="the superior authority: judges appeals (Lei 14.133/2021 Art. 166, sole paragraph)"
    )


class UserChange(BaseModel):
    full_name: str | None = Field(default=None, max_length=200)
    role: Role | None = None
    contractor_id: IdQuery = None
    active: bool | None = None
    password: str | None = None
    designated: bool | None = None
    superior_authority: bool | None = None


# A user's fields whose old and new values the audit log keeps: access and powers (Art. 42's designation among
# them), never personal data (the full name) nor the password, which are logged by name only (LGPD, Art. 6 III).
AUDITED_FIELDS = ("role", "contractor_id", "active", "designated", "superior_authority")


def _secure(request: Request) -> bool:
    mode = request.app.state.settings.cookie_secure
    return mode == "always" or (mode == "auto" and request.url.scheme == "https")


def _me(p: Principal) -> dict[str, Any]:
    return {"id": p.user_id, "username": p.username, "role": p.role.value, "contractor_id": p.contractor_id}


@router.post("/auth/login")
async def login(body: Login, request: Request) -> Response:
    """Check username and password; on success a new session cookie (and a CSRF token to echo).

    The limits (auth/limits.py) treat every username alike, existing or not: 401 for a wrong
    password, unknown or inactive user; 429 for an address over its limit or locked out of the
    account by its own failures.
    """
    settings = request.app.state.settings
    ip = client_ip(request)
    name = _safe(body)
    # This process's count first, so a flood from one address is turned away without the database.
    wait = request.app.state.login_throttle.retry_after(ip or "?")
    if wait:
        raise _too_many(wait)
    # The connection is taken here, not as a dependency (telemetria.deps.Conn): after the throttle, so a
    # flood never reaches the pool, and after the per-name lock, so attempts waiting on it hold none.
    async with request.app.state.login_locks.hold((name, ip)), request.app.state.pool.acquire() as conn:
        counts = await limits.login_limits(conn, name, ip, settings.login_max_failures, settings.login_lockout_s)
        wait = counts.address_wait_s(settings.login_attempts_per_min)
        if wait:
            raise _too_many(wait)
        wait = counts.lockout_wait_s(settings.login_max_failures, settings.login_lockout_s)
        if wait:
            await store.spend_a_check(body.password)
            await record(conn, "auth.login_failed", None, ip, detail={"reason": "locked"}, username=name)
            raise _locked_out(wait)
        result = await store.check_login(
            conn, body.username, body.password, settings.session_idle_s, settings.session_max_s
        )
        if result.principal is None:
            await record(conn, "auth.login_failed", None, ip, detail={"reason": result.reason}, username=name)
            wait = counts.lockout_wait_s(settings.login_max_failures, settings.login_lockout_s, failing_now=True)
            if wait:
                raise _locked_out(wait)
            raise HttpError(401, "wrong username or password")
        old = request.cookies.get(SESSION_COOKIE)
        if old:  # no session fixation: a login never keeps a session id it was handed
            await store.end_session(conn, store.digest(old))
        session_id, csrf = await store.create_session(conn, result.principal.user_id, ip)
        await record(conn, "auth.login", result.principal, ip)
    resp = json_response({"user": _me(result.principal), "csrf_token": csrf})
    secure = _secure(request)
    max_age = int(settings.session_max_s)
    resp.set_cookie(SESSION_COOKIE, session_id, max_age=max_age, httponly=True, secure=secure, samesite="lax")
    resp.set_cookie(CSRF_COOKIE, csrf, max_age=max_age, httponly=False, secure=secure, samesite="strict")
    return resp


def _too_many(wait_s: float) -> HttpError:
    return HttpError(429, "too many login attempts from this address", {"Retry-After": str(math.ceil(wait_s))})


def _locked_out(wait_s: int) -> HttpError:
    return HttpError(
        429, "too many failed logins for this user from this address; try again later", {"Retry-After": str(wait_s)}
    )


def _safe(body: Login) -> str | None:
    """The attempted username, only if it looks like one (never a pasted password): for the audit log and the
    limits. Anything else cannot be a username, so nothing is to be learned or locked about it."""
    name = store.normalize_username(body.username)
    return name if name.replace(".", "").replace("_", "").replace("@", "").replace("-", "").isalnum() else None


@router.post("/auth/logout")
async def logout(request: Request, who: Principal = Depends(authenticate), *, conn: Conn) -> Response:
    if who.session_hash is not None:
        await store.end_session(conn, who.session_hash)
    await record(conn, "auth.logout", who, client_ip(request))
    resp = json_response({"status": "logged out"})
    resp.delete_cookie(SESSION_COOKIE)
    resp.delete_cookie(CSRF_COOKIE)
    return resp


@router.get("/auth/me")
async def me(who: Principal = Depends(require(Perm.READ))) -> Response:
    return json_response({**_me(who), "via": who.via, "permissions": sorted(p.value for p in Perm if who.can(p))})


@router.post("/tokens", status_code=201)
async def create_token(
    body: NewToken,
    request: Request,
    who: Principal = Depends(require(Perm.OWN_TOKENS)),
    *,
    conn: Conn,
) -> Response:
    """A personal API token with the caller's role and scope, shown once."""
    async with conn.transaction():
        token = await store.create_token(conn, who.user_id, body.name, body.expires_at)
        await record(conn, "token.create", who, client_ip(request), f"token:{token['id']}", _expiry(token))
    return json_response(token, 201)


def _expiry(token: dict[str, Any]) -> dict[str, Any]:
    """For the audit log: when a token ends, or that it never does."""
    expires: datetime | None = token["expires_at"]
    return {"expires_at": expires.isoformat() if expires else "never"}


@router.get("/tokens")
async def list_tokens(
    pg: Page = Depends(page),
    who: Principal = Depends(require(Perm.OWN_TOKENS)),
    *,
    conn: Conn,
) -> Response:
    return json_response(pg.answer(*await store.list_tokens(conn, who.user_id, pg.limit, pg.offset)))


@router.delete("/tokens/{token_id}")
async def revoke_token(
    token_id: IdPath,
    request: Request,
    who: Principal = Depends(require(Perm.OWN_TOKENS)),
    *,
    conn: Conn,
) -> Response:
    async with conn.transaction():
        row = await store.revoke_token(conn, token_id, who.user_id, who.can(Perm.MANAGE_USERS))
        if row is None:
            raise HttpError(404, f"no token {token_id} of yours")
        await record(conn, "token.revoke", who, client_ip(request), f"token:{token_id}")
    return json_response(row)


@router.get("/users")
async def list_users(
    pg: Page = Depends(page),
    who: Principal = Depends(require(Perm.MANAGE_USERS)),
    *,
    conn: Conn,
) -> Response:
    rows = await conn.fetch(auth_q.LIST_USERS, pg.limit, pg.offset)
    return json_response(pg.answer(*split_total(rows)))


@router.post("/users", status_code=201)
async def add_user(
    body: NewUser, request: Request, who: Principal = Depends(require(Perm.MANAGE_USERS)), *, conn: Conn
) -> Response:
    async with conn.transaction():
        user = await store.add_user(
            conn,
            body.username,
            body.password,
            body.role,
            body.contractor_id,
            body.full_name,
            body.designated,
            body.superior_authority,
        )
        flags = {f: True for f in ("designated", "superior_authority") if user.get(f)}  # powers granted at creation
        await record(
            conn, "user.create", who, client_ip(request), f"user:{user['id']}", {"role": body.role.value, **flags}
        )
    return json_response(user, 201)


@router.patch("/users/{user_id}")
async def change_user(
    user_id: IdPath,
    body: UserChange,
    request: Request,
    who: Principal = Depends(require(Perm.MANAGE_USERS)),
    *,
    conn: Conn,
) -> Response:
    changed = sorted(body.model_fields_set)
    if not changed:
        raise HttpError(
            400,
            "nothing to change: send one of full_name, role, contractor_id, active, password, designated, "
            "superior_authority",
        )
    async with conn.transaction():
        before = await conn.fetchrow(auth_q.USER_BY_ID, user_id)
        user = await store.change_user(conn, user_id, body.model_dump(include=body.model_fields_set))
        # What changed, old → new, so the audit log can say it in words (never the password, only that it changed).
        was = dict(before) if before is not None else {}
        changes = {f: [was.get(f), user.get(f)] for f in AUDITED_FIELDS if was.get(f) != user.get(f)}
        await record(
            conn, "user.update", who, client_ip(request), f"user:{user_id}", {"fields": changed, "changes": changes}
        )
    return json_response(user)
