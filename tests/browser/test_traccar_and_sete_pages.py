"""The Traccar servers page (/gateways-traccar) and the Rotas page's SETE import, in a real browser: an admin
creates a Traccar server, copies its traccar.xml lines once, and a Traccar body sent with that token is stored;
a servidor simulates a SETE import and applies it."""

from __future__ import annotations

import random
import re
import string
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import orjson
from playwright.async_api import expect

from tests.browser.conftest import Site, Tab
from tests.e2e.conftest import ROOT

BODY = ROOT / "tests" / "payloads" / "traccar" / "v6_json_gt06.json"


def _tag() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=6))


async def _api(site: Site, method: str, path: str, role: str = "admin", **kw: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        return await client.request(method, path, headers=site.token(role), **kw)


async def test_an_admin_creates_a_traccar_server_and_its_token_works(tab: Tab) -> None:
    site, page = tab.site, tab.page
    letter = random.choice(string.ascii_uppercase)
    plate = f"TR{random.choice('TUVXZ')}{random.randint(0, 9)}{letter}{random.randint(10, 99)}"
    assert (await _api(site, "POST", "/api/v1/vehicles", json={"plate": plate})).status_code == 201
    vid = (await _api(site, "GET", f"/api/v1/vehicles?plate={plate}")).json()["items"][0]["id"]
    uid = f"tr-{_tag()}"
    r = await _api(site, "POST", "/api/v1/trackers", json={"unique_id": uid, "vehicle_id": vid})
    assert r.status_code == 201, r.text
    name = f"Traccar {_tag()}"
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    await tab.login("admin")
    await tab.open("/gateways-traccar")
    await page.get_by_role("button", name="Novo servidor Traccar").click()
    form = page.get_by_role("dialog", name="Novo servidor Traccar")
    await form.get_by_label("Nome").fill(name)
    await form.get_by_role("button", name="Gerar token").click()

    shown = page.get_by_role("dialog", name=f"Servidor Traccar cadastrado: {name}")
    await expect(shown.get_by_role("alert")).to_contain_text("aparece só esta vez")
    config = await shown.get_by_test_id("gateway-config").text_content() or ""
    token = re.search(r"Authorization: Bearer (\S+)</entry>", config)
    assert token is not None and "<entry key='forward.type'>json</entry>" in config
    await shown.get_by_role("button", name="Copiar configuração").click()
    assert await page.evaluate("navigator.clipboard.readText()") == config
    await tab.shot("traccar-gateway-token")
    await shown.get_by_role("button", name="Já copiei, fechar").click()
    await expect(page.get_by_test_id("gateway-config")).to_have_count(0)
    assert token[1] not in await page.content()
    await expect(page.locator("table.reg-table tbody tr", has_text=name)).to_contain_text("todos os rastreadores")

    doc = orjson.loads(BODY.read_bytes())
    doc["device"]["uniqueId"] = uid
    doc["position"]["fixTime"] = (datetime.now(UTC) - timedelta(minutes=1)).isoformat(timespec="milliseconds")
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        headers = {"Authorization": f"Bearer {token[1]}", "Content-Type": "application/json"}
        r = await client.post("/api/v1/traccar/positions", content=orjson.dumps(doc), headers=headers)
    assert r.status_code == 200 and r.json() == {"stored": 1}, r.text


async def test_the_routes_page_simulates_a_sete_import_then_applies_it(tab: Tab) -> None:
    """ "Importar do SETE": the form, the simulation's report set as text, then the same import applied. The API
    answers with the report the importer makes of the SETE double (the site has no SETE address configured;
    tests/db/test_sete_import.py runs the endpoint itself against the double)."""
    from playwright.async_api import Route

    from telemetria.sete import importer
    from telemetria.sete.client import SeteClient
    from telemetria.sete.plan import decide
    from tests.sete_double import IBGE, PASSWORD, USER, SeteDouble

    double = SeteDouble()
    double.data["rotas"]["data"][0]["nome"] = "<b>Linha</b> Ramal 12"  # markup must arrive as text
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=double.app), base_url="http://sete") as http:
        client = SeteClient(http, IBGE)
        await client.login(USER, PASSWORD)
        items = importer.items_of(await client.snapshot(), 2026)
    actions = [decide(it, None, None, None) for it in items]
    sent: list[dict[str, Any]] = []

    async def answer(route: Route) -> None:
        body = orjson.loads(route.request.post_data or "{}")
        sent.append(body)
        report = importer.report(IBGE, actions, body["dry_run"])
        await route.fulfill(status=200, content_type="application/json", body=orjson.dumps(report))

    page = tab.page
    await page.route(re.compile(r".*/api/v1/sete/import$"), answer)
    await tab.login("monitor")
    await tab.open("/cadastro/rotas")
    await page.get_by_role("button", name="Importar do SETE").click()
    form = page.get_by_role("dialog", name="Importar do SETE")
    await form.get_by_label("Código IBGE do município").fill(IBGE)
    await form.get_by_label("E-mail do usuário no SETE").fill(USER)
    await form.get_by_label("Senha do SETE").fill(PASSWORD)
    await form.get_by_role("button", name="Simular importação").click()

    shown = page.get_by_role("dialog", name="Simulação da importação do SETE")
    await expect(shown.get_by_test_id("sete-summary")).to_contain_text("3 novos")
    await expect(shown.get_by_role("cell", name="<b>Linha</b> Ramal 12")).to_be_visible()  # text, not markup
    await expect(shown.locator("b")).to_have_count(0)
    await expect(shown).to_contain_text("no shape in SETE")
    await tab.shot("sete-import-simulation")
    await shown.get_by_role("button", name="Aplicar estas mudanças").click()
    await expect(page.get_by_role("dialog", name="Importação do SETE aplicada")).to_be_visible()
    assert [b["dry_run"] for b in sent] == [True, False]
    assert all(b["password"] == PASSWORD and "url" not in b for b in sent)
