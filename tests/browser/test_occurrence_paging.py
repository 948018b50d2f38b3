"""Lists that page (issue 36): the occurrence list pages on the server with the total, its page and filters kept in
the address; "Revisar todos" on the day panel opens the list on the days it counts (yesterday and today) and reaches
every occurrence waiting, not the first 50 of today's."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, time, timedelta

import pytest
from playwright.async_api import Browser, expect

from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings
from tests.browser.conftest import Tab
from tests.browser.fisc_site import FiscSite, fisc_site, fisc_tab

PLATE = "PAG1A11"
WAITING = 121  # 120 of today and one of yesterday evening


@pytest.fixture(scope="module")
async def paging_site(base_settings: Settings) -> AsyncIterator[FiscSite]:
    async with fisc_site(base_settings, "telemetria_paging", (PLATE,), TELEMETRIA_DETECTOR_INTERVAL_S="0") as s:
        now = datetime.now(UTC)
        first = await s.insert_occurrence(PLATE, "speeding", now - timedelta(seconds=30))
        # The rest of today's copies of it, each a few seconds earlier (never before the local midnight).
        await s.sql(
            "INSERT INTO occurrences (kind, vehicle_id, contractor_id, day, start_ts, end_ts, lat, lon, place, facts,"
            " duty, article, severity, status, completed_ts, received_at)"
            " SELECT kind, vehicle_id, contractor_id, day, greatest(start_ts - k * interval '5 seconds',"
            " (day::timestamp AT TIME ZONE 'America/Porto_Velho')), end_ts, lat, lon, place, facts, duty, article,"
            " severity, status, completed_ts, received_at FROM occurrences, generate_series(1, $2) AS k WHERE id = $1",
            first, WAITING - 2,
        )  # fmt: skip
        evening = datetime.combine(now.astimezone(LOCAL_TZ).date(), time(), LOCAL_TZ) - timedelta(hours=2)
        await s.insert_occurrence(PLATE, "route_deviation", evening)
        yield s


@pytest.fixture
async def paging_tab(browser: Browser, paging_site: FiscSite) -> AsyncIterator[Tab]:
    async with fisc_tab(browser, paging_site) as tab:
        yield tab


async def test_the_list_pages_with_its_total_and_keeps_page_and_filters_in_the_address(
    paging_tab: Tab, paging_site: FiscSite
) -> None:
    page = paging_tab.page
    await paging_tab.login("monitor", then=None)
    await expect(page.locator("#d-status")).to_contain_text("atualizado", timeout=60_000)
    await expect(page.locator('[data-figure="alerts"]')).to_have_text(str(WAITING))
    await page.get_by_role("link", name="Revisar todos").click()
    days = r"from=\d{4}-\d\d-\d\d&to=\d{4}-\d\d-\d\d"
    await expect(page).to_have_url(re.compile(rf"/ocorrencias\?{days}&status=detected$"))

    line, rows = page.locator("#o-status-line"), page.locator("#o-table tbody tr")
    await expect(line).to_have_text(f"{WAITING} ocorrência(s), 1–50 mostradas.")
    await expect(rows).to_have_count(50)
    seen = set(await rows.evaluate_all("rs => rs.map(r => r.dataset.id)"))
    await page.locator('#o-pager [data-page="next"]').click()
    await expect(line).to_have_text(f"{WAITING} ocorrência(s), 51–100 mostradas.")
    await expect(page).to_have_url(re.compile(rf"\?{days}&status=detected&offset=50$"))
    await expect(page.locator("#o-pager")).to_contain_text("página 2 de 3")
    await paging_tab.shot("issue36-occurrences-paged-after")
    seen |= set(await rows.evaluate_all("rs => rs.map(r => r.dataset.id)"))
    await page.locator('#o-pager [data-page="last"]').click()
    await expect(rows).to_have_count(WAITING - 100)
    await expect(page.locator('#o-pager [data-page="next"]')).to_be_disabled()
    seen |= set(await rows.evaluate_all("rs => rs.map(r => r.dataset.id)"))
    assert len(seen) == WAITING  # every one waiting is reachable, each once

    # A reload (or a shared link) opens the same page with the same filters.
    await page.reload()
    await expect(line).to_have_text(f"{WAITING} ocorrência(s), 101–{WAITING} mostradas.")
    await expect(page.locator("#o-status")).to_have_value("detected")
    # New filters start again at the first page.
    await page.locator("#o-kind").select_option("speeding")
    await page.get_by_role("button", name="Filtrar").click()
    await expect(line).to_have_text(f"{WAITING - 1} ocorrência(s), 1–50 mostradas.")
    await expect(page).to_have_url(re.compile(rf"\?{days}&kind=speeding&status=detected$"))


async def test_an_unknown_occurrence_and_who_acted_are_said_in_portuguese(
    paging_tab: Tab, paging_site: FiscSite
) -> None:
    """Issue 36, English leftovers: /ocorrencias/99999 said "(no occurrence 99999)", and the history named the
    contractor's user "empresa.demo (contractor)": the role's code, not its name."""
    page = paging_tab.page
    await paging_tab.login("monitor", then="/ocorrencias/99999999")
    status = page.locator("#oc-status")
    await expect(status).to_have_text("Ocorrência nº 99999999 não encontrada (ou fora do que seu perfil pode ver).")

    today = datetime.now(LOCAL_TZ).date()
    r = await paging_site.api("monitor", "GET", "/api/v1/occurrences", params={"kind": "route_deviation",
                              "from": str(today - timedelta(days=1)), "to": str(today)})  # fmt: skip
    assert r.status_code == 200, r.text
    [item] = r.json()["items"]
    await paging_site.sql(
        "INSERT INTO occurrence_history (occurrence_id, actor, role, action, text)"
        " VALUES ($1, 'empresa.demo', 'contractor', 'note', 'Veículo em manutenção.')",
        item["id"],
    )
    await paging_tab.open(f"/ocorrencias/{item['id']}")
    note = page.locator('#oc-history li[data-action="note"]')
    await expect(note).to_contain_text("empresa.demo (Empresa contratada)")
    await expect(page.locator("#oc-history")).not_to_contain_text("(contractor)")
    await expect(page.locator("#oc-history")).not_to_contain_text("(monitor)")
