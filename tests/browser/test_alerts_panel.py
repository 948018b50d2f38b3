"""The live map's alerts panel: occurrences appear as they are stored (newest on top, marked new, with a chime
made by the Web Audio API while the sound is on), the sound's toggle persists, the kind filter narrows the list,
and a click centres the map on the occurrence with a link to its page."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import pytest
from playwright.async_api import Browser, expect

from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings
from tests.browser.conftest import ARTIFACTS, Tab
from tests.browser.fisc_site import DOCS_IMG, FiscSite, fisc_site, fisc_tab

PLATE = "ALE1A11"
PHASE = os.environ.get("PHASE", "after")  # the screenshots' suffix: before (on the old code) or after
POLL_S = 25  # the panel polls every ~10 s: one poll and a margin


@pytest.fixture(scope="module")
async def alerts_site(base_settings: Settings) -> AsyncIterator[FiscSite]:
    async with fisc_site(base_settings, "telemetria_alerts", (PLATE,), TELEMETRIA_DETECTOR_INTERVAL_S="0") as s:
        yield s


@pytest.fixture
async def alerts_tab(browser: Browser, alerts_site: FiscSite) -> AsyncIterator[Tab]:
    async with fisc_tab(browser, alerts_site) as tab:
        yield tab


async def test_new_alerts_appear_on_top_with_a_chime_and_the_sound_can_be_turned_off(
    alerts_tab: Tab, alerts_site: FiscSite
) -> None:
    page = alerts_tab.page
    now = datetime.now(UTC)
    old = await alerts_site.insert_occurrence(
        PLATE,
        "route_deviation",
        now - timedelta(minutes=40),
        lat=-10.43,
        lon=-62.47,
        place="Rua Rio de Janeiro",
        facts={"max_off_m": 420},
    )
    await alerts_tab.login("monitor", then="/mapa")
    panel = page.locator("#alerts")
    items = page.locator("#alerts-list li")
    await expect(items).to_have_count(1, timeout=POLL_S * 1000)
    await expect(items.first).not_to_have_class("new")  # there when the page opened: not news
    await expect(page.locator("#alerts-sound")).to_be_checked()  # sound on by default

    await page.get_by_label("Som para novos alertas").focus()  # a gesture lets the page start audio
    new = await alerts_site.insert_occurrence(
        PLATE, "speeding", now - timedelta(minutes=5), lat=-10.44, lon=-62.46, facts={"max_kmh": 92.4, "limit_kmh": 60}
    )
    await expect(items).to_have_count(2, timeout=POLL_S * 1000)
    top = items.first
    await expect(top).to_have_class("new")
    await expect(top.locator("button")).to_have_attribute("data-id", str(new))
    await expect(top).to_contain_text("Excesso de velocidade")
    await expect(top).to_contain_text(PLATE)
    await expect(top).to_contain_text("novo")
    await expect(panel).to_have_attribute("data-chimes", "1")
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(DOCS_IMG / "fiscalizacao-alertas.png"))

    # Off, and it stays off after a reload: the next new alert shows without a chime.
    await page.get_by_label("Som para novos alertas").uncheck()
    await page.reload()
    await expect(page.locator("#alerts-sound")).not_to_be_checked()
    await expect(items).to_have_count(2, timeout=POLL_S * 1000)
    await alerts_site.insert_occurrence(PLATE, "unauthorized_stop", now - timedelta(minutes=2), lat=-10.45, lon=-62.45)
    await expect(items).to_have_count(3, timeout=POLL_S * 1000)
    await expect(items.first).to_have_class("new")
    assert await panel.get_attribute("data-chimes") is None

    # The kind filter: only the speeding one; a click centres the map on it and its popup links to its page.
    await page.locator("#alerts-kind").select_option("speeding")
    await expect(items).to_have_count(1)
    await items.first.locator("button").click()
    popup = page.locator(".leaflet-popup-content")
    await expect(popup).to_contain_text("Excesso de velocidade · 92,4 km/h (limite 60,0 km/h)")
    await expect(popup.get_by_role("link", name="Abrir a ocorrência")).to_have_attribute("href", f"/ocorrencias/{new}")
    await expect(items.first.locator("button")).to_have_attribute("aria-pressed", "true")
    await page.locator("#alerts-kind").select_option("")
    await expect(items).to_have_count(3)
    assert old != new


async def test_the_contractor_has_no_live_alerts_panel(alerts_tab: Tab) -> None:
    await alerts_tab.login("contractor", then="/mapa")
    await expect(alerts_tab.page.locator("#alerts")).to_be_hidden()


async def test_names_with_markup_stay_text_in_the_panel_the_list_and_the_page(
    alerts_tab: Tab, alerts_site: FiscSite
) -> None:
    page = alerts_tab.page
    place = 'Rua <img src=x id=injected-place> "Sete"'
    stop = "Ponto <b id=injected-stop>negrito</b>"
    oid = await alerts_site.insert_occurrence(
        PLATE, "unauthorized_stop", datetime.now(UTC) - timedelta(minutes=1), lat=-10.46, lon=-62.44, place=place,
        facts={"duration_s": 400, "nearest_stop": stop, "nearest_m": 350},
    )  # fmt: skip
    await alerts_tab.login("monitor", then="/mapa")
    await expect(page.locator(f'#alerts-list button[data-id="{oid}"]')).to_contain_text(place, timeout=POLL_S * 1000)
    await alerts_tab.open("/ocorrencias?status=detected")
    await expect(page.locator(f'#o-table tr[data-id="{oid}"]')).to_contain_text(place)
    await alerts_tab.open(f"/ocorrencias/{oid}")
    await expect(page.locator("#oc-facts")).to_contain_text(place)
    await expect(page.locator("#oc-facts")).to_contain_text(stop)
    for injected in ("#injected-place", "#injected-stop"):
        await expect(page.locator(injected)).to_have_count(0)


async def test_each_alert_says_its_day_and_the_list_reads_in_the_order_things_happened(
    alerts_tab: Tab, alerts_site: FiscSite
) -> None:
    """Issue 36: the panel spans 24 h (two days) but showed only a clock time, in the order the detector stored
    them: a late batch's alert of yesterday evening sat on top of this morning's. Now newest first by when it
    happened, each with its day."""
    page = alerts_tab.page
    now = datetime.now(UTC)
    recent = await alerts_site.insert_occurrence(
        PLATE, "speeding", now - timedelta(minutes=3), lat=-10.44, lon=-62.46, facts={"max_kmh": 71.0, "limit_kmh": 60}
    )
    yesterday = now - timedelta(hours=20)
    late = await alerts_site.insert_occurrence(  # stored after the other one: it arrived late
        PLATE, "speeding", yesterday, lat=-10.45, lon=-62.45, facts={"max_kmh": 75.0, "limit_kmh": 60}
    )
    await alerts_tab.login("monitor", then="/mapa")
    buttons = page.locator("#alerts-list li button")
    await expect(page.locator(f'#alerts-list button[data-id="{late}"]')).to_be_visible(timeout=POLL_S * 1000)
    await page.locator("#alerts").screenshot(path=str(ARTIFACTS / f"issue36-alerts-{PHASE}.png"))
    order = [int(x) for x in await buttons.evaluate_all("bs => bs.map((b) => b.dataset.id)")]
    assert order.index(recent) < order.index(late), order
    local = yesterday.astimezone(LOCAL_TZ)
    await expect(page.locator(f'#alerts-list button[data-id="{late}"]')).to_contain_text(
        f"{local:%d/%m} às {local:%H:%M:%S}"
    )
