"""Names stored with HTML in them stay text on every page: tooltips, popups, tables, lists and forms.

An attack that went through: a stop named `Escola<meta http-equiv="refresh" content="0;url=…">` sent
whoever hovered it on a map to a phishing page, and `<img>` tags became elements (the CSP stops
scripts, not this). Here every free-text field the registry and the users API take (plate is
validated, so: vehicle prefix and description, contractor name and contract, driver name and card,
route code and name, stop names, zone name, user full name) holds such markup; one vehicle drives a
recorded day with them, and each page that shows them is opened, its map markers hovered and its
popups and row details opened. No element of the markup may appear in the page at any moment (a
MutationObserver installed before the page's own scripts sees tooltips opened and closed again),
no request may leave for the markup's addresses, and each text must be on the page as text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.async_api import Request, expect

from tests.browser.conftest import Site, Tab, _body
from tests.db.test_reports_accuracy import DAY, _run
from tests.unit.test_documents import cnpj_with_dv, cpf_with_dv

PHISH = "http://127.0.0.1:9/phish"
PLATE = "MKP1A23"
USERNAME = "marcacao"
PASSWORD = "uma senha bem longa 42"


def markup(name: str) -> str:
    """A text that would become an image and a redirect if it were written as HTML.

    It starts with "0" so lists sorted by name show it on their first page.
    """
    return f'0 {name}<img src=x id=injected-{name}><meta http-equiv="refresh" content="0;url={PHISH}">'


# Installed before any script of the page runs: every element the markup could create is remembered,
# even one removed again at once (a tooltip that closes).
OBSERVER = """
window.__markup = [];
new MutationObserver((records) => {
  for (const r of records) for (const node of r.addedNodes) {
    if (node.nodeType !== 1) continue;
    for (const e of [node, ...node.querySelectorAll("*")]) {
      if (/^injected-/.test(e.id) || (e.tagName === "META" && e.hasAttribute("http-equiv"))
          || (e.tagName === "IMG" && e.getAttribute("src") === "x")) window.__markup.push(e.outerHTML);
    }
  }
}).observe(document, { childList: true, subtree: true });
"""
FOUND = """() => ({
  seen: window.__markup || null,
  now: [...document.querySelectorAll('[id^="injected-"], meta[http-equiv], img[src="x"]')].map((e) => e.outerHTML),
})"""


HOVER = """(selector) => {
  const shapes = [...document.querySelectorAll(selector)];
  for (const s of shapes) s.dispatchEvent(new MouseEvent("mouseover", { bubbles: true }));
  return shapes.length;
}"""

CHOOSE_ROWS = """() => {
  for (const tr of [...document.querySelectorAll("#report-table tbody tr.locatable")].slice(0, 8)) tr.click();
}"""


@dataclass
class World:
    vehicle_id: int
    route_id: int
    stops: int
    texts: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str) -> str:
        return self.texts[key]


@pytest.fixture(scope="module")
async def world(site: Site) -> World:
    """Every free-text field holding markup, through the API, and a recorded day driven by its vehicle."""
    t = {k: markup(k) for k in ("contractor", "contract", "prefix", "description", "driver", "card",
                                "route-code", "route-name", "zone", "full-name")}  # fmt: skip
    run = _run(3)  # the history vehicle's day: speeding, a detour, stops at the route's points
    line = run.truth.route.line
    stops = [("garage", float(line.lat[0]), float(line.lon[0]))]
    stops += [(s.kind, s.lat, s.lon) for s in run.truth.route.stops]
    t |= {f"stop-{i}": markup(f"stop-{i}") for i in range(1, len(stops) + 1)}
    # In Porto Velho, far from every track of the browser tests (it must not change their speeding) and
    # beside the zones the registry tests draw (so their map keeps its zoom).
    square = [[-63.93, -8.79], [-63.92, -8.79], [-63.92, -8.78], [-63.93, -8.78], [-63.93, -8.79]]
    async with httpx.AsyncClient(base_url=site.url, timeout=30, headers=site.token("admin")) as client:

        async def post(path: str, body: dict[str, Any]) -> Any:
            r = await client.post(f"/api/v1/{path}", json=body)
            assert r.status_code in (200, 201), f"{path}: {r.status_code} {r.text}"
            return r.json()

        # fmt: off
        company = await post("contractors", {"name": t["contractor"], "cnpj": cnpj_with_dv("557703210001"),
                                             "contract_number": t["contract"]})
        vehicle = await post("vehicles", {"plate": PLATE, "prefix": t["prefix"], "description": t["description"],
                                          "kind": "van", "contractor_id": company["id"]})
        tracker = await post("trackers", {"unique_id": "markup-test-tracker", "vehicle_id": vehicle["id"]})
        driver = await post("drivers", {"name": t["driver"], "cpf": cpf_with_dv("318604229"), "cnh_category": "D",
                                        "card_id": t["card"], "contractor_id": company["id"]})
        route = await post("routes", {
            "code": t["route-code"], "name": t["route-name"], "school_year": 2026,
            "geometry": {"type": "LineString", "coordinates": list(map(list, zip(line.lon, line.lat, strict=True)))},
            "stops": [{"name": t[f"stop-{i}"], "kind": k, "lat": la, "lon": lo}
                      for i, (k, la, lo) in enumerate(stops, 1)],
        })
        await post("route-assignments", {"route_id": route["id"], "vehicle_id": vehicle["id"],
                                         "valid_from": "2026-11-01", "weekdays": [1, 2, 3, 4, 5, 6, 7]})
        await post("driver-assignments", {"driver_id": driver["id"], "vehicle_id": vehicle["id"],
                                          "valid_from": "2026-11-01T00:00"})
        await post("speed-zones", {"name": t["zone"], "limit_kmh": 40,
                                   "geometry": {"type": "Polygon", "coordinates": [square]}})
        await post("users", {"username": USERNAME, "password": PASSWORD, "role": "contractor",
                             "contractor_id": company["id"], "full_name": t["full-name"]})
        r = await client.post("/api/v1/auth/login", json={"username": USERNAME, "password": PASSWORD})
        assert r.status_code == 200, r.text  # an entry of its own in the audit log
        for upload in run.uploads:
            r = await client.post("/api/v1/fixes", content=_body(upload.fixes),
                                  headers={"Authorization": f"Bearer {tracker['token']}"})
            assert r.status_code == 200, r.text
        # fmt: on
    return World(vehicle["id"], route["id"], len(stops), t)


@dataclass
class Watch:
    """What left the page: every request and every navigation of its main frame."""

    tab: Tab
    requests: list[str] = field(default_factory=list)
    navigations: list[str] = field(default_factory=list)

    async def clean(self, where: str) -> None:
        """No element of the markup, now or ever since the page loaded; nothing fetched or opened from it."""
        page = self.tab.page
        await page.wait_for_timeout(300)  # a refresh of 0 s would have started by now
        bad = [u for u in self.requests if "phish" in u or urlsplit(u).path.endswith("/x")]
        assert not bad, f"{where}: the markup made the browser ask for {bad}"
        away = [u for u in self.navigations if not u.startswith(self.tab.site.url + "/")]
        assert not away, f"{where}: the markup navigated the page to {away}"
        found = await page.evaluate(FOUND)
        assert found["seen"] is not None, f"{where}: the page is not the one opened (navigated away?)"
        assert not found["seen"] and not found["now"], f"{where}: markup became elements: {found}"


@pytest.fixture
async def watch(tab: Tab) -> Watch:
    w = Watch(tab)
    await tab.page.add_init_script(OBSERVER)

    def on_request(r: Request) -> None:
        w.requests.append(r.url)

    tab.page.on("request", on_request)
    tab.page.on("framenavigated", lambda f: w.navigations.append(f.url) if f == tab.page.main_frame else None)
    return w


async def _hover_all(tab: Tab, scope: str) -> int:
    """The pointer over every interactive thing of a map (markers, lines): each opens its tooltip."""
    return int(await tab.page.evaluate(HOVER, f"{scope} .leaflet-interactive"))


async def _shows(tab: Tab, texts: list[str], where: str = "body") -> None:
    """Each text is on the page as text (in the element's textContent)."""
    box = tab.page.locator(where)
    for text in texts:
        await expect(box).to_contain_text(text, use_inner_text=False)


# --- the live map ---------------------------------------------------------------------------------


async def test_the_live_map_popup_writes_names_as_text(tab: Tab, watch: Watch, world: World) -> None:
    await tab.login("admin")
    page = tab.page
    await page.get_by_label("Buscar veículo, condutor ou rota").fill(PLATE)
    button = page.locator(f'#vehicle-list button[data-vehicle="{PLATE}"]')
    await button.click()
    popup = page.locator(".leaflet-popup-content")
    await expect(popup).to_contain_text(PLATE)
    await page.locator(".leaflet-popup-close-button").click()
    await page.locator(f'.leaflet-marker-icon[data-vehicle="{PLATE}"]').click()  # the marker's own popup
    await _hover_all(tab, "#map")
    await page.wait_for_timeout(1500)  # the next poll redraws the marker and its open popup
    await watch.clean("/mapa")
    assert page.url == tab.site.url + "/mapa"
    facts = [world["prefix"], world["contractor"], world["driver"], world["route-code"]]
    await _shows(tab, facts, ".leaflet-popup-content")
    await tab.shot("markup-live-popup")
    await _shows(tab, [world["prefix"], world["driver"], world["route-code"]], "#vehicle-list")


# --- the history of a vehicle ---------------------------------------------------------------------


async def test_the_history_map_tooltips_write_names_as_text(tab: Tab, watch: Watch, world: World) -> None:
    await tab.login("admin")
    path = f"/historico?vehicle_id={world.vehicle_id}&from={DAY}T00:00&to={DAY}T23:59"
    await tab.open(path)
    page = tab.page
    await expect(page.locator("#h-status")).to_have_text(re.compile(r"^\d+ posições no período\.$"), timeout=30_000)
    assert await _hover_all(tab, "#h-map") > world.stops
    await watch.clean("/historico")
    assert page.url == tab.site.url + path
    await _shows(tab, [world["prefix"], world["driver"]], "#h-figures")
    tooltips = [f"Rota {world['route-code']}: {world['route-name']}",
                *(f"{world['route-code']} · {world[f'stop-{i}']}" for i in range(1, world.stops + 1))]  # fmt: skip
    await _shows(tab, tooltips, "#h-map")
    await _shows(tab, [world["stop-2"]], "#h-trips")  # trips start and end at named places
    await tab.shot("markup-history")


async def test_the_verify_page_writes_names_as_text(tab: Tab, watch: Watch, world: World) -> None:
    await tab.login("auditor")
    await tab.open(f"/verificar?vehicle_id={world.vehicle_id}&from={DAY}&to={DAY}")
    await expect(tab.page.locator("#s-status")).not_to_have_text(re.compile(r"^(Carregando…)?$"), timeout=30_000)
    await watch.clean("/verificar")
    await _shows(tab, [world["prefix"]], "#s-form")  # the list of vehicles names each by its prefix


# --- the report pages -----------------------------------------------------------------------------

# What each report shows of the markup, beyond the vehicle's prefix in the form's list of vehicles.
REPORTS: dict[str, list[str]] = {
    "km": ["prefix", "contractor"],
    "summary": ["prefix", "contractor", "driver"],
    "trips": ["driver", "route-code", "stop-2"],
    "speeding": ["route-code"],
    "stops": ["stop-2"],
    "route-deviation": ["route-code"],
    "track": ["stop-2"],
    "schedule": ["route-code", "route-name", "stop-2"],
    "reporting": [],
}
# Ticks every box of the report's "Mais colunas", one change event each, as a person would.
SHOW_EVERY_COLUMN = """() => {
  for (const box of document.querySelectorAll("details.columns input[type=checkbox]")) {
    if (!box.checked) {
      box.checked = true;
      box.dispatchEvent(new Event("change", { bubbles: true }));
    }
  }
}"""
# Reports whose map tooltips name a stop or a route: the tooltips opened must show the markup as text.
TOOLTIP_NAMES = {"stops", "route-deviation", "track"}


@pytest.mark.parametrize("kind", REPORTS)
async def test_every_report_page_writes_names_as_text(tab: Tab, watch: Watch, world: World, kind: str) -> None:
    await tab.login("admin")
    path = f"/relatorios/{kind}?vehicle_id={world.vehicle_id}&from={DAY}&to={DAY}"
    await tab.open(path)
    page = tab.page
    await expect(page.locator("#report-status")).to_contain_text("Relatório gerado", timeout=30_000)
    await page.evaluate(SHOW_EVERY_COLUMN)  # the columns behind "Mais colunas" draw names too
    if kind == "schedule":
        await page.locator("#report-table button", has_text="pontos").first.click()
    await page.evaluate(CHOOSE_ROWS)  # a row chosen shows its place on the map and opens its tooltip
    if await page.locator("#report-map").is_visible():
        await _hover_all(tab, "#report-map")
    await watch.clean(f"/relatorios/{kind}")
    assert page.url == tab.site.url + path
    await _shows(tab, [world["prefix"], f"{world['route-code']} · {world['route-name']}"], "#report-form")
    await _shows(tab, [world[k] for k in REPORTS[kind]])
    if kind in TOOLTIP_NAMES:
        await _shows(tab, ["<img src=x id=injected-"], "#report-map .leaflet-tooltip-pane")


# --- registry, users and audit ----------------------------------------------------------------------


async def _edit(tab: Tab, row_text: str, title: str, values: list[str]) -> None:
    """Open the row's edit form: the stored texts are the inputs' values, and the dialog closes clean."""
    page = tab.page
    row = page.locator("table.reg-table tbody tr", has_text=row_text).first
    await row.get_by_role("button", name="Editar").click()
    dialog = page.get_by_role("dialog", name=title)
    await expect(dialog).to_be_visible()
    shown = await dialog.locator("input, textarea").evaluate_all("els => els.map((e) => e.value)")
    assert set(values) <= set(shown), shown
    await dialog.get_by_role("button", name="Cancelar").click()


async def test_the_vehicles_page_writes_names_as_text(tab: Tab, watch: Watch, world: World) -> None:
    await tab.login("admin")
    await tab.open("/cadastro/veiculos")
    page = tab.page
    await page.get_by_label("Buscar por placa").fill(PLATE)
    await page.get_by_role("button", name="Buscar", exact=True).click()
    await _shows(tab, [world["prefix"], world["contractor"], world["driver"]], "table.reg-table")
    await _edit(tab, PLATE, f"Editar veículo {PLATE}", [world["prefix"], world["description"]])
    await watch.clean("/cadastro/veiculos")


async def test_the_drivers_and_contractors_pages_write_names_as_text(tab: Tab, watch: Watch, world: World) -> None:
    await tab.login("admin")
    await tab.open("/cadastro/condutores")
    await _shows(tab, [world["driver"], world["card"], world["contractor"]], "table.reg-table")
    await _edit(tab, world["card"], f"Editar condutor {world['driver']}", [world["driver"], world["card"]])
    await watch.clean("/cadastro/condutores")
    await tab.open("/cadastro/empresas")
    await _shows(tab, [world["contractor"], world["contract"]], "table.reg-table")
    company = [world["contractor"], world["contract"]]
    await _edit(tab, world["contract"], f"Editar empresa {world['contractor']}", company)
    await watch.clean("/cadastro/empresas")


async def test_the_routes_page_and_stop_editor_write_names_as_text(tab: Tab, watch: Watch, world: World) -> None:
    await tab.login("admin")
    await tab.open("/cadastro/rotas")
    page = tab.page
    await _shows(tab, [world["route-code"], world["route-name"]], "table.reg-table")
    await page.get_by_role("button", name=f"Abrir: rota {world['route-code']}").click()
    await _shows(tab, [f"Rota {world['route-code']} – {world['route-name']}"], "h2.route-title")
    assert await _hover_all(tab, ".route-map") >= world.stops
    await _shows(tab, [f"{i}. {world[f'stop-{i}']}" for i in range(1, world.stops + 1)], ".route-map")
    names = await page.locator('.stops-table td[data-key="name"] input').evaluate_all("els => els.map((e) => e.value)")
    assert names == [world[f"stop-{i}"] for i in range(1, world.stops + 1)]
    await watch.clean("/cadastro/rotas")


async def test_the_assignments_and_zones_pages_write_names_as_text(tab: Tab, watch: Watch, world: World) -> None:
    await tab.login("admin")
    await tab.open("/cadastro/atribuicoes")
    await _shows(tab, [world["route-code"], world["route-name"], world["driver"]])
    await watch.clean("/cadastro/atribuicoes")
    await tab.open("/cadastro/zonas")
    await _shows(tab, [world["zone"]], "table.reg-table")
    await _hover_all(tab, ".map")
    await _shows(tab, [world["zone"]], ".map")
    await watch.clean("/cadastro/zonas")


async def test_the_users_and_audit_pages_write_names_as_text(tab: Tab, watch: Watch, world: World) -> None:
    await tab.login("admin")
    await tab.open("/usuarios")
    page = tab.page
    await _shows(tab, [world["full-name"], world["contractor"]], "table.reg-table")
    await _edit(tab, USERNAME, f"Editar usuário {USERNAME}", [world["full-name"]])
    await watch.clean("/usuarios")
    await tab.open("/auditoria")
    await page.get_by_label("Usuário").fill(USERNAME)
    await page.get_by_role("button", name="Filtrar").click()
    await expect(page.locator("table.reg-table tbody")).to_contain_text("Entrada no sistema")
    await watch.clean("/auditoria")
