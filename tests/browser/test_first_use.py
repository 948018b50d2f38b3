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


async def _headers(tab: Tab) -> list[str]:
    return [h.strip() for h in await tab.page.locator("#report-table thead th").all_inner_texts()]


async def test_wide_reports_show_their_key_columns_first_and_the_rest_on_demand(tab: Tab) -> None:
    site, page = tab.site, tab.page
    day = site.history_day
    await tab.login("auditor")
    await tab.open(f"/relatorios/km?vehicle_id={site.history_vehicle_id}&from={day}&to={day}&by=day")
    await expect(page.locator("#report-table tbody tr")).to_have_count(1)
    first = ["Placa", "Data", "Km", "Método", "Tempo em movimento", "Vel. máxima (km/h)", "Contratada"]
    assert await _headers(tab) == first
    box = page.locator("#report-table").locator("xpath=..")
    fits = await box.evaluate("b => b.scrollWidth <= b.clientWidth")
    assert fits, "the km table's first columns should fit a desktop screen"
    # The rest on demand; the choice is kept for the next visit.
    await page.get_by_text("Mais colunas").click()
    await page.get_by_label("Km do odômetro").check()
    await expect(page.locator("#report-table thead th")).to_have_count(len(first) + 1)
    await tab.page.reload()
    await expect(page.locator("#report-table tbody tr")).to_have_count(1)
    assert "Km do odômetro" in await _headers(tab)
    await page.get_by_text("Mais colunas").click()
    await page.get_by_label("Km do odômetro").uncheck()
    # The CSV keeps every column whatever the table shows.
    async with httpx.AsyncClient(base_url=site.url, timeout=60) as client:
        params = {"vehicle_id": str(site.history_vehicle_id), "from": day, "to": day, "by": "day", "format": "csv"}
        r = await client.get("/api/v1/reports/km", params=params, headers=site.token("auditor"))
    header = r.content.decode("utf-8-sig").splitlines()[0].split(";")
    assert len(header) == 17 and "Km do odômetro (conferência)" in header

    # On a phone the summary starts with the plate, the km and the drivers.
    await page.set_viewport_size({"width": 390, "height": 844})
    await tab.open(f"/relatorios/summary?vehicle_id={site.history_vehicle_id}&from={day}&to={day}")
    await expect(page.locator("#report-table tbody tr")).to_have_count(1)
    assert (await _headers(tab))[:3] == ["Placa", "Km", "Condutores"]
    km = page.locator("#report-table tbody td").nth(1)
    right = await km.evaluate("td => td.getBoundingClientRect().right")
    assert right <= 390, f"the km cell ends at {right} px, off a 390 px screen"
    await tab.shot("report-summary-phone")


async def test_the_api_docs_render_without_the_internet(tab: Tab) -> None:
    # The tab aborts every request that is not for our server, as on a closed network.
    page = tab.page
    offsite: list[str] = []
    page.on("requestfailed", lambda r: offsite.append(r.url))
    await tab.open("/docs")
    await expect(page.locator(".swagger-ui .info .title")).to_contain_text("Telemetria")
    await expect(page.get_by_text("Relatório: km rodados por veículo", exact=False).first).to_be_visible()
    assert await page.locator(".opblock").count() >= 50
    await tab.shot("api-docs")
    await tab.open("/redoc")
    await expect(page.get_by_text("Relatório: trajetória", exact=False).first).to_be_attached(timeout=30_000)
    assert not offsite, f"the docs asked for files off this site: {offsite}"


# Values that catch the usual differences: exact halves (Python rounds them to even, JS away from zero),
# binary values just under a half (1.005, 2.675), negative zero, whole numbers, large numbers.
NUMBERS = [0, -0.0, 42, 41.25, 41.35, 2.5, 0.125, 1.005, 2.675, -0.04, -10.4389125, -62.46640049, 1234567.891, 99.95,
           0.99995, 0.5, 1, 7.45, -7.45, 1e-7]  # fmt: skip


async def test_pages_and_csv_write_the_same_numbers_alike(tab: Tab) -> None:
    from telemetria.formats import RULES, fmt

    await tab.open("/entrar")
    got = await tab.page.evaluate(
        """async ([rules, values]) => {
            const f = await import("/static/js/formats.js");
            const out = {};
            for (const r of rules) out[r] = values.map((x) => f.format(r, x));
            return { out, rules: f.RULES };
        }""",
        [[*RULES, "share"], NUMBERS],
    )
    assert got["rules"] == RULES
    for rule in [*RULES, "share"]:
        assert got["out"][rule] == [fmt(rule, x) for x in NUMBERS], rule
    # Spot checks of the rules themselves.
    assert [fmt("kmh", x) for x in (42, 41.25, -0.04)] == ["42,0", "41,3", "0,0"]
    assert [fmt("km", x) for x in (1.005, 0.125, 1234567.891)] == ["1,00", "0,13", "1234567,89"]
    assert (fmt("share", 1), fmt("coord", -10.4389125)) == ("100,0", "-10,438913")
