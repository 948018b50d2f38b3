"""What a servidor or a control body meets on first use (issue 16): each page says what it means, in Portuguese."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from playwright.async_api import Request, expect

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
    first = ["Placa", "Data", "Km", "Km planejado (rotas)", "Método", "Tempo em movimento", "Vel. máxima (km/h)",
             "Contratada"]  # fmt: skip
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
    assert len(header) == 21 and "Km do odômetro (conferência)" in header and "Km pelas estradas" in header

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

    # ReDoc's own "by Redocly" logo points at its CDN; the docs pages' Content-Security-Policy stops it in the
    # browser (failure "csp"), so nothing leaves the machine. Whether it is asked before the check is a race.
    def failed(request: Request) -> None:
        if request.failure != "csp":
            offsite.append(request.url)

    page.on("requestfailed", failed)
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
    """The same digits on a page as in the CSV, the page's thousands grouped (issue 36: "2.819,63 km")."""
    from telemetria.formats import RULES, fmt, grouped

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
        assert got["out"][rule] == [grouped(fmt(rule, x)) for x in NUMBERS], rule
    # Spot checks of the rules themselves.
    assert [fmt("kmh", x) for x in (42, 41.25, -0.04)] == ["42,0", "41,3", "0,0"]
    assert [fmt("km", x) for x in (1.005, 0.125, 1234567.891)] == ["1,00", "0,13", "1234567,89"]
    assert (fmt("share", 1), fmt("coord", -10.4389125)) == ("100,0", "-10,438913")
    assert got["out"]["km"][NUMBERS.index(1234567.891)] == "1.234.567,89"  # the page groups, the CSV does not
    assert [grouped(x) for x in ("2819,63", "14441", "2026", "1234", "-1234,5", "999,99", "12:00")] == [
        "2.819,63", "14.441", "2026", "1234", "-1.234,5", "999,99", "12:00"
    ]  # fmt: skip


async def _vehicle_with_tracker(site: Any, plate: str) -> tuple[int, dict[str, str]]:
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        r = await client.post("/api/v1/vehicles", json={"plate": plate, "kind": "van"}, headers=site.token("monitor"))
        assert r.status_code == 201, r.text
        vid = r.json()["id"]
        r = await client.post("/api/v1/trackers", json={"unique_id": f"first-use-{plate}", "vehicle_id": vid},
                              headers=site.token("monitor"))  # fmt: skip
        assert r.status_code == 201, r.text
        return vid, {"Authorization": f"Bearer {r.json()['token']}"}


async def test_the_live_map_names_each_state_with_its_own_word(tab: Tab) -> None:
    site, page = tab.site, tab.page
    # One vehicle late (its newest fix 4 minutes old: the only late one of the site) and one never heard from.
    _, auth = await _vehicle_with_tracker(site, "ATR1A04")
    await _vehicle_with_tracker(site, "NUN1A00")
    fix = {"ts": (datetime.now(UTC) - timedelta(minutes=4)).isoformat(), "lat": -10.44, "lon": -62.46}
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        r = await client.post("/api/v1/fixes", json={"fixes": [fix]}, headers=auth)
        assert r.status_code == 200 and r.json()["accepted"] == 1, r.text
    await page.set_viewport_size({"width": 390, "height": 844})
    await tab.login("monitor")
    summary = page.locator("#live-summary")
    await expect(summary).to_contain_text(re.compile(r"\b1 atrasado,"))
    await expect(summary).to_contain_text(re.compile(r"\d+ veículos: .* \d+ sem sinal, \d+ nunca transmit"))
    never = page.locator('#vehicle-list button[data-vehicle="NUN1A00"]')
    await expect(never).to_contain_text("Nunca transmitiu")
    # "Nunca transmitiu" is a filter of its own: hiding the silent ones keeps it, hiding it removes it.
    await page.get_by_label("Sem sinal").uncheck()
    await expect(never).to_be_visible()
    await page.get_by_label("Nunca transmitiu").uncheck()
    await expect(never).to_have_count(0)
    # The no-tiles notice is one short line, and can be closed.
    note = page.locator("#map .map-note")
    await expect(note).to_have_text(re.compile("^Mapa de fundo indisponível"))
    box = await note.bounding_box()
    assert box is not None and box["height"] <= 30, f"the notice is {box} on a phone"
    await tab.shot("live-map-phone-states")
    await page.get_by_role("button", name="Fechar aviso").click()
    await expect(note).to_have_count(0)


async def test_the_contractor_sees_its_company_the_site_has_an_icon_and_files_have_portuguese_names(tab: Tab) -> None:
    site, page = tab.site, tab.page
    await tab.login("contractor")
    company = await _contractor_name(site)
    await expect(page.locator(".who-role")).to_have_text(company)
    icon = await page.request.get(site.url + "/favicon.ico")
    assert icon.status == 200 and icon.headers["content-type"] == "image/x-icon"
    day = site.history_day
    await tab.open(f"/relatorios/schedule?vehicle_id={site.history_vehicle_id}&from={day}&to={day}")
    await expect(page.locator("#report-status")).to_have_class(re.compile(r"\bdone\b"), timeout=30_000)
    async with page.expect_download() as info:
        await page.get_by_role("button", name="Exportar CSV", exact=True).click()
    assert (await info.value).suggested_filename == f"cumprimento_de_horarios_{day}_{day}.csv"


async def _contractor_name(site: Any) -> str:
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        r = await client.get(f"/api/v1/contractors/{site.people.contractor_id}", headers=site.token("admin"))
    return str(r.json()["name"])
