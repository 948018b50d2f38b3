"""Every page a role may open, on a 390 × 844 phone, with its results loaded: nothing makes the page wider
than the screen (a wide table scrolls inside its own box, never the page)."""

from __future__ import annotations

import re

import pytest
from playwright.async_api import Page, ViewportSize, expect

from telemetria.auth.roles import PERMISSIONS, Role
from telemetria.web import nav
from tests.browser.conftest import ARTIFACTS, Tab

PHONE: ViewportSize = {"width": 390, "height": 844}
ROLES = ("admin", "monitor", "auditor", "contractor")


def _pages(role: str) -> list[str]:
    return [p.path for p in nav.PAGES if p.perm in PERMISSIONS[Role(role)]]


def _address(tab: Tab, path: str) -> str:
    """The page with results asked for: the recorded vehicle's day wherever a page takes a vehicle and period."""
    site = tab.site
    day = site.history_day
    if path == "/historico":
        return f"{path}?vehicle_id={site.history_vehicle_id}&from={day}T00:00&to={day}T23:59"
    if path.startswith("/relatorios/"):
        by = "&by=day" if path.endswith("/km") else ""
        return f"{path}?vehicle_id={site.history_vehicle_id}&from={day}&to={day}{by}"
    return path


async def _loaded(page: Page, path: str) -> None:
    """Wait until the page has drawn what it loads (positions, report, list)."""
    if path == "/mapa":
        await expect(page.locator("#live-summary")).to_contain_text("atualizado", timeout=30_000)
    elif path == "/historico":
        await expect(page.locator("#h-status")).to_have_text(re.compile("posiç"), timeout=30_000)
    elif path.startswith("/relatorios/"):
        status = page.locator("#report-status")
        await expect(status).to_have_class(re.compile(r"\b(done|empty|error)\b"), timeout=60_000)
    else:
        status = page.locator(".reg-status").first
        await expect(status).to_be_attached()
        await expect(status).not_to_have_text("Carregando…", timeout=30_000)
    await page.wait_for_timeout(300)  # a last layout pass (maps, lazily sized tables)


@pytest.mark.parametrize("role", ROLES)
async def test_no_page_is_wider_than_a_phone(tab: Tab, role: str) -> None:
    page = tab.page
    await page.set_viewport_size(PHONE)
    await tab.login(role)
    wide: list[str] = []
    for path in _pages(role):
        await tab.open(_address(tab, path))
        await _loaded(page, path)
        width = await page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
        slug = path.strip("/").replace("/", "-")
        await page.screenshot(path=str(ARTIFACTS / f"phone-{role}-{slug}.png"))
        if width > PHONE["width"]:
            wide.append(f"{path}: {width} px")
    assert not wide, f"pages wider than the {PHONE['width']} px screen for {role}: {wide}"
