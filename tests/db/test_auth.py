"""Users, sessions, CSRF, lockout and personal API tokens against the real app and database."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import httpx

from telemetria.app import create_app
from tests.conftest import ScratchDb
from tests.db.conftest import PASSWORD, People, login


@asynccontextmanager
async def app_client(test_db: ScratchDb, **settings: object) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(test_db.settings(rollup_interval_s=0, **settings))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            yield c


async def test_login_sets_a_hardened_session_cookie_and_me_answers(client: httpx.AsyncClient, people: People) -> None:
    r = await login(client, "monitor")
    assert r.status_code == 200, r.text
    assert r.json()["user"] == {
        "id": people.ids["monitor"],
        "username": "monitor",
        "role": "monitor",
        "contractor_id": None,
    }
    cookie = next(h for h in r.headers.get_list("set-cookie") if h.startswith("telemetria_session="))
    assert "HttpOnly" in cookie and "SameSite=lax" in cookie and "Secure" not in cookie  # plain http here
    me = await client.get("/api/v1/auth/me")
    assert me.status_code == 200 and me.json()["via"] == "session"
    assert "write_registry" in me.json()["permissions"] and "manage_users" not in me.json()["permissions"]


async def test_cookie_is_secure_behind_https(client: httpx.AsyncClient, people: People) -> None:
    r = await client.post("https://test/api/v1/auth/login", json={"username": "admin", "password": PASSWORD})
    assert all("Secure" in h for h in r.headers.get_list("set-cookie"))


async def test_wrong_password_and_unknown_user_get_the_same_401(client: httpx.AsyncClient, people: People) -> None:
    a = await login(client, "admin", "wrong password!")
    b = await login(client, "nobody", "wrong password!")
    assert a.status_code == b.status_code == 401
    assert a.json() == b.json() == {"detail": "wrong username or password"}


async def test_anonymous_requests_get_401(client: httpx.AsyncClient, people: People) -> None:
    client.cookies.clear()
    r = await client.get("/api/v1/vehicles")
    assert r.status_code == 401 and "WWW-Authenticate" in r.headers
    bad = await client.get("/api/v1/vehicles", headers={"Authorization": "Bearer tlm_forged"})
    assert bad.status_code == 401 and "unknown or revoked" in bad.json()["detail"]


async def test_lockout_after_repeated_failures_even_for_the_right_password(
    client: httpx.AsyncClient, people: People, conn: asyncpg.Connection
) -> None:
    for _ in range(4):
        assert (await login(client, "auditor", "guess guess guess")).status_code == 401
    fifth = await login(client, "auditor", "guess guess guess")
    assert fifth.status_code == 429 and int(fifth.headers["Retry-After"]) > 800
    assert (await login(client, "auditor")).status_code == 429  # locked: even the right password waits
    failures = await conn.fetchval("SELECT count(*) FROM audit_log WHERE action = 'auth.login_failed'")
    assert failures == 6
    # An admin resetting the password unlocks the account.
    await login(client, "admin")
    r = await client.patch(f"/api/v1/users/{people.ids['auditor']}", json={"password": "a brand new secret"})
    assert r.status_code == 200, r.text
    assert (await login(client, "auditor", "a brand new secret")).status_code == 200


async def test_per_address_throttle(client: httpx.AsyncClient, people: People) -> None:
    client.app.state.login_throttle.limit = 3  # type: ignore[attr-defined]
    try:
        codes = [(await login(client, f"user{i}", "whatever pass")).status_code for i in range(4)]
    finally:
        client.app.state.login_throttle.limit = 30  # type: ignore[attr-defined]
        client.app.state.login_throttle._attempts.clear()  # type: ignore[attr-defined]
    assert codes == [401, 401, 401, 429]


async def test_cookie_writes_need_the_csrf_token(client: httpx.AsyncClient, people: People) -> None:
    await login(client, "monitor")
    body = {"plate": "ABC1D23"}
    no_csrf = await client.post("/api/v1/vehicles", json=body, headers={"X-CSRF-Token": ""})
    assert no_csrf.status_code == 403 and "X-CSRF-Token" in no_csrf.json()["detail"]
    cross = await client.post("/api/v1/vehicles", json=body, headers={"Origin": "https://evil.example"})
    assert cross.status_code == 403 and "Origin" in cross.json()["detail"]
    ok = await client.post("/api/v1/vehicles", json=body)
    assert ok.status_code == 201, ok.text
    # A bearer token needs no CSRF token: browsers never attach it by themselves.
    client.cookies.clear()
    client.headers.pop("X-CSRF-Token")
    r = await client.post("/api/v1/vehicles", json={"plate": "ABC1D24"}, headers=people.auth("monitor"))
    assert r.status_code == 201, r.text


async def test_login_replaces_the_session_it_was_handed(client: httpx.AsyncClient, people: People) -> None:
    await login(client, "admin")
    first = client.cookies["telemetria_session"]
    r = await client.post("/api/v1/auth/login", json={"username": "admin", "password": PASSWORD})
    second = r.cookies["telemetria_session"]
    assert second != first
    client.cookies.set("telemetria_session", first)
    assert (await client.get("/api/v1/auth/me")).status_code == 401  # the fixed session died


async def test_logout_ends_the_session(client: httpx.AsyncClient, people: People) -> None:
    await login(client, "auditor")
    session = client.cookies["telemetria_session"]
    assert (await client.post("/api/v1/auth/logout")).status_code == 200
    client.cookies.set("telemetria_session", session)
    assert (await client.get("/api/v1/auth/me")).status_code == 401


async def test_idle_sessions_expire(client: httpx.AsyncClient, people: People, conn: asyncpg.Connection) -> None:
    await login(client, "auditor")
    assert (await client.get("/api/v1/auth/me")).status_code == 200
    await conn.execute("UPDATE sessions SET last_seen_at = now() - interval '31 minutes'")
    r = await client.get("/api/v1/auth/me")
    assert r.status_code == 401 and "expired" in r.json()["detail"]


async def test_api_tokens_are_shown_once_scoped_and_revocable(client: httpx.AsyncClient, people: People) -> None:
    await login(client, "auditor")
    created = await client.post("/api/v1/tokens", json={"name": "tce export script"})
    assert created.status_code == 201
    token, token_id = created.json()["token"], created.json()["id"]
    listed = (await client.get("/api/v1/tokens")).json()["items"]
    assert all("token" not in t and "token_hash" not in t for t in listed)
    client.cookies.clear()
    auth = {"Authorization": f"Bearer {token}"}
    me = await client.get("/api/v1/auth/me", headers=auth)
    assert me.json()["role"] == "auditor" and me.json()["via"] == "token"
    assert (await client.post("/api/v1/vehicles", json={"plate": "XYZ9A87"}, headers=auth)).status_code == 403
    assert (await client.delete(f"/api/v1/tokens/{token_id}", headers=auth)).status_code == 200
    assert (await client.get("/api/v1/auth/me", headers=auth)).status_code == 401
    # Someone else's token id is not yours to revoke.
    other = await client.delete("/api/v1/tokens/1", headers=people.auth("contractor"))
    assert other.status_code == 404


async def test_tracker_tokens_are_not_user_tokens(client: httpx.AsyncClient, people: People) -> None:
    r = await client.get("/api/v1/vehicles", headers={"Authorization": "Bearer some-tracker-token"})
    assert r.status_code == 401 and "not a user API token" in r.json()["detail"]


async def test_deactivating_a_user_ends_sessions_and_tokens(client: httpx.AsyncClient, people: People) -> None:
    r = await client.patch(
        f"/api/v1/users/{people.ids['monitor']}", json={"active": False}, headers=people.auth("admin")
    )
    assert r.status_code == 200 and r.json()["active"] is False
    assert (await client.get("/api/v1/auth/me", headers=people.auth("monitor"))).status_code == 401
    assert (await login(client, "monitor")).status_code == 401


async def test_user_creation_validates_and_names_fields(client: httpx.AsyncClient, people: People) -> None:
    h = people.auth("admin")
    short = await client.post(
        "/api/v1/users", json={"username": "ana", "password": "short", "role": "monitor"}, headers=h
    )
    assert short.status_code == 400 and short.json()["field"] == "password"
    orphan = await client.post(
        "/api/v1/users", json={"username": "ana", "password": "long enough pw", "role": "contractor"}, headers=h
    )
    assert orphan.status_code == 400 and orphan.json()["field"] == "contractor_id"
    taken = await client.post(
        "/api/v1/users", json={"username": "Admin", "password": "long enough pw", "role": "monitor"}, headers=h
    )
    assert taken.status_code == 409 and taken.json()["field"] == "username"
    bad_role = await client.post(
        "/api/v1/users", json={"username": "ana", "password": "long enough pw", "role": "root"}, headers=h
    )
    assert bad_role.status_code == 422 and "role" in bad_role.json()["detail"]
    ok = await client.post(
        "/api/v1/users",
        json={
            "username": "ana.souza",
            "password": "long enough pw",
            "role": "contractor",
            "contractor_id": people.contractor_id,
        },
        headers=h,
    )
    assert ok.status_code == 201 and "password_hash" not in ok.json()


async def test_audit_log_records_logins_and_writes_and_is_append_only(
    client: httpx.AsyncClient, people: People, conn: asyncpg.Connection
) -> None:
    await login(client, "admin", "nope nope nope")
    await login(client, "monitor")
    await client.post("/api/v1/vehicles", json={"plate": "ABC1D23"})
    r = await client.get("/api/v1/audit", headers=people.auth("auditor"))
    assert r.status_code == 200
    actions = [e["action"] for e in r.json()["items"]]
    assert actions == ["registry.vehicle.create", "auth.login", "auth.login_failed"]
    entry = r.json()["items"][0]
    assert entry["username"] == "monitor" and entry["ip"] == "127.0.0.1" and entry["target"].startswith("vehicle:")
    assert (await client.get("/api/v1/audit", headers=people.auth("monitor"))).status_code == 403
    for sql in ("UPDATE audit_log SET action = 'x'", "DELETE FROM audit_log"):
        try:
            await conn.execute(sql)
        except asyncpg.InsufficientPrivilegeError as e:
            assert "append-only" in str(e)
        else:
            raise AssertionError(f"{sql} was allowed")


async def test_the_last_admin_cannot_be_demoted_or_deactivated(client: httpx.AsyncClient, people: People) -> None:
    h = people.auth("admin")
    me = people.ids["admin"]
    for change in ({"role": "monitor"}, {"active": False}):
        r = await client.patch(f"/api/v1/users/{me}", json=change, headers=h)
        assert r.status_code == 409 and "last active admin" in r.json()["detail"]
    r = await client.patch(f"/api/v1/users/{people.ids['monitor']}", json={"role": "admin"}, headers=h)
    assert r.status_code == 200
    assert (await client.patch(f"/api/v1/users/{me}", json={"role": "monitor"}, headers=h)).status_code == 200


# --- lockout: per account and address, the same for every username (issue 13, item 4) ---------
# The in-process client connects from 127.0.0.1, the default trusted proxy, so X-Forwarded-For
# sets the client's address as a reverse proxy on the host would.


async def attempt(client: httpx.AsyncClient, username: str, password: str, address: str) -> httpx.Response:
    client.cookies.clear()
    return await client.post(
        "/api/v1/auth/login", json={"username": username, "password": password}, headers={"X-Forwarded-For": address}
    )


async def answers(client: httpx.AsyncClient, username: str, address: str, n: int = 6) -> list[tuple[int, str, bool]]:
    out = []
    for _ in range(n):
        r = await attempt(client, username, "guess guess guess", address)
        retry = int(r.headers.get("Retry-After", "0"))
        assert retry == 0 or 800 < retry <= 900, retry
        out.append((r.status_code, r.json()["detail"], retry > 0))
    return out


async def test_unknown_inactive_and_real_usernames_get_the_same_answers_lockout_included(
    client: httpx.AsyncClient, people: People, conn: asyncpg.Connection
) -> None:
    await conn.execute("UPDATE users SET active = false WHERE username = 'monitor'")
    real = await answers(client, "auditor", "198.51.100.1")
    unknown = await answers(client, "nobody", "198.51.100.2")
    inactive = await answers(client, "monitor", "198.51.100.3")
    assert real == unknown == inactive
    assert [status for status, _, _ in real] == [401] * 4 + [429] * 2


async def test_failures_from_other_addresses_cannot_lock_the_owner_out(
    client: httpx.AsyncClient, people: People
) -> None:
    for i in range(3):  # an attacker rotating addresses, each until it is locked out
        assert [s for s, _, _ in await answers(client, "admin", f"203.0.113.{i}")] == [401] * 4 + [429] * 2
    # The attacker's addresses stay locked out of this account, even with the right password...
    assert (await attempt(client, "admin", PASSWORD, "203.0.113.1")).status_code == 429
    # ...and the owner, from an address that has not failed, gets in.
    assert (await attempt(client, "admin", PASSWORD, "198.51.100.7")).status_code == 200


async def test_a_login_resets_the_count_of_its_address(client: httpx.AsyncClient, people: People) -> None:
    assert [s for s, _, _ in await answers(client, "auditor", "198.51.100.1", 4)] == [401] * 4
    assert (await attempt(client, "auditor", PASSWORD, "198.51.100.1")).status_code == 200
    assert [s for s, _, _ in await answers(client, "auditor", "198.51.100.1", 4)] == [401] * 4


async def test_the_lockout_ends_when_the_failures_are_older_than_its_window(
    client: httpx.AsyncClient, people: People, conn: asyncpg.Connection
) -> None:
    async def failed(address: str, minutes_ago: range) -> None:
        await conn.executemany(
            "INSERT INTO audit_log (at, username, action, detail, ip) VALUES (now() - make_interval(mins => $1),"
            " 'auditor', 'auth.login_failed', '{\"reason\": \"bad_password\"}', $2)",
            [(m, address) for m in minutes_ago],
        )

    await failed("198.51.100.1", range(10, 15))  # five failures, the oldest 14 minutes ago: one more minute
    r = await attempt(client, "auditor", PASSWORD, "198.51.100.1")
    assert r.status_code == 429 and 50 < int(r.headers["Retry-After"]) <= 60
    await failed("198.51.100.2", range(16, 21))  # all older than 15 minutes
    assert (await attempt(client, "auditor", PASSWORD, "198.51.100.2")).status_code == 200


async def test_concurrent_guesses_cannot_outrun_the_lockout(client: httpx.AsyncClient, people: People) -> None:
    """Attempts from one address for one account are checked one at a time, so a burst gets no extra guesses."""
    for _ in range(4):
        assert (await attempt(client, "admin", "guess guess guess", "203.0.113.9")).status_code == 401
    wrong = [asyncio.create_task(attempt(client, "admin", "guess guess guess", "203.0.113.9")) for _ in range(5)]
    await asyncio.sleep(0.05)  # the burst is in flight: the right password comes after a fifth wrong one
    right = await attempt(client, "admin", PASSWORD, "203.0.113.9")
    assert sorted(r.status_code for r in await asyncio.gather(*wrong)) == [429] * 5
    assert right.status_code == 429
