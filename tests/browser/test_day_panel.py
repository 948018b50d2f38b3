"""The day panel (/painel), the servidor's home: one vehicle driving its route now, one due and silent, alerts
waiting for review; the page shows what the measurement, the reporting report and the occurrences say."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import Browser, expect

from telemetria.settings import Settings
from tests.browser.conftest import Tab
from tests.browser.fisc_site import DOCS_IMG, FiscSite, drive, fisc_site, fisc_tab

DRIVING, SILENT = "DAY1A11", "DAY1A12"


@pytest.fixture(scope="module")
async def day_site(base_settings: Settings) -> AsyncIterator[FiscSite]:
    # No detector: the alerts are exactly the rows this test inserts.
    async with fisc_site(base_settings, "telemetria_day", (DRIVING, SILENT), TELEMETRIA_DETECTOR_INTERVAL_S="0") as s:
        now = datetime.now(UTC)
        # Ten minutes of its route at 30 km/h, a fix every 30 s, up to a few seconds ago: in service, on time.
        await s.post(DRIVING, drive(s.vehicles[DRIVING].route, now - timedelta(minutes=10), 20, 30.0, 30.0))
        start = now - timedelta(minutes=30)
        for kind in ("speeding", "speeding", "route_deviation"):
            await s.insert_occurrence(DRIVING, kind, start, lat=-10.44, lon=-62.46)
        yield s


@pytest.fixture
async def day_tab(browser: Browser, day_site: FiscSite) -> AsyncIterator[Tab]:
    async with fisc_tab(browser, day_site) as tab:
        yield tab


async def test_the_servidor_lands_on_the_day_panel_and_reads_the_day(day_tab: Tab, day_site: FiscSite) -> None:
    page = day_tab.page
    await day_tab.login("monitor", then=None)  # the monitor's home: the day panel
    await expect(page).to_have_url(re.compile("/painel$"))
    await expect(page.locator("#d-status")).to_contain_text("atualizado", timeout=60_000)
    api = (await day_site.api("monitor", "GET", "/api/v1/day")).json()

    figure = page.locator("#d-figures")
    await expect(figure.locator('[data-figure="in_service"]')).to_have_text("1")  # the driving one only
    await expect(figure.locator('[data-figure="due"]')).to_have_text("2")  # one run a day each (no timetable)
    await expect(figure.locator('[data-figure="alerts"]')).to_have_text("3")
    await expect(figure.locator('[data-figure="silent"]')).to_have_text("1")
    assert api["vehicles"]["in_service"] == 1 and api["runs"]["due"] == 2 and api["alerts"]["open"] == 3

    # The runs: the driving one is under way on its route, the silent one has not started though it is due.
    runs = page.locator("#d-runs-table tbody tr")
    await expect(runs).to_have_count(2)
    states = {r["plate"]: r["state"] for r in api["runs"]["items"]}
    assert states == {DRIVING: "in_progress", SILENT: "not_started"}, states
    await expect(page.locator('#d-runs-table tr[data-state="in_progress"]')).to_contain_text(DRIVING)
    await expect(page.locator('#d-runs-table tr[data-state="not_started"]')).to_contain_text("Não iniciada")

    # Alerts by kind, each a link to the filtered list; the silent tracker named with its route.
    await expect(page.locator('#d-alerts li[data-kind="speeding"]')).to_contain_text("Excesso de velocidade 2")
    link = page.locator('#d-alerts li[data-kind="route_deviation"] a')
    # on the days the panel counts (yesterday and today), so the list shows exactly the ones counted
    since, today = api["alerts"]["from"], api["alerts"]["to"]
    href = f"/ocorrencias?from={since}&to={today}&kind=route_deviation&status=detected"
    await expect(link).to_have_attribute("href", href)
    await expect(page.locator(f'#d-silent li[data-vehicle="{SILENT}"]')).to_contain_text("nunca transmitiu")
    await expect(page.locator(f'#d-service li[data-vehicle="{DRIVING}"]')).to_be_visible()

    # The 30 s rule as the reporting report sums it: a due run's window is time in service, so the tracker silent
    # while due is in service and reads 0 % (issue 36), first among the worst; not "sem tempo em serviço", and
    # the fleet's figure is not the driving one's 100 %.
    rep = api["reporting"]
    assert rep["vehicles"] == 2 and rep["worst"][0]["plate"] == SILENT and rep["worst"][0]["coverage"] == 0.0, rep
    assert rep["coverage"] is not None and rep["coverage"] < 1.0
    await expect(figure.locator('[data-figure="reporting"]')).not_to_have_text("100,0 %")
    await expect(figure.locator('[data-figure="reporting"]')).to_have_text(re.compile(r"^\d+,\d %$"))
    await expect(page.locator("#d-reporting li").first).to_have_text(f"{SILENT}: 0,0 %")
    await day_tab.shot("issue36-day-panel-silence-after")
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(DOCS_IMG / "fiscalizacao-painel.png"), full_page=True)


async def test_a_contractor_keeps_the_live_map_and_sees_only_its_runs(day_tab: Tab, day_site: FiscSite) -> None:
    page = day_tab.page
    await day_tab.login("contractor", then=None)
    await expect(page).to_have_url(re.compile("/mapa$"))
    await expect(page.locator("#alerts")).to_be_hidden()  # the Secretaria's live alerts are not the contractor's
    await day_tab.open("/painel")
    await expect(page.locator("#d-status")).to_contain_text("atualizado", timeout=60_000)
    # Its vehicles drive routes of a contract of another company (the demo's): no runs of its own, no alerts.
    await expect(page.locator('#d-figures [data-figure="due"]')).to_have_text("0")
    await expect(page.locator('#d-figures [data-figure="alerts"]')).to_have_text("0")
    await expect(page.locator('#d-figures [data-figure="in_service"]')).to_have_text("1")


async def test_the_day_panel_fits_a_phone(day_tab: Tab) -> None:
    page = day_tab.page
    await page.set_viewport_size({"width": 390, "height": 844})
    await day_tab.login("admin", then=None)
    await expect(page.locator("#d-status")).to_contain_text("atualizado", timeout=60_000)
    width = await page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
    assert width <= 390, f"the day panel is {width} px wide on a 390 px screen"
