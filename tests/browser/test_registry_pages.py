"""The registry pages, the users page and the audit page in a real browser, checked against the API.

The site's database is shared by every browser test of the run, so each test registers records of
its own, with unique names, and only looks at those.
"""

from __future__ import annotations

import asyncio
import json
import random
import re
import string
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from playwright.async_api import Route, expect

from telemetria.localtime import LOCAL_TZ
from tests.browser.conftest import Site, Tab
from tests.e2e.conftest import ROOT

ROUTES = ROOT / "tests" / "payloads" / "routes"
PASSWORD = "uma senha bem longa 42"


def _plate() -> str:
    """A Mercosul plate of this test run's own (TST…): never one of the simulator's or another test's."""
    letter = random.choice(string.ascii_uppercase)
    return f"TS{random.choice('TUVXZ')}{random.randint(0, 9)}{letter}{random.randint(10, 99)}"


def _tag() -> str:
    return "".join(random.choices(string.ascii_lowercase + string.digits, k=6))


async def _api(site: Site, method: str, path: str, role: str = "admin", **kw: Any) -> httpx.Response:
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        return await client.request(method, path, headers=site.token(role), **kw)


def _cpf() -> str:
    """A valid CPF (check digits computed), different on every call."""
    digits = [random.randint(0, 9) for _ in range(9)]
    for n in (10, 11):
        total = sum(d * w for d, w in zip(digits, range(n, 1, -1), strict=False))
        digits.append(total * 10 % 11 % 10)
    return "".join(map(str, digits))


async def _vehicle(site: Site) -> dict[str, Any]:
    r = await _api(site, "POST", "/api/v1/vehicles", "monitor", json={"plate": _plate(), "kind": "van"})
    assert r.status_code == 201, r.text
    return dict(r.json())


async def test_a_monitor_registers_a_vehicle_and_edits_it(tab: Tab) -> None:
    site, page = tab.site, tab.page
    plate = _plate()
    await tab.login("monitor")
    await tab.open("/cadastro/veiculos")
    await expect(page.get_by_role("heading", name="Veículos")).to_be_visible()
    await page.get_by_role("button", name="Novo veículo").click()
    form = page.get_by_role("dialog", name="Novo veículo")
    await form.get_by_label("Placa").fill(f"{plate[:3].lower()}-{plate[3:]}")  # the server normalizes it
    await form.get_by_label("Prefixo (número de frota)").fill("E-17")
    await form.get_by_label("Tipo").select_option(label="Micro-ônibus")
    await form.get_by_label("Empresa contratada").select_option(label="Transportes Jaru Ltda")
    await form.get_by_label("Lotação (passageiros sentados)").fill("28")
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(form).to_have_count(0)

    await page.get_by_label("Buscar por placa").fill(plate)
    await page.get_by_role("button", name="Buscar", exact=True).click()
    row = page.locator("table.reg-table tbody tr", has_text=plate)
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("Transportes Jaru Ltda")
    await expect(row).to_contain_text("Micro-ônibus")
    r = await _api(site, "GET", "/api/v1/vehicles", params={"plate": plate})
    [item] = r.json()["items"]
    assert (item["prefix"], item["kind"], item["capacity"]) == ("E-17", "micro-onibus", 28)
    assert item["contractor_id"] == site.people.contractor_id

    # Editing sends only what changed: the audit entry names the one field.
    await row.get_by_role("button", name="Editar").click()
    form = page.get_by_role("dialog", name=f"Editar veículo {plate}")
    await expect(form.get_by_label("Placa")).to_have_value(plate)
    await form.get_by_label("Lotação (passageiros sentados)").fill("30")
    await form.get_by_role("button", name="Salvar").click()
    await expect(form).to_have_count(0)
    await expect(row.locator("td").nth(4)).to_have_text("30")
    r = await _api(site, "GET", "/api/v1/audit", params={"action": "registry.vehicle.update", "limit": 500})
    [entry] = [e for e in r.json()["items"] if e["target"] == f"vehicle:{item['id']}"]
    old_new = {"old": {"capacity": 28}, "new": {"capacity": 30}}  # the audit keeps old and new values (issue 31)
    assert entry["detail"] == {"fields": ["capacity"], **old_new} and entry["username"] == "monitor"
    await tab.shot("registry-vehicles")

    await page.set_viewport_size({"width": 390, "height": 844})  # a phone: the table scrolls, the page does not
    await tab.open("/cadastro/veiculos")
    await expect(page.get_by_role("button", name="Novo veículo")).to_be_visible()
    width = await page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page scrolls sideways on a phone ({width} px)"
    await tab.shot("registry-vehicles-phone")


