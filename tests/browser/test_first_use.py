"""What a servidor or a control body meets on first use (issue 16): each page says what it means, in Portuguese."""

from __future__ import annotations

import httpx
from playwright.async_api import expect

from tests.browser.conftest import Tab


def _dmy(iso: str) -> str:
    return f"{iso[8:10]}/{iso[5:7]}/{iso[:4]}"


async def test_the_audit_log_shows_exports_in_portuguese_with_local_dates_and_plates(tab: Tab) -> None:
    site, page = tab.site, tab.page
    day = site.history_day
    async with httpx.AsyncClient(base_url=site.url, timeout=60) as client:
        # One local day: in UTC it ends at 04:00 of the next day, which must not show as the period's end.
        params = {"vehicle_id": str(site.history_vehicle_id), "from": day, "to": day, "format": "csv"}
        r = await client.get("/api/v1/reports/summary", params=params, headers=site.token("auditor"))
        assert r.status_code == 200, r.text
    await tab.login("auditor")
    await tab.open("/auditoria")
    await page.get_by_label("Ação").select_option(label="Exportações de relatórios")
    await page.get_by_label("Usuário").fill("auditor")
    await page.get_by_role("button", name="Filtrar").click()
    rows = page.locator("table.reg-table tbody tr")
    row = rows.filter(has_text="Resumo por veículo").first
    await expect(row).to_contain_text("Exportação: Resumo por veículo")
    await expect(row).to_contain_text(f"arquivo CSV; período {_dmy(day)}; 1 veículo: {site.history_plate}")
    await expect(row).not_to_contain_text("export.")
    await expect(row).not_to_contain_text("vehicle")
    # Only exports are listed under that filter.
    await expect(rows.locator("td:nth-child(4)").filter(has_not_text="Exportação:")).to_have_count(0)
    await tab.shot("audit-exports")
