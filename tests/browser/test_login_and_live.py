"""Logging in, what each role sees, and the live map, in a real browser."""

from __future__ import annotations

import re

from playwright.async_api import expect

from tests.browser.conftest import LIVE_PLATES, Tab

MENU = {
    "admin": {"Mapa ao vivo", "Km rodados", "Veículos", "Usuários", "Registro de auditoria"},
    "monitor": {"Mapa ao vivo", "Km rodados", "Veículos", "Rotas"},
    "auditor": {"Mapa ao vivo", "Km rodados", "Registro de auditoria"},
    "contractor": {"Mapa ao vivo", "Km rodados"},
}
NOT_IN_MENU = {
    "admin": set(),
    "monitor": {"Usuários", "Registro de auditoria"},
    "auditor": {"Veículos", "Usuários"},
    "contractor": {"Veículos", "Usuários", "Registro de auditoria"},
}


async def test_the_login_page_is_the_front_door(tab: Tab) -> None:
    await tab.open("/")
    await expect(tab.page).to_have_url(re.compile("/entrar$"))
    await expect(tab.page.get_by_role("heading", name="Telemetria")).to_be_visible()
    await tab.shot("login")


async def test_a_wrong_password_shows_an_error_and_no_session(tab: Tab) -> None:
    await tab.open("/entrar")
    await tab.page.get_by_label("Usuário").fill("admin")
    await tab.page.get_by_label("Senha").fill("wrong password")
    await tab.page.get_by_role("button", name="Entrar").click()
    await expect(tab.page.get_by_role("alert")).to_have_text("Usuário ou senha incorretos.")
    await expect(tab.page.get_by_label("Senha")).to_have_attribute("aria-invalid", "true")
    await tab.open("/mapa")
    await expect(tab.page).to_have_url(re.compile("/entrar\\?next=/mapa$"))


async def test_each_role_logs_in_and_sees_only_its_pages(tab: Tab) -> None:
    for role in ("admin", "monitor", "auditor", "contractor"):
        await tab.login(role)
        menu = tab.page.get_by_role("navigation", name="Menu principal")
        # Links inside closed menu groups are in the page, not in the accessibility tree: match the markup.
        for title in MENU[role]:
            await expect(menu.locator(f'a:text-is("{title}")')).to_have_count(1)
        for title in NOT_IN_MENU[role]:
            await expect(menu.locator(f'a:text-is("{title}")')).to_have_count(0)
        await expect(tab.page.get_by_test_id("who")).to_have_text(role)
        if role == "contractor":  # the server refuses the page too, not only the menu
            await tab.open("/cadastro/veiculos")
            await expect(tab.page.get_by_role("heading", name="Acesso negado")).to_be_visible()
            await tab.open("/mapa")
        await tab.page.get_by_role("button", name="Sair").click()
        await expect(tab.page).to_have_url(re.compile("/entrar$"))


async def test_after_login_the_page_asked_for_opens(tab: Tab) -> None:
    await tab.open("/historico")
    await expect(tab.page).to_have_url(re.compile("/entrar\\?next=/historico$"))
    await tab.page.get_by_label("Usuário").fill("auditor")
    await tab.page.get_by_label("Senha").fill("correct horse battery")
    await tab.page.get_by_role("button", name="Entrar").click()
    await expect(tab.page).to_have_url(re.compile("/historico$"))


async def _marker_position(tab: Tab, plate: str) -> str | None:
    marker = tab.page.locator(f'.leaflet-marker-icon[data-vehicle="{plate}"]')
    return await marker.get_attribute("style")


