"""Issue 36 item 1, "the process finishable in the browser": every refusal of the process reads in Portuguese with
the right opening and the local deadline (not "Já existe um registro…", not UTC ISO), and the UPFM value is set by
an admin in Administração › Valor da UPFM, after which the refused fine goes through. Screenshots go to
test-artifacts/ as issue36-<name>-<PHASE>.png."""

from __future__ import annotations

import os
from datetime import datetime
from decimal import Decimal

import asyncpg
import httpx
from playwright.async_api import expect

from telemetria.localtime import LOCAL_TZ
from tests.browser.conftest import Tab
from tests.db.conftest import PASSWORD

PHASE = os.environ.get("PHASE", "after")


async def _occurrence(tab: Tab, start: str, status: str, defense_due: str) -> tuple[int, datetime]:
    """A speeding occurrence of the history vehicle awaiting the decision; (id, its defence term's end)."""
    conn = await asyncpg.connect(tab.site.dsn)
    try:
        row = await conn.fetchrow(
            "INSERT INTO occurrences (kind, vehicle_id, contractor_id, day, start_ts, end_ts, facts, article,"
            " severity, status, completed_ts, received_at, notified_at, defense_due)"
            " SELECT 'speeding', v.id, v.contractor_id, $2::timestamptz::date, $2::timestamptz,"
            " $2::timestamptz + interval '2 minutes', '{}'::jsonb, 'Art. 37, X', 'media', $3, $2::timestamptz, now(),"
            " now() - interval '1 day', " + defense_due + " FROM vehicles v WHERE v.id = $1 RETURNING id, defense_due",
            tab.site.history_vehicle_id, datetime.fromisoformat(start), status,
        )  # fmt: skip
    finally:
        await conn.close()
    return int(row["id"]), row["defense_due"]


async def _decide_fine(tab: Tab, oid: int) -> None:
    page = tab.page
    await tab.open(f"/ocorrencias/{oid}")
    form = page.get_by_role("form", name="Decidir")
    await form.get_by_label("Multa", exact=True).check()
    await form.get_by_label("Motivação (Art. 42)").fill("Excesso comprovado pelas posições.")
    await form.get_by_role("button", name="Registrar decisão").click()


async def test_deciding_during_the_defence_term_says_so_with_the_local_deadline(tab: Tab) -> None:
    oid, due = await _occurrence(tab, "2026-11-24T14:00:00+00:00", "notified", "now() + interval '3 days'")
    await tab.login("admin", then=f"/ocorrencias/{oid}")
    await _decide_fine(tab, oid)
    msg = tab.page.get_by_role("form", name="Decidir").get_by_role("status")
    local = due.astimezone(LOCAL_TZ)
    await expect(msg).to_contain_text(f"Ainda no prazo de defesa até {local:%d/%m/%Y %H:%M}")
    await tab.shot(f"issue36-decision-in-defence-term-{PHASE}")
    text = await msg.text_content() or ""
    assert text.startswith("Ainda no prazo de defesa até"), text
    for wrong in ("Já existe", "estado atual", "notified", "+00:00", due.isoformat()[:10]):
        assert wrong not in text, (wrong, text)


async def test_a_fine_without_the_years_upfm_is_refused_then_set_by_the_admin_and_decided(tab: Tab) -> None:
    page = tab.page
    oid, _ = await _occurrence(tab, "2024-10-15T14:00:00+00:00", "notified", "now() - interval '1 hour'")
    await tab.login("admin", then=f"/ocorrencias/{oid}")
    await _decide_fine(tab, oid)
    msg = page.get_by_role("form", name="Decidir").get_by_role("status")
    await expect(msg).to_contain_text("Não há valor da UPFM cadastrado para 2024")
    await expect(msg).to_contain_text("Administração › Valor da UPFM")
    assert "Já existe" not in (await msg.text_content() or "")
    await tab.shot(f"issue36-fine-without-upfm-{PHASE}")

    # The admin finds the page in the menu and sets 2024's value, in Brazilian notation.
    await tab.open("/administracao/upfm")
    await expect(page.get_by_role("heading", name="Valor da UPFM")).to_be_visible()
    await page.get_by_label("Ano").fill("2024")
    await page.get_by_label("Valor de 1 UPFM (R$)").fill("0")
    await page.get_by_role("button", name="Salvar").click()
    await expect(page.locator("#u-status")).to_contain_text("maior que zero")
    await page.get_by_label("Valor de 1 UPFM (R$)").fill("4,12")
    await page.get_by_role("button", name="Salvar").click()
    await expect(page.locator("#u-status")).to_contain_text("Valor da UPFM de 2024 salvo: R$ 4,12")
    await expect(page.locator('tr[data-year="2024"] td[data-field="brl"]')).to_have_text("R$ 4,12")
    await page.get_by_label("Valor de 1 UPFM (R$)").fill("4,15")
    await page.get_by_role("button", name="Salvar").click()
    await expect(page.locator("#u-status")).to_contain_text("alterado de R$ 4,12 para R$ 4,15")
    await tab.shot(f"issue36-upfm-page-{PHASE}")

    await _decide_fine(tab, oid)
    await expect(page.locator("body")).to_have_attribute("data-occurrence-status", "decided")
    async with httpx.AsyncClient(base_url=tab.site.url, timeout=30) as client:
        d = (await client.get(f"/api/v1/occurrences/{oid}", headers=tab.site.token("admin"))).json()
        log = (await client.get("/api/v1/audit", params={"action": "upfm.update"},
                                headers=tab.site.token("admin"))).json()["items"]  # fmt: skip
    assert (Decimal(str(d["fine_upfm"])), Decimal(str(d["fine_brl"]))) == (Decimal(20), Decimal("83.00"))
    assert [(e["detail"]["old"], e["detail"]["new"]) for e in log if e["target"] == "upfm:2024"] == [
        ("4.12", "4.15"), (None, "4.12")
    ]  # fmt: skip
    await expect(page.locator('nav a[href="/administracao/upfm"]')).to_have_count(1)  # in the admin's menu


async def test_the_users_page_grants_and_revokes_the_superior_authority_audited(tab: Tab) -> None:
    page = tab.page
    username = f"autoridade.{os.getpid()}"
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
    await row.get_by_role("button", name="Tornar autoridade superior").click()
    ask = page.get_by_role("alertdialog")
    await expect(ask).to_contain_text("Art. 166")
    await ask.get_by_role("button", name="Tornar autoridade superior").click()
    await expect(row).to_contain_text("Autoridade superior: julga recursos")
    await tab.shot(f"issue36-users-superior-{PHASE}")
    async with httpx.AsyncClient(base_url=tab.site.url, timeout=30) as client:
        users = (await client.get("/api/v1/users", params={"limit": 500}, headers=tab.site.token("admin"))).json()
    me = next(u for u in users["items"] if u["username"] == username)
    assert me["superior_authority"] is True and me["designated"] is False

    await row.get_by_role("button", name="Revogar autoridade superior").click()
    await page.get_by_role("alertdialog").get_by_role("button", name="Revogar autoridade superior").click()
    await expect(row.get_by_role("button", name="Tornar autoridade superior")).to_be_visible()
    async with httpx.AsyncClient(base_url=tab.site.url, timeout=30) as client:
        log = (await client.get("/api/v1/audit", params={"action": "user.update", "limit": 50},
                                headers=tab.site.token("admin"))).json()["items"]  # fmt: skip
    mine = [e["detail"]["changes"] for e in log if e["target"] == f"user:{me['id']}"]
    assert mine == [{"superior_authority": [True, False]}, {"superior_authority": [False, True]}]
