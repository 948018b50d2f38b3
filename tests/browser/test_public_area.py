"""The public area in a real browser, without logging in: with publication on, the itineraries' tables and the
map (drawn without tiles), the month's service and the seals' page; with it off (the default), the 404 page."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import pytest
from playwright.async_api import Browser, expect

from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings
from tests.browser.conftest import ARTIFACTS, Tab
from tests.browser.fisc_site import FiscSite, fisc_site, fisc_tab

PLATES = ("PUB1A11", "PUB1A12")
PHASE = os.environ.get("PHASE", "after")  # the screenshots' suffix: before (on the old code) or after
TOWN = "Prefeitura Municipal de Teste"


@pytest.fixture(scope="module")
async def on_site(base_settings: Settings) -> AsyncIterator[FiscSite]:
    async with fisc_site(base_settings, "telemetria_public_on", PLATES, TELEMETRIA_PUBLIC_ENABLED="1",
                         TELEMETRIA_MUNICIPALITY_NAME=TOWN, TELEMETRIA_DETECTOR_INTERVAL_S="0") as s:  # fmt: skip
        yield s


@pytest.fixture(scope="module")
async def off_site(base_settings: Settings) -> AsyncIterator[FiscSite]:
    async with fisc_site(base_settings, "telemetria_public_off", PLATES[:1], TELEMETRIA_DETECTOR_INTERVAL_S="0") as s:
        yield s


@pytest.fixture
async def on_tab(browser: Browser, on_site: FiscSite) -> AsyncIterator[Tab]:
    async with fisc_tab(browser, on_site, downloads=True) as tab:
        yield tab


async def test_on_the_itineraries_and_their_map_without_login(on_tab: Tab) -> None:
    page = on_tab.page
    resp = await page.goto(on_tab.site.url + "/publico")
    assert resp is not None and resp.status == 200
    assert page.url.endswith("/publico")  # no login page in between
    await expect(page.get_by_test_id("municipality")).to_have_text(TOWN)
    routes = page.get_by_test_id("route")
    await expect(routes).to_have_count(len(PLATES))
    first = routes.first
    await expect(first.locator("h2")).to_contain_text("Rota DEMO-01")
    await expect(first.locator("tbody tr").first).to_contain_text("Ponto de embarque (local aproximado)")
    await expect(first).to_contain_text("Escola Municipal da linha DEMO-01")
    await expect(page.locator("#p-precision")).to_contain_text("100 m")
    # The map: each route's line and its stops, vector paths drawn with no tile server.
    await expect(page.locator("#p-map .leaflet-overlay-pane path").first).to_be_visible()
    drawn = await page.locator("#p-map .leaflet-overlay-pane path").count()
    stops = await page.locator("[data-testid=route] tbody tr").count()
    assert drawn == len(PLATES) + stops
    body = await page.locator("body").inner_text()
    assert not any(p in body for p in PLATES) and "Condutor" not in body
    async with page.expect_download() as dl:
        await page.locator("#p-csv").click()
    assert (await dl.value).suggested_filename.startswith("itinerarios_")
    await on_tab.shot("public-itineraries")


async def test_on_the_months_service_and_the_seals_page(on_tab: Tab) -> None:
    page = on_tab.page
    yesterday = datetime.now(UTC).astimezone(LOCAL_TZ).date() - timedelta(days=1)
    await on_tab.open("/publico/servico")
    await expect(page.locator("#s-month")).to_have_value(f"{yesterday:%Y-%m}")
    rows = page.locator("#s-result tbody tr")
    await expect(rows).to_have_count(len(PLATES) + 1)  # the routes and the total
    await expect(rows.last).to_contain_text("Total")
    csv = f"/public/service?month={yesterday:%Y-%m}&format=csv"
    await expect(page.locator("#s-csv")).to_have_attribute("href", csv)
    body = await page.locator("body").inner_text()
    assert not any(p in body for p in PLATES)
    # The month as people say it, never its ISO form (issue 36: "Serviço por rota em 2026-12").
    months = ["janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
              "novembro", "dezembro"]  # fmt: skip
    caption = page.locator("#s-result table caption")
    await expect(caption).to_have_text(f"Serviço por rota em {months[yesterday.month - 1]} de {yesterday.year}")
    assert f"{yesterday:%Y-%m}" not in body and "(UTC)" not in body
    await on_tab.shot("public-service")
    # A sealed day (rows as the sealer stores them): the list shows its root, the day opened its leaves.
    leaf, root = "a" * 64, "b" * 64
    conn = await asyncpg.connect(on_tab.site.dsn)
    try:
        vid = await conn.fetchval("SELECT id FROM vehicles WHERE plate = $1", PLATES[0])
        await conn.execute("INSERT INTO day_seals (vehicle_id, day, version, fixes, sha256, leaf_sha256)"
                           " VALUES ($1, '2026-03-02', 1, 42, $2, $3)", vid, "c" * 64, leaf)  # fmt: skip
        await conn.execute(
            "INSERT INTO seal_roots (day, version, vehicles, root_sha256) VALUES ('2026-03-02', 1, 1, $1)", root
        )
    finally:
        await conn.close()
    await on_tab.open("/publico/selos")
    await expect(page.locator("h1")).to_have_text("Selos diários das posições")
    await expect(page.locator("#z-how summary")).to_have_text("Como verificar")
    days = page.locator("#z-list tbody tr")
    await expect(days).to_have_count(1)
    await expect(days.first).to_contain_text(root)
    await days.first.get_by_role("button", name="02/03/2026").click()
    await expect(page.locator("#z-day h2").first).to_have_text("Dia 02/03/2026")
    await expect(page.locator("#z-day")).to_contain_text(leaf)
    body = await page.locator("body").inner_text()
    assert PLATES[0] not in body and "(UTC)" not in body  # local times (issue 36), as every other page
    await on_tab.shot("public-seals")


async def test_on_names_with_markup_are_shown_as_text(browser: Browser, on_site: FiscSite) -> None:
    """A route's and a school's name typed with markup: the table, the map's tooltip show it, nothing runs."""
    bad = '<img src=x id=injected-route><meta http-equiv="refresh" content="0;url=/entrar">'
    conn = await asyncpg.connect(on_site.dsn)
    try:
        await conn.execute("UPDATE routes SET name = $1 WHERE code = 'DEMO-02'", f"Linha {bad}")
        await conn.execute("UPDATE route_stops SET name = $1 WHERE kind = 'school'", f"Escola {bad}")
    finally:
        await conn.close()
    async with fisc_tab(browser, on_site) as tab:
        page = tab.page
        await tab.open("/publico")
        route = page.locator("[data-testid=route][data-code=DEMO-02]")
        await expect(route.locator("h2")).to_contain_text(bad)
        await expect(route.locator("tbody")).to_contain_text(f"Escola {bad}")
        await page.locator("#p-map .leaflet-overlay-pane path").first.hover(force=True)
        assert await page.locator("#injected-route").count() == 0
        assert page.url.endswith("/publico")