async def test_refusals_show_in_portuguese_next_to_the_field(tab: Tab) -> None:
    taken = await _vehicle(tab.site)
    page = tab.page
    await tab.login("monitor")
    await tab.open("/cadastro/veiculos")
    await page.get_by_role("button", name="Novo veículo").click()
    form = page.get_by_role("dialog", name="Novo veículo")
    plate = form.get_by_label("Placa")
    await form.get_by_role("button", name="Cadastrar").click()  # nothing filled in
    await expect(plate).to_have_accessible_error_message("Campo obrigatório.")

    await plate.fill(taken["plate"])  # a duplicate: 409 from the database's unique key
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(plate).to_have_attribute("aria-invalid", "true")
    await expect(form.locator('[data-field="plate"] .field-error')).to_have_text(
        "Já existe um cadastro com esse valor."
    )

    await plate.fill("12-ABCD")  # two bad fields at once: 422 names both
    await form.get_by_label("Ano de fabricação").fill("1890")
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(plate).to_have_accessible_error_message("Placa inválida: use o formato ABC1234 ou ABC1D23.")
    year = form.get_by_label("Ano de fabricação")
    await expect(year).to_have_accessible_error_message("O valor mínimo é 1950.")
    await expect(year).to_have_accessible_description(re.compile("O valor mínimo é 1950"))
    await tab.shot("registry-vehicle-errors")
    await plate.fill("abc")  # typing clears the field's message
    await expect(plate).not_to_have_attribute("aria-invalid", "true")
    await form.get_by_role("button", name="Cancelar").click()
    await expect(form).to_have_count(0)

    # A search for something that is not a plate says so under the search box.
    await page.get_by_label("Buscar por placa").fill("nada")
    await page.get_by_role("button", name="Buscar", exact=True).click()
    await expect(page.get_by_label("Buscar por placa")).to_have_accessible_error_message(
        "Placa inválida: use o formato ABC1234 ou ABC1D23."
    )


async def _post_fix(site: Site, token: str) -> httpx.Response:
    body = {"ts": datetime.now(UTC).isoformat(), "lat": -10.44, "lon": -62.46}
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        return await client.post("/api/v1/fixes", json=body, headers={"Authorization": f"Bearer {token}"})


async def _no_trace_of(tab: Tab, token: str) -> None:
    """The token is in no URL, no storage, and (once its dialog is closed) nowhere in the page."""
    assert token not in tab.page.url
    stored = await tab.page.evaluate("JSON.stringify([localStorage, sessionStorage, document.cookie])")
    assert token not in stored