async def test_the_live_map_shows_the_simulated_vehicles_moving(tab: Tab) -> None:
    await tab.login("monitor")
    page = tab.page
    for plate in LIVE_PLATES:
        await expect(page.locator(f'.leaflet-marker-icon[data-vehicle="{plate}"]')).to_be_visible()
        await expect(page.locator(f'#vehicle-list button[data-vehicle="{plate}"]')).to_contain_text("Online")
    # The markers move between polls, without reloading the page (the simulator posts every second).
    first = {p: await _marker_position(tab, p) for p in LIVE_PLATES}
    await page.evaluate("window.__same_page = true")
    await expect(page.locator("body")).not_to_have_attribute("data-live-updated", "")
    moved = False
    for _ in range(30):
        await page.wait_for_timeout(500)
        now = {p: await _marker_position(tab, p) for p in LIVE_PLATES}
        if any(now[p] != first[p] for p in LIVE_PLATES):
            moved = True
            break
    assert moved, "no marker moved in 15 s"
    assert await page.evaluate("window.__same_page") is True  # no reload happened
    # The side list finds a vehicle and the marker's popup names it.
    await page.get_by_label("Buscar veículo, condutor ou rota").fill(LIVE_PLATES[1])
    await expect(page.locator("#vehicle-list li")).to_have_count(1)
    await page.locator(f'#vehicle-list button[data-vehicle="{LIVE_PLATES[1]}"]').click()
    await expect(page.locator(".leaflet-popup-content")).to_contain_text(LIVE_PLATES[1])
    await expect(page.locator(".leaflet-popup-content")).to_contain_text("km/h")
    await tab.shot("live-map")


async def test_a_contractor_sees_only_its_vehicles_on_the_live_map(tab: Tab) -> None:
    await tab.login("contractor")
    page = tab.page
    mine, theirs = LIVE_PLATES[:2], LIVE_PLATES[2]
    for plate in mine:
        await expect(page.locator(f'.leaflet-marker-icon[data-vehicle="{plate}"]')).to_be_visible()
    await expect(page.locator("#vehicle-list li").first).to_be_visible()
    plates = await page.locator("#vehicle-list button").evaluate_all("bs => bs.map(b => b.dataset.vehicle)")
    assert theirs not in plates and set(mine) <= set(plates)
    assert await page.locator(f'.leaflet-marker-icon[data-vehicle="{theirs}"]').count() == 0
    await tab.shot("live-map-contractor")


async def test_the_map_works_with_tiles_unreachable(tab: Tab) -> None:
    await tab.login("auditor")
    page = tab.page
    await expect(page.locator(".map-note")).to_contain_text("Mapa de fundo indisponível")
    await expect(page.locator(f'.leaflet-marker-icon[data-vehicle="{LIVE_PLATES[0]}"]')).to_be_visible()
    # The base layer menu offers "no base map", which needs no tiles at all.
    await page.locator(".leaflet-control-layers").hover()
    await page.get_by_label("Sem mapa de fundo").check()
    await expect(page.locator(".leaflet-tile")).to_have_count(0)
    await expect(page.locator(f'.leaflet-marker-icon[data-vehicle="{LIVE_PLATES[0]}"]')).to_be_visible()


async def test_on_a_phone_the_menu_folds_and_the_map_and_list_fit(tab: Tab) -> None:
    page = tab.page
    await page.set_viewport_size({"width": 390, "height": 844})
    await tab.login("monitor")
    menu = page.get_by_role("navigation", name="Menu principal")
    await expect(menu).to_be_hidden()
    toggle = page.get_by_role("button", name="Menu")
    await toggle.click()
    await expect(menu).to_be_visible()
    await expect(toggle).to_have_attribute("aria-expanded", "true")
    await toggle.click()
    await expect(page.locator(f'.leaflet-marker-icon[data-vehicle="{LIVE_PLATES[0]}"]')).to_be_visible()
    await expect(page.locator(f'#vehicle-list button[data-vehicle="{LIVE_PLATES[0]}"]')).to_be_visible()
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width} px wide on a 390 px screen"
    await tab.shot("live-map-phone")


async def test_the_pages_can_be_used_from_the_keyboard(tab: Tab) -> None:
    await tab.open("/entrar")
    page = tab.page
    # The user field has the focus on arrival (autofocus applies once the page has loaded: wait for it,
    # or the first keystrokes can go nowhere).
    await expect(page.get_by_label("Usuário")).to_be_focused()
    await page.keyboard.type("auditor")
    await page.keyboard.press("Tab")
    await page.keyboard.type("correct horse battery")
    await page.keyboard.press("Enter")
    await expect(page).to_have_url(re.compile("/mapa$"))
    # The first Tab reaches the skip link, which jumps over the menu to the content.
    await page.keyboard.press("Tab")
    await expect(page.get_by_role("link", name="Pular para o conteúdo")).to_be_focused()
    await page.keyboard.press("Enter")
    await expect(page.locator("#conteudo")).to_be_focused()
