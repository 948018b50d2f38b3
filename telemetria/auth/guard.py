"""The one place requests are authenticated and authorized: `require(perm)` as a FastAPI dependency.

A request is authenticated by a personal API token (`Authorization: Bearer tlm_…`) or by the
session cookie. Cookie-authenticated writes must echo the session's CSRF token in the
`X-CSRF-Token` header (the browser cannot be made to add it cross-site); token requests need
no CSRF token because browsers never attach them on their own. What a principal may *see* is
narrowed by `Principal.scope`, which every registry and report query takes as a parameter.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from fastapi import Request

from telemetria.auth import store
from telemetria.auth.roles import Perm, Principal
from telemetria.http import HttpError, bearer_token

SESSION_COOKIE = "telemetria_session"
CSRF_COOKIE = "telemetria_csrf"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def _unauthenticated(detail: str) -> HttpError:
    return HttpError(401, detail, {"WWW-Authenticate": 'Bearer realm="telemetria"'})


def client_ip(request: Request) -> str | None:
    return request.client.host if request.client else None


async def authenticate(request: Request) -> Principal:
    """The principal behind this request, or 401; cookie writes without the CSRF token get 403."""
    cached: Principal | None = getattr(request.state, "principal", None)
    if cached is not None:
        return cached
    settings = request.app.state.settings
    token = bearer_token(request)
    async with request.app.state.pool.acquire() as conn:
        if token is not None:
            if not token.startswith(store.USER_TOKEN_PREFIX):
                raise _unauthenticated("Authorization: not a user API token (tracker tokens only post fixes)")
            try:
                principal = await store.token_principal(conn, token)
            except store.TokenExpired as e:
                raise _unauthenticated(
                    f"Authorization: API token expired at {e.expires_at.isoformat()}; create a new one"
                ) from None
            if principal is None:
                raise _unauthenticated("Authorization: unknown or revoked API token")
        else:
            session_id = request.cookies.get(SESSION_COOKIE)
            if not session_id:
                raise _unauthenticated("log in first (session cookie or Authorization: Bearer <API token>)")
            found = await store.session_principal(conn, session_id, settings.session_idle_s, settings.session_max_s)
            if found is None:
                raise _unauthenticated("session expired or ended: log in again")
            principal, csrf = found
            if request.method not in SAFE_METHODS:
                _check_csrf(request, csrf)
    request.state.principal = principal
    return principal


def _check_csrf(request: Request, expected: str) -> None:
    origin = request.headers.get("origin")
    if origin and origin != "null" and urlsplit(origin).netloc != request.headers.get("host"):
        raise HttpError(403, f"Origin: {origin} is not this site")
    sent = request.headers.get(CSRF_HEADER, "")
    if not hmac.compare_digest(sent.encode(), expected.encode()):
        raise HttpError(403, "X-CSRF-Token: missing or wrong (cookie-authenticated writes must send it)")


def require(perm: Perm) -> Callable[[Request], Awaitable[Principal]]:
    """A dependency: the authenticated principal, or 403 when its role lacks `perm`."""

    async def dependency(request: Request) -> Principal:
        principal = await authenticate(request)
        if not principal.can(perm):
            raise HttpError(403, f"role {principal.role.value!r} may not do this (needs {perm.value!r})")
        return principal

    dependency.perm = perm  # type: ignore[attr-defined]  # read by the access-matrix test
    return dependency
