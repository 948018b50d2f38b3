"""The HTML pages through the real app: login first, then each role gets exactly the pages it may open."""

from __future__ import annotations

import asyncpg
import httpx
import pytest

from telemetria.auth.roles import PERMISSIONS, Role
from telemetria.web import nav
from tests.db.conftest import People, login


async def test_without_a_session_every_page_leads_to_the_login_page(client: httpx.AsyncClient) -> None:
    r = await client.get("/")
    assert r.status_code == 303 and r.headers["location"] == "/entrar"
    for page in nav.PAGES:
        r = await client.get(page.path)
        assert r.status_code == 303 and r.headers["location"] == f"/entrar?next={page.path}", page.path
    r = await client.get("/entrar")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert 'lang="pt-BR"' in r.text and 'id="login-form"' in r.text


@pytest.mark.parametrize("role", list(Role))
async def test_each_role_opens_exactly_its_pages(client: httpx.AsyncClient, people: People, role: Role) -> None:
    assert (await login(client, role.value)).status_code == 200
    for page in nav.PAGES:
        r = await client.get(page.path)
        allowed = page.perm in PERMISSIONS[role]
        assert r.status_code == (200 if allowed else 403), (role, page.path)
        assert "script-src 'self'" in r.headers["content-security-policy"]
        assert r.headers["cache-control"] == "no-store" and r.headers["x-frame-options"] == "DENY"
        if allowed:
            assert f"<title>{page.title} · Telemetria</title>" in r.text
        else:
            assert "Acesso negado" in r.text
    # Logged in, the login page and the front door lead on to the role's home (a servidor's: the day panel).
    home = "/painel" if role in (Role.ADMIN, Role.MONITOR) else "/mapa"
    assert (await client.get("/")).headers["location"] == home
    assert (await client.get("/entrar")).headers["location"] == home
    assert (await client.get("/entrar?next=/historico")).headers["location"] == "/historico"


async def test_unknown_pages_say_so_in_portuguese(client: httpx.AsyncClient, people: People) -> None:
    await login(client, "admin")
    for path in ("/relatorios/nada", "/cadastro/nada"):
        r = await client.get(path)
        assert r.status_code == 404 and "Página não encontrada" in r.text


async def test_the_page_names_its_user_and_not_the_password(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    await login(client, "contractor")
    r = await client.get("/mapa")
    company = await conn.fetchval("SELECT name FROM contractors WHERE id = $1", people.contractor_id)
    # The header names the user's company (the role stays in the page's config for its scripts).
    assert '"role": "contractor"' in r.text and f'<span class="who-role">{company}</span>' in r.text
    session = client.cookies.get("telemetria_session")
    assert session and session not in r.text and "correct horse battery" not in r.text


async def test_leaflet_and_the_scripts_are_served_by_the_app(client: httpx.AsyncClient) -> None:
    for path in ("/static/vendor/leaflet/leaflet.js", "/static/vendor/leaflet/leaflet.css", "/static/js/live.js",
                 "/static/app.css", "/static/vendor/leaflet/LICENSE"):  # fmt: skip
        r = await client.get(path)
        assert r.status_code == 200 and r.content, path
        assert r.headers["cache-control"] == "no-cache"  # revalidated: an upgrade never runs an old script
        again = await client.get(path, headers={"If-None-Match": r.headers["etag"]})
        assert again.status_code == 304
    assert (await client.get("/api/v1")).json()["service"] == "telemetria"


async def test_the_verify_page_links_the_published_roots_only_when_the_public_area_is_on(
    client: httpx.AsyncClient, people: People
) -> None:
    await login(client, "contractor")
    r = await client.get("/verificar")
    assert r.status_code == 200 and '"public_enabled": false' in r.text and 'id="v-public" hidden' in r.text
    app = client.app  # type: ignore[attr-defined]
    app.state.settings = app.state.settings.model_copy(update={"public_enabled": True})
    r = await client.get("/verificar")
    assert '"public_enabled": true' in r.text and 'href="/publico/selos"' in r.text