async def test_on_a_phone_the_itineraries_fit_the_screen(browser: Browser, on_site: FiscSite) -> None:
    ctx = await browser.new_context(locale="pt-BR", viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        page = await ctx.new_page()
        await page.goto(on_site.url + "/publico")
        await expect(page.get_by_test_id("route")).to_have_count(len(PLATES))
        width = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert width <= 1, f"the page is {width} px wider than the phone"
    finally:
        await ctx.close()


async def test_on_the_itineraries_call_no_api_that_needs_a_login(browser: Browser, on_site: FiscSite) -> None:
    """Issue 36: /publico asked the roads layer's login-only API, was refused, and never settled for the public."""
    async with fisc_tab(browser, on_site) as tab:
        page = tab.page
        asked: list[str] = []
        refused: list[str] = []
        page.on("request", lambda r: asked.append(r.url))
        page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if r.status >= 400 else None)
        await tab.open("/publico")
        await expect(page.get_by_test_id("route")).to_have_count(len(PLATES))
        await expect(page.locator("#p-map .leaflet-overlay-pane path").first).to_be_visible()
        await page.wait_for_timeout(1000)  # the map's own requests, after the routes are drawn
        ours = [u for u in asked if u.startswith(on_site.url)]
        assert not [u for u in ours if "/api/" in u], ours
        assert not [r for r in refused if r.split(" ", 1)[1].startswith(on_site.url)], refused


async def test_on_a_phone_the_services_table_shows_the_km_on_screen(browser: Browser, on_site: FiscSite) -> None:
    """Issue 36: on a phone the month's table scrolled its key columns (runs made, km) off the screen's edge."""
    ctx = await browser.new_context(locale="pt-BR", viewport={"width": 360, "height": 780}, is_mobile=True)
    try:
        page = await ctx.new_page()
        await page.goto(on_site.url + "/publico/servico")
        rows = page.locator("#s-result tbody tr")
        await expect(rows).to_have_count(len(PLATES) + 1)
        await page.screenshot(path=str(ARTIFACTS / f"issue36-public-service-phone-{PHASE}.png"), full_page=True)
        for header in ("Corridas realizadas", "Km realizado"):
            cell = rows.first.locator("td").nth(3 if header == "Corridas realizadas" else 4)
            await expect(cell).to_be_visible()
            box = await cell.bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360, (header, box)
            assert await cell.get_attribute("data-label") == header  # the card says which figure it is
    finally:
        await ctx.close()


async def test_off_the_public_pages_are_404_pages(browser: Browser, off_site: FiscSite) -> None:
    async with fisc_tab(browser, off_site) as tab:
        page = tab.page
        for path in ("/publico", "/publico/servico", "/publico/selos"):
            resp = await page.goto(off_site.url + path)
            assert resp is not None and resp.status == 404, path
            assert page.url.endswith(path)  # not sent to the login page
            await expect(page.locator("h1")).to_have_text("Página não encontrada")
        api = await page.goto(off_site.url + "/public/itineraries")
        assert api is not None and api.status == 404