async def test_a_new_tracker_shows_its_token_once_and_the_token_works(tab: Tab) -> None:
    site, page = tab.site, tab.page
    vehicle = await _vehicle(site)
    uid = f"tst-{_tag()}"
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"], origin=site.url)
    await tab.login("monitor")
    await tab.open("/cadastro/rastreadores")
    await page.get_by_role("button", name="Novo rastreador").click()
    form = page.get_by_role("dialog", name="Novo rastreador")
    await form.get_by_label("Identificador do aparelho").fill(uid)
    await form.get_by_label("Veículo").select_option(label=vehicle["plate"])
    await form.get_by_role("button", name="Cadastrar").click()

    shown = page.get_by_role("dialog", name=f"Rastreador cadastrado: {uid}")
    await expect(shown.get_by_role("alert")).to_contain_text("não será mostrado de novo")
    token = (await shown.get_by_test_id("tracker-token").text_content() or "").strip()
    assert len(token) >= 20
    await shown.get_by_role("button", name="Copiar token").click()
    await expect(shown.get_by_role("status")).to_have_text("Copiado.")
    assert await page.evaluate("navigator.clipboard.readText()") == token
    await tab.shot("registry-tracker-token")
    await _no_trace_of(tab, token)
    await shown.get_by_role("button", name="Já copiei, fechar").click()
    await expect(page.get_by_test_id("tracker-token")).to_have_count(0)
    assert token not in await page.content()

    r = await _post_fix(site, token)
    assert r.status_code == 200 and r.json()["accepted"] == 1, r.text
    row = page.locator("table.reg-table tbody tr", has_text=uid)
    await expect(row).to_contain_text(vehicle["plate"])

    # A new token, shown once too, works at once. (The old one is refused once ingest's credential cache,
    # up to 30 s, lets go of it: not waited for here.)
    await row.get_by_role("button", name="Gerar novo token").click()
    await page.get_by_role("alertdialog").get_by_role("button", name="Gerar novo token").click()
    shown = page.get_by_role("dialog", name=f"Novo token gerado: {uid}")
    fresh = (await shown.get_by_test_id("tracker-token").text_content() or "").strip()
    assert fresh and fresh != token
    await _no_trace_of(tab, fresh)
    await shown.get_by_role("button", name="Já copiei, fechar").click()
    assert (await _post_fix(site, fresh)).status_code == 200

    # Moved to another vehicle from now on: the list shows where it is installed and since when.
    other = await _vehicle(site)
    await page.reload()
    await row.get_by_role("button", name="Mover").click()
    form = page.get_by_role("dialog", name=f"Mover o rastreador {uid}")
    await expect(form).to_contain_text(f"Hoje ele está no veículo {vehicle['plate']}.")
    await form.get_by_label("Para o veículo").select_option(label=other["plate"])
    await form.get_by_role("button", name="Mover").click()
    await expect(form).to_have_count(0)
    await expect(row).to_contain_text(other["plate"])
    await expect(row.locator("td").nth(2)).to_have_text(re.compile(r"^\d\d/\d\d/\d{4} \d\d:\d\d$"))
    await tab.shot("registry-trackers")


async def test_a_route_file_is_imported_shown_on_the_map_and_its_stops_edited(tab: Tab) -> None:
    site, page = tab.site, tab.page
    code = f"T{_tag()}"
    await tab.login("monitor")
    await tab.open("/cadastro/rotas")
    await page.get_by_role("button", name="Nova rota (importar arquivo)").click()
    form = page.get_by_role("dialog", name="Nova rota: importar arquivo")
    upload = form.get_by_label("Arquivo da rota (GeoJSON, GPX ou KML)")
    await form.get_by_label("Código da rota").fill(code)
    await form.get_by_label("Km declarado no contrato").fill("4.2")
    since = form.get_by_label("Vale a partir de")  # a new route exists from a day on, as an edit applies (issue 31)
    await expect(since).to_have_value(datetime.now(LOCAL_TZ).date().isoformat())
    await since.fill("2026-03-02")

    # A file with latitude and longitude swapped: the reason, in Portuguese, under the file field.
    await upload.set_input_files(ROUTES / "bad_swapped.geojson")
    await form.get_by_role("button", name="Enviar e cadastrar").click()
    await expect(upload).to_have_accessible_error_message(re.compile("Latitude e longitude parecem trocadas"))

    # The good file, held up on its way so that the progress can be seen.
    async def slow(route: Route) -> None:
        await asyncio.sleep(1.5)
        await route.continue_()

    await page.route(re.compile(r".*/api/v1/routes$"), slow)
    await upload.set_input_files(ROUTES / "collection_line_stops.geojson")
    await form.get_by_role("button", name="Enviar e cadastrar").click()
    progress = form.locator(".upload-progress")
    await expect(progress).to_be_visible()
    await expect(progress).to_contain_text(re.compile("Enviando o arquivo|Conferindo a rota"))
    await tab.shot("registry-route-upload")
    await expect(form).to_have_count(0)
    await page.unroute(re.compile(r".*/api/v1/routes$"))

    heading = page.get_by_role("heading", name=re.compile(f"^Rota {code} "))
    await expect(heading).to_be_visible()
    detail = page.locator(".route-detail")
    await expect(detail.locator(".figures")).to_contain_text("Km declarado")
    route_map = page.get_by_role("region", name=f"Mapa da rota {code}")
    await expect(route_map.locator("path.leaflet-interactive")).to_have_count(1)  # the line
    await expect(route_map.locator(".stop-marker")).to_have_count(5)
    rows = detail.locator("table.stops-table tbody tr")
    await expect(rows).to_have_count(5)
    r = await _api(site, "GET", "/api/v1/routes", params={"code": code})
    [listed] = r.json()["items"]
    before = (await _api(site, "GET", f"/api/v1/routes/{listed['id']}")).json()["stops"]
    h = (await _api(site, "GET", f"/api/v1/routes/{listed['id']}/history")).json()
    assert h["versions"][0]["valid_from"] == "2026-03-02", h

    # Rename stop 2, give it a time, and place it by clicking the map.
    await page.get_by_label("Nome da parada 2").fill("Sítio Boa Esperança (porteira)")
    await page.get_by_label("Horário previsto da parada 2").fill("06:45")
    await page.get_by_role("button", name="Marcar no mapa a parada 2").click()
    await expect(page.get_by_role("button", name="Marcar no mapa a parada 2")).to_have_attribute("aria-pressed", "true")
    lat = page.get_by_label("Latitude da parada 2")
    old_lat = await lat.input_value()
    box = await route_map.bounding_box()
    assert box is not None
    await page.mouse.click(box["x"] + box["width"] * 0.3, box["y"] + box["height"] * 0.7)
    await expect(lat).not_to_have_value(old_lat)
    new_lat = float(await lat.input_value())
    new_lon = float(await page.get_by_label("Longitude da parada 2").input_value())
    await tab.shot("registry-routes")
    await page.get_by_role("button", name="Salvar paradas").click()
    await expect(page.locator("#toast")).to_have_text("Paradas salvas.")

    after = (await _api(site, "GET", f"/api/v1/routes/{listed['id']}")).json()["stops"]
    assert len(after) == 5
    assert after[1]["name"] == "Sítio Boa Esperança (porteira)" and after[1]["scheduled_time"] == "06:45:00"
    assert (after[1]["lat"], after[1]["lon"]) == (new_lat, new_lon) != (before[1]["lat"], before[1]["lon"])
    assert [s["name"] for s in after[2:]] == [s["name"] for s in before[2:]]

    # A stop without a name is refused before anything is sent.
    await page.get_by_label("Nome da parada 3").fill("")
    await page.get_by_role("button", name="Salvar paradas").click()
    await expect(page.get_by_label("Nome da parada 3")).to_have_accessible_error_message("Dê um nome à parada.")
    await page.get_by_role("button", name="Voltar à lista de rotas").click()
    await expect(page.locator("table.reg-table tbody tr", has_text=code)).to_contain_text("4,20 km")


