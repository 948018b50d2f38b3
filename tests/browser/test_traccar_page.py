"""The Traccar servers page (/gateways-traccar) in a real browser: an admin creates one, copies its traccar.xml
lines once, and a Traccar body sent with that token is stored."""

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
