"""Issue 36 ("first use, second round"), the smaller things and the designation, in a real browser: the login keeps
the page's query, a duplicate user names its field, the users page grants and revokes the designation (audited,
old → new), the map falls back to the imported roads when tiles fail and drops its notice, the calendar's dialog
calls only today "hoje", and the speeding report names its scale. Screenshots go to test-artifacts/ as
issue36-<name>-<PHASE>.png (PHASE=before on the old code, after by default)."""

from __future__ import annotations

import os
import re
from datetime import date
from typing import Any

import asyncpg
import httpx
from playwright.async_api import expect

from telemetria.roads import store as roads_store
from telemetria.sim.roadnet import grid_ways
from telemetria.sim.roads import make_grid
from tests.browser.conftest import Tab
from tests.db.conftest import PASSWORD

PHASE = os.environ.get("PHASE", "after")
ROADS = "Estradas importadas (sem internet)"


async def _shot(tab: Tab, name: str) -> None:
    await tab.shot(f"issue36-{name}-{PHASE}")


async def _get(tab: Tab, role: str, path: str, **params: Any) -> Any:
    async with httpx.AsyncClient(base_url=tab.site.url, timeout=30) as client:
        r = await client.get(path, params=params, headers=tab.site.token(role))
    assert r.status_code == 200, r.text
    return r.json()


async def test_after_login_the_page_opens_with_its_query(tab: Tab) -> None:
    page = tab.page
    asked = f"/relatorios/speeding?vehicle_id={tab.site.history_vehicle_id}&from=2026-11-23&to=2026-11-23"
    await tab.open(asked)
    await expect(page).to_have_url(re.compile("/entrar\\?next="))
    await page.get_by_label("Usuário").fill("auditor")
    await page.get_by_label("Senha").fill(PASSWORD)
    await page.get_by_role("button", name="Entrar").click()
    await expect(page).to_have_url(re.compile(re.escape(asked) + "$"))
    await expect(page.locator("#report-table tbody tr")).to_have_count(2)  # the period asked for, not a blank form


async def test_a_duplicate_username_is_refused_naming_the_field_and_the_name(tab: Tab) -> None:
    page = tab.page
    await tab.login("admin", then="/usuarios")
    await page.get_by_role("button", name="Novo usuário").click()
    form = page.get_by_role("dialog", name="Novo usuário")
    await form.get_by_label("Nome de usuário").fill("monitor")  # taken: the test site's monitor
    await form.get_by_label("Perfil").select_option(label="Controle externo")
    await form.get_by_label("Senha", exact=True).fill(PASSWORD + "x")
    await form.get_by_label("Repita a senha").fill(PASSWORD + "x")
    await form.get_by_role("button", name="Criar usuário").click()
    error = form.locator("#f-username-err, .field-error:not([hidden])").first
    await expect(error).to_be_visible()
    await _shot(tab, "duplicate-user")
    await expect(form.get_by_label("Nome de usuário")).to_have_accessible_error_message(
        "Nome de usuário: «monitor» já está em uso; escolha outro."
    )


async def test_the_users_page_grants_and_revokes_the_designation_and_the_audit_log_keeps_both(tab: Tab) -> None:
    page = tab.page
    username = f"servidora.{os.getpid()}"
    await tab.login("admin", then="/usuarios")
    await page.get_by_role("button", name="Novo usuário").click()
    form = page.get_by_role("dialog", name="Novo usuário")
    await form.get_by_label("Nome de usuário").fill(username)
    await form.get_by_label("Perfil").select_option("monitor")
    await form.get_by_label("Senha", exact=True).fill(PASSWORD)
    await form.get_by_label("Repita a senha").fill(PASSWORD)
    await form.get_by_role("button", name="Criar usuário").click()
    await expect(form).to_have_count(0)
    row = page.locator("table.reg-table tbody tr", has_text=username)
    await expect(row).to_contain_text("não designado")
    await _shot(tab, "users-designation")

    await row.get_by_role("button", name="Designar").click()
    ask = page.get_by_role("alertdialog")
    await expect(ask).to_contain_text("Art. 42")
    await ask.get_by_role("button", name="Designar").click()
    await expect(row).to_contain_text("Designado: decide ocorrências")
    users = (await _get(tab, "admin", "/api/v1/users", limit=500))["items"]
    me = next(u for u in users if u["username"] == username)
    assert me["designated"] is True

    await row.get_by_role("button", name="Revogar designação").click()
    await page.get_by_role("alertdialog").get_by_role("button", name="Revogar designação").click()
    await expect(row).to_contain_text("não designado")
    log = (await _get(tab, "admin", "/api/v1/audit", action="user.update", limit=50))["items"]
    mine = [e for e in log if e["target"] == f"user:{me['id']}"]
    assert [e["detail"]["changes"] for e in mine] == [{"designated": [True, False]}, {"designated": [False, True]}]