async def test_an_admin_creates_a_user_and_deactivates_it(tab: Tab) -> None:
    site, page = tab.site, tab.page
    username = f"ana.{_tag()}"
    await tab.login("admin")
    await tab.open("/usuarios")
    await expect(page.get_by_role("heading", name="Usuários")).to_be_visible()
    await page.get_by_role("button", name="Novo usuário").click()
    form = page.get_by_role("dialog", name="Novo usuário")
    await form.get_by_label("Nome de usuário").fill(username)
    await form.get_by_label("Nome completo").fill("Ana Teste da Silva")
    await expect(form.get_by_label("Empresa", exact=True)).to_be_hidden()
    await form.get_by_label("Perfil").select_option(label="Empresa contratada")
    await form.get_by_label("Empresa", exact=True).select_option(label="Viação Vale do Jamari")
    await form.get_by_label("Senha", exact=True).fill("curta")
    await form.get_by_label("Repita a senha").fill("curta")
    await form.get_by_role("button", name="Criar usuário").click()
    await expect(form.get_by_label("Senha", exact=True)).to_have_accessible_error_message(
        "A senha precisa ter pelo menos 10 caracteres."
    )
    await form.get_by_label("Senha", exact=True).fill(PASSWORD)
    await form.get_by_label("Repita a senha").fill(PASSWORD + "!")
    await form.get_by_role("button", name="Criar usuário").click()
    await expect(form.get_by_label("Repita a senha")).to_have_accessible_error_message("As duas senhas não são iguais.")
    await form.get_by_label("Repita a senha").fill(PASSWORD)
    await form.get_by_role("button", name="Criar usuário").click()
    await expect(form).to_have_count(0)

    row = page.locator("table.reg-table tbody tr", has_text=username)
    await expect(row).to_contain_text("Empresa contratada")
    await expect(row).to_contain_text("Viação Vale do Jamari")
    await expect(row).to_contain_text("Ativo")
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        r = await client.post("/api/v1/auth/login", json={"username": username, "password": PASSWORD})
        assert r.status_code == 200, r.text
        assert r.json()["user"]["contractor_id"] == site.people.other_contractor_id
    await tab.shot("registry-users")

    await row.get_by_role("button", name="Desativar").click()
    await page.get_by_role("alertdialog").get_by_role("button", name="Desativar").click()
    await expect(row).to_contain_text("Inativo")
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        r = await client.post("/api/v1/auth/login", json={"username": username, "password": PASSWORD})
        assert r.status_code == 401


