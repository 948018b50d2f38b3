"""The contract pages in a real browser (issue 17): contracts with their price history, the school calendar, and
the boletim de medição with its runs grid, each checked against the API that feeds it.

The site's database is shared by every browser test of the run, so each test registers contracts of its own
(unique numbers) and uses school years no other test touches.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from playwright.async_api import expect

from tests.browser.conftest import Tab
from tests.browser.test_registry_pages import _api, _tag

JAMARI = "Viação Vale do Jamari"  # contractor 2 (tests/db/conftest.py make_people); contractor 1 is Transportes Jaru


async def _contract(tab: Tab, contractor_id: int, number: str, **extra: Any) -> dict[str, Any]:
    body = {"contractor_id": contractor_id, "number": number, "lot": "Lote 1", "valid_from": "2026-01-01",
            "valid_to": "2026-12-31", "price_per_km": "4.35", **extra}  # fmt: skip
    r = await _api(tab.site, "POST", "/api/v1/contracts", "monitor", json=body)
    assert r.status_code == 201, r.text
    return dict(r.json())


async def test_a_monitor_creates_a_contract_and_changes_its_price_from_a_date(tab: Tab) -> None:
    site, page = tab.site, tab.page
    number = f"{_tag()}/2026"
    await tab.login("monitor")
    await tab.open("/contratos")
    await expect(page.get_by_role("heading", name="Contratos", exact=True)).to_be_visible()
    await page.get_by_role("button", name="Novo contrato").click()
    form = page.get_by_role("dialog", name="Novo contrato")
    await form.get_by_label("Empresa contratada").select_option(label=JAMARI)
    await form.get_by_label("Número do contrato").fill(number)
    await form.get_by_label("Lote", exact=True).fill("Lote 3")
    await form.get_by_label("Vigência: início").fill("2026-02-01")
    await form.get_by_label("Vigência: fim (inclusive)").fill("2026-12-31")
    price = form.get_by_label("Preço por km (R$)")
    await price.fill("4,357")  # three decimals: refused before it is sent, next to the field
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(price).to_have_accessible_error_message(re.compile("até 2 casas decimais"))
    await price.fill("4,35")
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(form).to_have_count(0, timeout=30_000)

    row = page.locator("table.reg-table tbody tr", has_text=number)
    await expect(row).to_have_count(1, timeout=30_000)
    await expect(row).to_contain_text(JAMARI)
    await expect(row).to_contain_text("R$ 4,35")
    await expect(row).to_contain_text("01/02/2026 a 31/12/2026")
    await expect(row).to_contain_text("≥ 95 % realizada")
    r = await _api(site, "GET", "/api/v1/contracts", params={"contractor_id": site.people.other_contractor_id,
                                                             "limit": 500})  # fmt: skip
    [made] = [k for k in r.json()["items"] if k["number"] == number]
    assert (made["price_per_km"], made["lot"], made["payment_rule"]["partial_pay"]) == (4.35, "Lote 3", "proportional")

    # A new price from 1 July: outside the validity first (refused next to the date), then inside it.
    await row.get_by_role("button", name="Editar").click()
    form = page.get_by_role("dialog", name=f"Editar contrato {number}")
    await expect(form.get_by_label("Preço por km (R$)")).to_have_value("4,35")
    await form.get_by_label("Preço por km (R$)").fill("4,80")
    since = form.get_by_label("Novo preço ou regra vale a partir de")
    await since.fill("2027-01-01")
    await form.get_by_role("button", name="Salvar").click()
    await expect(since).to_have_accessible_error_message("A data precisa estar dentro da vigência do contrato.")
    await since.fill("2026-07-01")
    await form.get_by_role("button", name="Salvar").click()
    await expect(form).to_have_count(0, timeout=30_000)

    r = await _api(site, "GET", f"/api/v1/contracts/{made['id']}/history")
    versions = r.json()["versions"]
    assert [(v["valid_from"], v["valid_to"], v["price_per_km"]) for v in versions] == [
        ("2026-02-01", "2026-06-30", 4.35), ("2026-07-01", None, 4.8)]  # fmt: skip
    await row.get_by_role("button", name="Abrir").click()
    await expect(page.get_by_role("heading", name=f"Contrato {number}")).to_be_visible()
    history = page.locator("table", has=page.locator("caption", has_text="Histórico de preços"))
    rows = history.locator("tbody tr")
    await expect(rows).to_have_count(2)
    await expect(rows.nth(0)).to_contain_text("01/02/2026")
    await expect(rows.nth(0)).to_contain_text("30/06/2026")
    await expect(rows.nth(0)).to_contain_text("R$ 4,35")
    await expect(rows.nth(1)).to_contain_text("01/07/2026")
    await expect(rows.nth(1)).to_contain_text("R$ 4,80")
    await expect(rows.nth(1)).to_contain_text("preço por km")
    await expect(rows.nth(1)).to_contain_text("monitor")
    await expect(page.locator(".contract-detail")).to_contain_text("Nenhuma rota deste contrato")
    await tab.shot("contracts-detail")


async def test_the_contract_page_lists_its_routes(tab: Tab) -> None:
    site, page = tab.site, tab.page
    k = await _contract(tab, site.people.contractor_id, f"R{_tag()}/2026")
    code = f"C{_tag()}"
    line = {"type": "LineString", "coordinates": [[-62.46, -10.44], [-62.45, -10.43]]}
    r = await _api(site, "POST", "/api/v1/routes", "monitor", json={"code": code, "name": "Linha do contrato",
                   "school_year": 2026, "geometry": line, "contract_id": k["id"], "declared_km": 12.5})  # fmt: skip
    assert r.status_code == 201, r.text
    await tab.login("auditor")  # read-only: sees the contract and its routes, no button that writes
    await tab.open(f"/contratos?id={k['id']}")
    detail = page.locator(".contract-detail")
    await expect(detail.get_by_role("heading", name=f"Contrato {k['number']}")).to_be_visible()
    routes = detail.locator("table", has=page.locator("caption", has_text="Rotas do contrato"))
    await expect(routes.locator("tbody tr")).to_have_count(1)
    await expect(routes.locator("tbody tr")).to_contain_text(code)
    await expect(routes.locator("tbody tr")).to_contain_text("12,50 km")
    await expect(detail.get_by_role("button", name="Editar contrato")).to_have_count(0)
    await page.get_by_role("button", name="← Voltar à lista de contratos").click()
    await expect(page.get_by_role("button", name="Novo contrato")).to_have_count(0)
    await expect(
        page.locator("table.reg-table tbody tr", has_text=k["number"]).get_by_role("button", name="Editar")
    ).to_have_count(0)


async def test_a_contractor_sees_only_its_own_contracts(tab: Tab) -> None:
    site, page = tab.site, tab.page
    mine = await _contract(tab, site.people.contractor_id, f"M{_tag()}/2026")
    theirs = await _contract(tab, site.people.other_contractor_id, f"T{_tag()}/2026")
    await tab.login("contractor")
    await tab.open("/contratos")
    await expect(page.locator("table.reg-table tbody tr", has_text=mine["number"])).to_have_count(1, timeout=30_000)
    await expect(page.locator("table.reg-table tbody tr", has_text=theirs["number"])).to_have_count(0)
    await expect(page.locator("table.reg-table")).not_to_contain_text(JAMARI)
    await expect(page.get_by_role("button", name="Novo contrato")).to_have_count(0)
    await tab.open(f"/contratos?id={theirs['id']}")
    await expect(page.locator(".contract-detail [role=alert]")).to_have_text("Registro não encontrado.")
    await tab.open("/boletim")
    options = page.locator("#b-contract option")
    await expect(options.filter(has_text=mine["number"])).to_have_count(1)
    await expect(options.filter(has_text=theirs["number"])).to_have_count(0)


async def test_a_contract_number_with_markup_is_shown_as_text(tab: Tab) -> None:
    site, page = tab.site, tab.page
    tag = _tag()
    number = f"<b>{tag}</b>/2026"
    k = await _contract(tab, site.people.contractor_id, number, lot=f'<img src=x id="inj-{tag}">')
    await tab.login("monitor")
    await tab.open("/contratos")
    row = page.locator("table.reg-table tbody tr", has_text=number)
    await expect(row).to_have_count(1, timeout=30_000)
    await expect(row).to_contain_text(f'<img src=x id="inj-{tag}">')
    await expect(row.locator("b")).to_have_count(0)
    await tab.open(f"/contratos?id={k['id']}")
    await expect(page.get_by_role("heading", name=f"Contrato {number}")).to_be_visible()
    await tab.open("/boletim")
    await expect(page.locator("#b-contract option", has_text=number)).to_have_count(1)
    assert await page.locator(f"#inj-{tag}, b").count() == 0


# --- the school calendar ------------------------------------------------------------------------


async def test_marking_a_day_without_school_in_the_calendar_is_saved(tab: Tab) -> None:
    site, page = tab.site, tab.page
    year = 2031  # no other test uses it
    await tab.login("monitor")
    await tab.open(f"/calendario-escolar?ano={year}")
    await expect(page.locator("#cal-status")).to_have_text(f"Ano letivo de {year} não cadastrado.", timeout=30_000)
    await page.get_by_label("Fim do ano letivo").fill(f"{year}-01-20")
    await page.get_by_label("Início do ano letivo").fill(f"{year}-02-03")
    await page.get_by_role("button", name="Cadastrar ano letivo").click()
    await expect(page.get_by_label("Fim do ano letivo")).to_have_accessible_error_message(
        "O fim precisa ser depois do início.")  # fmt: skip
    await page.get_by_label("Fim do ano letivo").fill(f"{year}-12-12")
    await page.get_by_role("button", name="Cadastrar ano letivo").click()

    day = f"{year}-03-11"  # a Tuesday
    assert date.fromisoformat(day).isoweekday() == 2
    cell = page.locator(f'td.cal-day[data-date="{day}"]')
    await expect(cell).to_have_attribute("data-kind", "letivo", timeout=30_000)
    await expect(page.locator(f'td.cal-day[data-date="{year}-04-21"]')).to_have_attribute("data-kind", "feriado")
    await expect(page.locator(f'.cal-notes li[data-date="{year}-04-21"]')).to_contain_text("Tiradentes")
    await expect(page.locator(f'td.cal-day[data-date="{year}-03-15"]')).to_have_attribute("data-kind", "fim_de_semana")
    before = int(await page.locator("#cal-count").inner_text())

    await cell.get_by_role("button").click()
    dialog = page.get_by_role("dialog")
    await dialog.get_by_role("button", name="Marcar sem aula").click()  # no reason: said next to the field
    await expect(dialog.get_by_label("Motivo (obrigatório)")).to_have_accessible_error_message(
        "Diga por que não há aula nesse dia.")  # fmt: skip
    await dialog.get_by_label("Motivo (obrigatório)").fill("chuva fechou as estradas da linha 4")
    await dialog.get_by_role("button", name="Marcar sem aula").click()
    await expect(cell).to_have_attribute("data-kind", "sem_aula")
    await expect(cell).to_contain_text("S")
    await expect(page.locator("#cal-pending")).to_have_text("Há alterações não salvas.")
    await expect(page.locator("#cal-count")).to_have_text(str(before - 1))
    await page.get_by_role("button", name="Salvar calendário").click()
    await expect(page.locator("#cal-pending")).to_have_text("Tudo salvo.", timeout=30_000)

    r = await _api(site, "GET", f"/api/v1/school-years/{year}")
    saved = r.json()
    assert saved["no_school_days"] == [{"date": day, "reason": "chuva fechou as estradas da linha 4"}]
    assert day not in saved["school_days"] and saved["school_days_count"] == before - 1
    await tab.open(f"/calendario-escolar?ano={year}")  # read back from the server
    await expect(cell).to_have_attribute("data-kind", "sem_aula", timeout=30_000)
    note = page.locator(f'.cal-notes li[data-date="{day}"]')
    await expect(note).to_contain_text("chuva fechou as estradas da linha 4")
    await expect(page.locator("#cal-count")).to_have_text(str(saved["school_days_count"]))
    await tab.shot("calendar")

    await page.context.clear_cookies()
    await tab.login("auditor")  # reads the calendar, cannot click a day
    await tab.open(f"/calendario-escolar?ano={year}")
    await expect(cell).to_have_attribute("data-kind", "sem_aula", timeout=30_000)
    await expect(cell.get_by_role("button")).to_have_count(0)
    await expect(page.get_by_role("button", name="Salvar calendário")).to_have_count(0)