async def test_a_monitor_not_designated_is_told_why_it_cannot_decide(tab: Tab) -> None:
    """The occurrence page's refusal, on an occurrence awaiting the decision (notified), for the plain monitor."""
    conn = await asyncpg.connect(tab.site.dsn)
    try:
        oid = await conn.fetchval(
            "INSERT INTO occurrences (kind, vehicle_id, contractor_id, day, start_ts, end_ts, facts, article,"
            " severity, status, completed_ts, received_at)"
            " SELECT 'speeding', v.id, v.contractor_id, '2026-11-23', '2026-11-23 10:00Z', '2026-11-23 10:02Z',"
            " '{}'::jsonb, k.article, k.severity, 'notified', '2026-11-23 10:02Z', now()"
            " FROM vehicles v, occurrence_kinds k WHERE v.id = $1 AND k.kind = 'speeding' RETURNING id",
            tab.site.history_vehicle_id,
        )
    finally:
        await conn.close()
    await tab.login("monitor", then=f"/ocorrencias/{oid}")
    note = tab.page.get_by_test_id("not-designated")
    await expect(tab.page.locator("#oc-actions")).to_be_visible()
    await _shot(tab, "occurrence-not-designated")
    await expect(note).to_contain_text("cabe ao servidor designado")
    await expect(note).to_contain_text("página Usuários")


async def test_the_map_falls_back_to_the_imported_roads_and_drops_the_notice(tab: Tab) -> None:
    conn = await asyncpg.connect(tab.site.dsn)
    network = await roads_store.import_ways(
        conn, iter(grid_ways(make_grid(1))), source="grade.osm.pbf", sha256="cd" * 32, by="test",
        effective_from=date(2099, 1, 1),
    )  # fmt: skip
    try:
        page = tab.page
        await tab.login("monitor", then="/mapa")
        note = page.locator("#map .map-note")
        await expect(note).to_be_visible()
        await page.wait_for_timeout(1500)
        await _shot(tab, "map-fallback")
        # Tiles unreachable: the roads layer is put in by itself, and the notice says so.
        await expect(page.locator("path.road-line").first).to_be_attached()
        await expect(note).to_contain_text("estradas importadas")
        assert await page.evaluate("localStorage.getItem('telemetria.baselayer')") is None  # not remembered
        # Chosen by hand, a base of vectors: the notice about tiles goes.
        await page.locator(".leaflet-control-layers").hover()
        await page.get_by_label("Sem mapa de fundo").check()
        await expect(note).to_have_count(0)
        await page.get_by_label(ROADS).check()
        await expect(note).to_have_count(0)
        await expect(page.locator("path.road-line").first).to_be_attached()
    finally:
        await conn.execute("DELETE FROM road_networks WHERE id = $1", network.id)
        await conn.close()


async def test_the_calendar_dialog_calls_only_today_hoje(tab: Tab) -> None:
    page = tab.page
    year = 2033  # no other test uses it
    await tab.login("monitor", then=f"/calendario-escolar?ano={year}")
    await expect(page.locator("#cal-status")).to_have_text(f"Ano letivo de {year} não cadastrado.", timeout=30_000)
    await page.get_by_label("Início do ano letivo").fill(f"{year}-02-07")
    await page.get_by_label("Fim do ano letivo").fill(f"{year}-12-09")
    await page.get_by_role("button", name="Cadastrar ano letivo").click()
    cell = page.locator(f'td.cal-day[data-date="{year}-03-07"]')  # a Monday, years away from today
    await expect(cell).to_have_attribute("data-kind", "letivo", timeout=30_000)
    await cell.get_by_role("button").click()
    dialog = page.get_by_role("dialog")
    await expect(dialog).to_contain_text("um dia letivo")
    await _shot(tab, "calendar-dialog")
    await expect(dialog).to_contain_text("Este é um dia letivo.")
    await expect(dialog).not_to_contain_text("Hoje")