async def test_roles_without_the_registry_are_refused_and_the_audit_log_filters(tab: Tab) -> None:
    site, page = tab.site, tab.page
    vehicle = await _vehicle(site)  # written by "monitor" through its API token
    await tab.login("auditor")
    for path in ("/cadastro/veiculos", "/usuarios"):
        await tab.open(path)
        await expect(page.get_by_role("heading", name="Acesso negado")).to_be_visible()
        await expect(page.locator("table")).to_have_count(0)

    await tab.open("/auditoria")
    await page.get_by_label("Ação").select_option(label="Cadastro: veículos")
    await page.get_by_label("Usuário").fill("monitor")
    # the page's dates are local (America/Porto_Velho): from 20:00 local on, the UTC date is already tomorrow's
    await page.get_by_label("De", exact=True).fill(datetime.now(LOCAL_TZ).date().isoformat())
    await page.get_by_role("button", name="Filtrar").click()
    rows = page.locator("table.reg-table tbody tr")
    await expect(rows.filter(has_text=f"veículo nº {vehicle['id']}")).to_contain_text("Veículo: cadastro")
    await expect(rows.locator("td:nth-child(2)").filter(has_not_text="monitor")).to_have_count(0)
    await expect(rows.locator("td:nth-child(4)").filter(has_not_text="Veículo:")).to_have_count(0)
    await page.get_by_label("Até (inclusive)").fill("2020-01-01")
    await page.get_by_role("button", name="Filtrar").click()
    await expect(page.get_by_label("Até (inclusive)")).to_have_accessible_error_message(
        "A data final precisa ser igual ou depois da inicial."
    )
    await page.get_by_role("button", name="Limpar").click()
    await expect(page.get_by_label("Usuário")).to_have_value("")
    await expect(page.locator(".reg-status")).to_contain_text("registros")
    await tab.shot("audit")


async def test_every_registry_page_opens_for_an_admin(tab: Tab) -> None:
    page = tab.page
    await tab.login("admin")
    pages = {
        "/cadastro/condutores": "Novo condutor", "/cadastro/empresas": "Nova empresa",
        "/cadastro/atribuicoes": "Atribuir rota a veículo", "/cadastro/zonas": "Nova zona",
    }  # fmt: skip
    for path, button in pages.items():
        await tab.open(path)
        await expect(page.get_by_role("button", name=button)).to_be_visible()
        await expect(page.locator(".reg-status").first).not_to_have_text("Carregando…")
        await expect(page.locator(".reg-status.error-text")).to_have_count(0)
        await tab.shot("registry-" + path.rsplit("/", 1)[1])
    # The two lists of the assignments page, each with its own form.
    await tab.open("/cadastro/atribuicoes")
    await expect(page.get_by_role("heading", name="Rotas por veículo")).to_be_visible()
    await expect(page.get_by_role("heading", name="Condutores por veículo")).to_be_visible()
    await page.get_by_role("button", name="Atribuir rota a veículo").click()
    form = page.get_by_role("dialog", name="Atribuir rota a veículo")
    days = form.get_by_role("group", name="Dias da semana")
    await expect(days.get_by_role("checkbox", checked=True)).to_have_count(5)  # Monday to Friday unless changed
    await tab.shot("registry-assignment-form")
    await form.get_by_role("button", name="Cancelar").click()


# In Porto Velho, far from every track of the browser tests: a zone near them would change their reports.
SQUARE = {"type": "Polygon", "coordinates": [[[-63.91, -8.77], [-63.90, -8.77], [-63.90, -8.76], [-63.91, -8.76],
                                              [-63.91, -8.77]]]}  # fmt: skip


