"""The vehicle history page: the recorded day drawn with its route, markers, figures, tables and playback."""

from __future__ import annotations

import re

import httpx
from playwright.async_api import expect

from tests.browser.conftest import ARTIFACTS, Tab


async def test_the_history_draws_the_track_route_and_speeding_markers(tab: Tab) -> None:
    site = tab.site
    day = site.history_day
    async with httpx.AsyncClient(base_url=site.url) as client:
        r = await client.get(
            "/api/v1/reports/speeding",
            params={"vehicle_id": site.history_vehicle_id, "from": day, "to": day},
            headers=site.token("auditor"),
        )
    speeding = r.json()["episodes"]
    assert speeding, "the recorded day must have speeding for this test to mean anything"

    await tab.login("auditor")
    await tab.open(f"/historico?vehicle_id={site.history_vehicle_id}&from={day}T00:00&to={day}T23:59")
    page = tab.page
    await expect(page.locator("#h-status")).to_have_text(re.compile(r"^\d+ posições no período\.$"), timeout=30_000)
    await expect(page.locator("#h-map path.track-line")).to_have_count(1)
    await expect(page.locator("#h-map .mk-speeding")).to_have_count(len(speeding))
    await expect(page.locator("#h-map .mk-stop-ok").first).to_be_attached()
    await expect(page.locator("#h-map .mk-deviation")).to_have_count(1)  # the run's one detour
    figures = page.get_by_label("Resumo do período")
    await expect(figures).to_contain_text(site.history_plate)
    await expect(figures).to_contain_text(re.compile(r"Distância\s*\d+,\d\d km"))
    await expect(page.locator("#h-trips tbody tr").first).to_contain_text("/11/2026")
    await expect(page.locator("#h-events tbody")).to_contain_text("Excesso de velocidade")
    await expect(page.locator("#h-positions tbody tr").first).to_contain_text("atual")
    await tab.shot("history")
    await page.locator("#h-map").screenshot(path=str(ARTIFACTS / "history-map.png"))

    # Playback moves the cursor along the fixes' own clock.
    slider = page.get_by_label("Momento da trajetória")
    await page.get_by_label("Velocidade da reprodução").select_option("300")
    await page.get_by_role("button", name="▶ Reproduzir").click()
    await expect(slider).not_to_have_value("0")
    await page.get_by_role("button", name="❚❚ Pausar").click()
    await expect(page.locator("#h-now")).to_contain_text("km percorridos")


async def test_a_period_that_ends_before_it_starts_is_refused_next_to_the_field(tab: Tab) -> None:
    await tab.login("monitor")
    await tab.open("/historico")
    page = tab.page
    await page.get_by_label("Veículo").select_option(label=tab.site.history_plate)
    await page.get_by_label("De", exact=True).fill("2026-11-23T10:00")
    await page.get_by_label("Até", exact=True).fill("2026-11-23T09:00")
    await page.get_by_role("button", name="Mostrar trajetória").click()
    await expect(page.locator("#h-to-error")).to_have_text("O fim do período deve ser depois do início.")
    await expect(page.get_by_label("Até", exact=True)).to_have_attribute("aria-invalid", "true")
