"""The real `telemetria serve` (two processes) takes a login's address from the trusted proxy only.

Two shipped set-ups: the compose file's settings, reached by something that is not the host's
proxy; and the documented install on a host (docs/operations.md), with nginx on the same machine (the default
TELEMETRIA_FORWARDED_ALLOW_IPS), played by the test with that guide's X-Forwarded-For line.
Every login opens a new connection, as nginx does by default, so both processes take some; the
per-address limit must hold across them. (Issue 13, item 3.)
"""

from __future__ import annotations

import asyncpg
import httpx

from tests.deployment import compose_app_env, nginx_forwarded_for
from tests.e2e.conftest import serve

CLIENT = "198.51.100.23"


async def _logins(url: str, forwarded_for: list[str]) -> list[int]:
    codes = []
    for i, xff in enumerate(forwarded_for):
        async with httpx.AsyncClient() as c:
            r = await c.post(
                f"{url}/api/v1/auth/login",
                json={"username": f"guess{i}", "password": "not the password"},
                headers={"X-Forwarded-For": xff, "Connection": "close"},
            )
        codes.append(r.status_code)
    return codes


async def _audited_addresses(conn: asyncpg.Connection) -> list[str]:
    rows = await conn.fetch("SELECT DISTINCT host(ip) AS ip FROM audit_log WHERE action = 'auth.login_failed'")
    return [r["ip"] for r in rows]


async def test_compose_settings_ignore_forwarded_for_from_anything_but_the_proxy(
    db_env: dict[str, str], conn: asyncpg.Connection, clean: None
) -> None:
    env = {**db_env, **compose_app_env()}
    assert env["TELEMETRIA_WORKERS"] == "2"
    server = serve(env)
    url = next(server)
    try:
        codes = await _logins(url, [f"10.0.0.{i}" for i in range(40)])
    finally:
        server.close()
    assert codes == [401] * 30 + [429] * 10
    assert await _audited_addresses(conn) == ["127.0.0.1"]


async def test_host_install_behind_nginx_takes_the_address_nginx_saw(
    db_env: dict[str, str], conn: asyncpg.Connection, clean: None
) -> None:
    env = {k: v for k, v in db_env.items() if k != "TELEMETRIA_FORWARDED_ALLOW_IPS"}
    server = serve(env, "--workers", "2")
    url = next(server)
    try:
        codes = await _logins(url, [nginx_forwarded_for(f"10.0.0.{i}, 127.0.0.1", CLIENT) for i in range(40)])
    finally:
        server.close()
    assert codes == [401] * 30 + [429] * 10
    assert await _audited_addresses(conn) == [CLIENT]