async def test_a_speed_zone_is_registered_from_geojson_text(tab: Tab) -> None:
    page = tab.page
    zone = f"Zona escolar {_tag()}"
    await tab.login("monitor")
    await tab.open("/cadastro/zonas")
    await page.get_by_role("button", name="Nova zona").click()
    form = page.get_by_role("dialog", name="Nova zona de velocidade")
    await form.get_by_label("Nome").fill(zone)
    await form.get_by_label("Limite de velocidade (km/h)").fill("30")
    geometry = form.get_by_label("GeoJSON do polígono", exact=True)
    await geometry.fill('{"type": "Polygon", "coordinates": [[')
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(geometry).to_have_accessible_error_message("O texto não é um GeoJSON válido (JSON malformado).")
    await geometry.fill('{"type": "LineString", "coordinates": [[-62.47, -10.44], [-62.46, -10.44]]}')
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(geometry).to_have_accessible_error_message(
        "A zona precisa ser um polígono GeoJSON (Polygon ou MultiPolygon)."
    )
    await geometry.fill(json.dumps(SQUARE))
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(form).to_have_count(0)
    await expect(page.locator("table.reg-table tbody tr", has_text=zone)).to_contain_text("30,0 km/h")
    zone_map = page.get_by_role("region", name="Mapa das zonas desta página")
    await expect(zone_map.locator("path.leaflet-interactive").first).to_be_visible()


async def test_a_route_is_assigned_to_a_vehicle_on_some_weekdays(tab: Tab) -> None:
    site, page = tab.site, tab.page
    vehicle = await _vehicle(site)
    code = f"A{_tag()}"
    line = {"type": "LineString", "coordinates": [[-62.47, -10.44], [-62.46, -10.44], [-62.45, -10.45]]}
    body = {"code": code, "name": "Linha de teste", "geometry": line}
    r = await _api(site, "POST", "/api/v1/routes", "monitor", json=body)
    assert r.status_code == 201, r.text
    posted: list[dict[str, Any]] = []
    page.on(
        "request",
        lambda q: (
            posted.append(json.loads(q.post_data or "{}"))
            if q.method == "POST" and q.url.endswith("/route-assignments")
            else None
        ),
    )
    await tab.login("monitor")
    await tab.open("/cadastro/atribuicoes")
    await page.get_by_role("button", name="Atribuir rota a veículo").click()
    form = page.get_by_role("dialog", name="Atribuir rota a veículo")
    await form.get_by_label("Rota").select_option(label=f"{code} – Linha de teste")
    await form.get_by_label("Vale a partir de").fill("2026-03-02")  # a dated assignment: a version from that day
    await form.get_by_label("Veículo").select_option(label=vehicle["plate"])
    await form.get_by_role("checkbox", name="sexta-feira").uncheck()
    await form.get_by_label("Vale até").fill("2020-01-01")  # before the start: refused, said under "Vale até"
    await form.get_by_role("button", name="Atribuir").click()
    await expect(form.get_by_label("Vale até")).to_have_accessible_error_message("O fim precisa ser depois do início.")
    await form.get_by_label("Vale até").fill("")
    await form.get_by_role("button", name="Atribuir").click()
    await expect(form).to_have_count(0)
    row = page.locator("table.reg-table tbody tr", has_text=code)
    await expect(row).to_contain_text(vehicle["plate"])
    await expect(row).to_contain_text("seg, ter, qua, qui")
    r = await _api(site, "GET", "/api/v1/route-assignments", params={"vehicle_id": vehicle["id"]})
    [item] = r.json()["items"]
    assert item["weekdays"] == [1, 2, 3, 4] and item["valid_to"] is None and item["valid_from"] == "2026-03-02"
    sent = [b for b in posted if "route_id" in b][-1]  # the last one sent (the first was refused)
    assert (sent["valid_from"], sent["effective_from"]) == ("2026-03-02", "2026-03-02"), sent
    await row.get_by_role("button", name="Excluir").click()
    await page.get_by_role("alertdialog").get_by_role("button", name="Excluir").click()
    await expect(row).to_have_count(0)


