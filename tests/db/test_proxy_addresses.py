"""A client-supplied X-Forwarded-For cannot choose the address the login limit and the audit log see.

With the shipped docker-compose.yml's settings, through the same ASGI stack `telemetria serve`
runs (uvicorn's Config, with whatever it wraps around the application), and with the peer the
host's reverse proxy arrives from. The proxy is played by the test, sending what nginx sends
with docs/operations.md's lines. (Issue 13, item 3: with `*` trusted, 40 logins from 40 invented
addresses were never throttled and the audit log recorded the invented addresses.)
"""

from __future__ import annotations

import ipaddress
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import httpx
import pytest

from telemetria.app import create_app
from telemetria.serve import uvicorn_config
from telemetria.settings import Settings
from tests.conftest import ScratchDb
from tests.db.conftest import PASSWORD, People
from tests.deployment import compose_app_env, compose_gateway, nginx_forwarded_for

CLIENT = "198.51.100.23"  # the attacker's real address, as the proxy sees it


@asynccontextmanager
async def shipped_stack(
    test_db: ScratchDb, peer: str, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[httpx.AsyncClient]:
    """The service as the compose file configures it, reached from `peer`."""
    for name, value in compose_app_env().items():
        monkeypatch.setenv(name, value)
    settings = Settings(database_url=test_db.dsn, rollup_interval_s=0)
    app = create_app(settings)
    config = uvicorn_config(app, settings, log_config=None)
    config.load()
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=config.loaded_app, client=(peer, 41234))
        async with httpx.AsyncClient(transport=transport, base_url="http://telemetria.example") as c:
            yield c


async def _forged_logins(c: httpx.AsyncClient, n: int) -> list[int]:
    codes = []
    for i in range(n):
        invented = f"10.{i}.{i}.{i}, 203.0.113.{i}"
        r = await c.post(
            "/api/v1/auth/login",
            json={"username": f"guess{i}", "password": "not the password"},
            headers={"X-Forwarded-For": nginx_forwarded_for(invented, CLIENT)},
        )
        codes.append(r.status_code)
    return codes


async def test_forged_forwarded_for_through_the_proxy_changes_neither_throttle_nor_audit(
    test_db: ScratchDb, conn: asyncpg.Connection, clean: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with shipped_stack(test_db, compose_gateway(), monkeypatch) as c:
        codes = await _forged_logins(c, 40)
    assert codes == [401] * 30 + [429] * 10  # TELEMETRIA_LOGIN_ATTEMPTS_PER_MIN = 30 for the one real address
    audited = await conn.fetch("SELECT DISTINCT host(ip) AS ip FROM audit_log WHERE action = 'auth.login_failed'")
    assert [r["ip"] for r in audited] == [CLIENT]


async def test_a_peer_that_is_not_the_proxy_is_taken_at_its_own_address(
    test_db: ScratchDb, conn: asyncpg.Connection, clean: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another container on the compose network sending X-Forwarded-For is not believed."""
    neighbour = str(ipaddress.ip_address(compose_gateway()) + 1)
    async with shipped_stack(test_db, neighbour, monkeypatch) as c:
        codes = await _forged_logins(c, 31)
    assert codes[-1] == 429
    audited = await conn.fetch("SELECT DISTINCT host(ip) AS ip FROM audit_log WHERE action = 'auth.login_failed'")
    assert [r["ip"] for r in audited] == [neighbour]


async def test_only_the_proxy_says_the_request_came_over_https(
    test_db: ScratchDb, people: People, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = {"username": "monitor", "password": PASSWORD}
    https = {"X-Forwarded-Proto": "https", "X-Forwarded-For": CLIENT}
    async with shipped_stack(test_db, compose_gateway(), monkeypatch) as c:
        via_proxy = await c.post("/api/v1/auth/login", json=body, headers=https)
    async with shipped_stack(test_db, "127.0.0.1", monkeypatch) as c:
        direct = await c.post("/api/v1/auth/login", json=body, headers=https)
    assert via_proxy.status_code == direct.status_code == 200
    assert all("Secure" in h for h in via_proxy.headers.get_list("set-cookie"))
    assert not any("Secure" in h for h in direct.headers.get_list("set-cookie"))