async def test_the_speeding_report_names_its_scale(tab: Tab) -> None:
    page = tab.page
    await tab.login("monitor", then=f"/relatorios/speeding?vehicle_id={tab.site.history_vehicle_id}"
                                     "&from=2026-11-23&to=2026-11-23")  # fmt: skip
    await expect(page.locator("#report-table tbody tr")).to_have_count(2)
    await _shot(tab, "speeding-scale")
    await expect(page.locator("#report-table thead")).to_contain_text("Gravidade CTB, Art. 218")
    await expect(page.locator("body")).to_contain_text("Não é a gravidade da ocorrência")
    async with httpx.AsyncClient(base_url=tab.site.url, timeout=60) as client:
        r = await client.get("/api/v1/reports/speeding", headers=tab.site.token("auditor"),
                             params={"vehicle_id": tab.site.history_vehicle_id, "from": "2026-11-23",
                                     "to": "2026-11-23", "format": "csv"})  # fmt: skip
    assert r.status_code == 200, r.text
    assert "Gravidade CTB, Art. 218" in r.content.decode("utf-8-sig")


async def test_the_audit_log_says_what_changed_in_words_on_the_page_and_in_its_csv(tab: Tab) -> None:
    site, page = tab.site, tab.page
    username = f"fiscal.{os.getpid()}"
    async with httpx.AsyncClient(base_url=site.url, timeout=30, headers=site.token("admin")) as client:
        r = await client.post("/api/v1/users", json={"username": username, "password": PASSWORD, "role": "monitor"})
        assert r.status_code == 201, r.text
        uid = r.json()["id"]
        r = await client.patch(f"/api/v1/users/{uid}", json={"designated": True, "full_name": "Fiscal Teste"})
        assert r.status_code == 200, r.text
    await tab.login("auditor", then="/auditoria")
    await page.get_by_label("Ação").select_option(label="Usuários")
    await page.get_by_role("button", name="Filtrar").click()
    row = page.locator("table.reg-table tbody tr", has_text=f"Usuário nº {uid}").filter(has_text="alterado")
    await expect(row).to_be_visible()
    await _shot(tab, "audit-words")
    await expect(row).to_contain_text("designação (decide ocorrências, Art. 42): não designado → designado")
    await expect(row).to_contain_text("campos alterados: nome completo")  # personal data: named, never its value
    await expect(row).not_to_contain_text("Fiscal Teste")
    await expect(row).not_to_contain_text("user.update")
    await expect(row).not_to_contain_text("user:")
    # The CSV: the same words, the time in the municipality's zone.
    href = await page.locator("#a-csv").get_attribute("href")
    assert href is not None and "action=user" in href
    async with httpx.AsyncClient(base_url=site.url, timeout=30) as client:
        r = await client.get(href, headers=site.token("auditor"))
    assert r.status_code == 200, r.text
    text = r.content.decode("utf-8-sig")
    assert text.splitlines()[0] == "Quando (America/Porto_Velho);Usuário;Perfil;Ação;Alvo;Detalhes;Endereço IP"
    line = next(x for x in text.splitlines() if f"Usuário nº {uid};" in x and "alterado" in x)
    assert "não designado → designado" in line and "Administrador" in line
    assert "user.update" not in text and "null" not in text
    entry = (await _get(tab, "auditor", "/api/v1/audit", action="user.update", limit=5))["items"][0]
    assert line.startswith(entry["words"]["when"] + ";")
    assert re.match(r"^\d{2}/\d{2}/\d{4} \d{2}:\d{2}:\d{2}$", entry["words"]["when"])