async def test_a_driver_is_registered_with_a_checked_cpf(tab: Tab) -> None:
    site, page = tab.site, tab.page
    cpf = _cpf()
    name = f"Condutor Teste {_tag()}"
    await tab.login("monitor")
    await tab.open("/cadastro/condutores")
    await page.get_by_role("button", name="Novo condutor").click()
    form = page.get_by_role("dialog", name="Novo condutor")
    await form.get_by_label("Nome completo").fill(name)
    wrong = cpf[:10] + str((int(cpf[10]) + 1) % 10)
    await form.get_by_label("CPF").fill(wrong)
    await form.get_by_label("Categoria da CNH").select_option("D")
    await form.get_by_label("Empresa contratada").select_option(label="Transportes Jaru Ltda")
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(form.get_by_label("CPF")).to_have_accessible_error_message(
        "Número inválido: os dígitos verificadores não conferem."
    )
    await form.get_by_label("CPF").fill(f"{cpf[:3]}.{cpf[3:6]}.{cpf[6:9]}-{cpf[9:]}")
    await form.get_by_role("button", name="Cadastrar").click()
    await expect(form).to_have_count(0)
    row = page.locator("table.reg-table tbody tr", has_text=name)
    await expect(row).to_contain_text(f"{cpf[:3]}.{cpf[3:6]}.{cpf[6:9]}-{cpf[9:]}")  # monitors see the full CPF
    r = await _api(site, "GET", "/api/v1/drivers", "auditor", params={"limit": 500})
    [mine] = [d for d in r.json()["items"] if d["name"] == name]
    assert "cpf" not in mine and mine["cnh_category"] == "D"
    await tab.shot("registry-drivers")


async def test_a_route_edit_applies_from_a_date_and_the_route_shows_its_history(tab: Tab) -> None:
    """Editing a route asks "Vale a partir de" and sends it as effective_from (issue 31): the days before keep the
    old version; the route's page then lists its versions, what changed, from when and by whom."""
    site, page = tab.site, tab.page
    code = f"H{_tag()}"
    r = await _api(site, "POST", "/api/v1/routes", "monitor", data={"code": code, "declared_km": "4.2"},
                   files={"file": ("r.geojson", (ROUTES / "collection_line_stops.geojson").read_bytes())})  # fmt: skip
    assert r.status_code == 201, r.text
    route_id = r.json()["id"]
    sent: list[dict[str, Any]] = []
    page.on("request", lambda q: sent.append(json.loads(q.post_data or "{}")) if q.method == "PATCH" else None)
    await tab.login("monitor")
    await tab.open("/cadastro/rotas")
    await page.locator("table.reg-table tbody tr", has_text=code).get_by_role("button", name="Abrir").click()
    await expect(page.get_by_role("heading", name=re.compile(f"^Rota {code} "))).to_be_visible()
    await page.get_by_role("button", name="Editar dados da rota").click()
    form = page.get_by_role("dialog", name=f"Editar rota {code}")
    since = form.get_by_label("Vale a partir de")
    await expect(since).to_have_value(datetime.now(LOCAL_TZ).date().isoformat())  # today, unless said otherwise
    await form.get_by_label("Km declarado no contrato").fill("5.3")
    since_day = datetime.now(LOCAL_TZ).date() + timedelta(days=3)  # the route exists from today: a later day
    await since.fill(since_day.isoformat())
    await form.get_by_role("button", name=re.compile("Salvar")).click()
    await expect(form).to_have_count(0)
    await expect(page.locator("#toast")).to_contain_text(f"a partir de {since_day:%d/%m/%Y}")
    assert sent and sent[-1] == {"declared_km": 5.3, "effective_from": since_day.isoformat()}, sent

    h = (await _api(site, "GET", f"/api/v1/routes/{route_id}/history")).json()
    assert [v["valid_from"] for v in h["versions"]][-1] == since_day.isoformat(), h
    history = page.get_by_role("region", name=f"Histórico da rota {code}")
    rows = history.locator("table.history tbody tr")
    await expect(rows).to_have_count(len(h["versions"]), timeout=30_000)
    newest = rows.first
    await expect(newest.locator("td").nth(0)).to_have_text(f"{since_day:%d/%m/%Y}")
    await expect(newest.locator("td").nth(2)).to_contain_text("km declarado")
    await expect(newest.locator("td").nth(3)).to_have_text("monitor")
    await expect(newest.locator("td").nth(5)).to_have_text("em vigor")
    await expect(rows.last.locator("td").nth(2)).to_have_text("cadastro")
    await tab.shot("registry-route-history")
