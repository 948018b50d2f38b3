"""The boletim page's "Corrigir justificativa" (issue 33 leftovers): a justification's reason, until now correctable
through the API only (PATCH /api/v1/run-justifications/{id}, issue 36), corrected from the run's line while its
month is open: the current reason shown, at least 10 characters, a confirmation naming old and new, every text set as
text; a role that does not keep the registry sees no button, nor does anyone once the month is closed.
"""

from __future__ import annotations

import re

from playwright.async_api import expect

from tests.browser.conftest import Tab
from tests.browser.test_contracts_pages import _boletim, _measured_month
from tests.browser.test_registry_pages import _api

DAY = "2026-11-24"  # not made (tests/browser/test_contracts_pages.py, _measured_month)
MARKUP = '<img src=x onerror="window.__pwned=1">pneu furado na RO-133 & <b>ponte</b>'


async def test_a_justifications_reason_is_corrected_from_the_boletim(tab: Tab) -> None:
    page = tab.page
    m = await _measured_month(tab)
    r = await _api(tab.site, "POST", "/api/v1/run-justifications", "monitor",
                   json={"route_id": m.route_id, "date": DAY, "reason": "ponte caída na linha"})  # fmt: skip
    assert r.status_code == 201, r.text
    jid = r.json()["id"]
    [line] = [x for x in (await _boletim(tab, m))["runs"] if x["route_id"] == m.route_id and x["date"] == DAY]
    assert line["justification_id"] == jid

    # An auditor reads the boletim but keeps no registry: no button.
    await tab.login("auditor")
    await tab.open(f"/boletim?contract_id={m.contract['id']}&mes=2026-11")
    row = page.locator(f'table.b-runs tbody tr[data-date="{DAY}"][data-route="{m.code}"]')
    await expect(row).to_contain_text("ponte caída na linha", timeout=60_000)
    await expect(page.get_by_role("button", name="Corrigir justificativa")).to_have_count(0)

    await page.context.clear_cookies()
    await tab.login("monitor")
    await tab.open(f"/boletim?contract_id={m.contract['id']}&mes=2026-11")
    await expect(row).to_contain_text("ponte caída na linha", timeout=60_000)
    patches: list[str] = []
    page.on("request", lambda req: patches.append(req.url) if req.method == "PATCH" else None)
    await row.get_by_role("button", name="Corrigir justificativa").click()
    dialog = page.get_by_role("dialog")
    await expect(dialog).to_contain_text("Motivo registrado por monitor: «ponte caída na linha»")
    reason = dialog.get_by_label("Novo motivo")
    await expect(reason).to_have_value("ponte caída na linha")  # the current one, to be edited

    # Too short: said under the field, nothing sent.
    await reason.fill("curto")
    await dialog.get_by_role("button", name="Corrigir justificativa").click()
    await expect(reason).to_have_accessible_error_message(re.compile("^Use pelo menos 10 caracteres"))
    # The same reason: said too, nothing sent.
    await reason.fill("ponte caída na linha")
    await dialog.get_by_role("button", name="Corrigir justificativa").click()
    await expect(reason).to_have_accessible_error_message(re.compile("^É o mesmo motivo já registrado"))
    # A new reason asks for confirmation naming old and new; cancelling keeps the form and sends nothing.
    await reason.fill(MARKUP)
    await dialog.get_by_role("button", name="Corrigir justificativa").click()
    confirm = page.get_by_role("alertdialog")
    await expect(confirm).to_contain_text(f"De «ponte caída na linha» para «{MARKUP}».")
    await confirm.get_by_role("button", name="Cancelar").click()
    await expect(reason).to_have_accessible_error_message(re.compile("^Correção não confirmada"))
    assert patches == []
    await dialog.get_by_role("button", name="Corrigir justificativa").click()
    await page.get_by_role("alertdialog").get_by_role("button", name="Confirmar correção").click()
    await expect(page.get_by_role("dialog")).to_have_count(0, timeout=30_000)
    assert [u.rsplit("/", 1)[1] for u in patches] == [str(jid)]

    # The line shows the new reason as text: the markup is letters, nothing of it ran or was made an element.
    await expect(row).to_contain_text(MARKUP, timeout=60_000)
    assert await row.locator("img, b").count() == 0
    assert await page.evaluate("window.__pwned") is None
    [line] = [x for x in (await _boletim(tab, m))["runs"] if x["route_id"] == m.route_id and x["date"] == DAY]
    assert (line["status"], line["justification"], line["justification_id"]) == ("justified", MARKUP, jid)

    # Once the month is closed the reason is frozen with it: no button.
    r = await _api(tab.site, "POST", f"/api/v1/measurements/{m.contract['id']}/2026-11/close", "monitor",
                   json={"confirm_early": True})  # fmt: skip
    assert r.status_code == 201, r.text
    await tab.open(f"/boletim?contract_id={m.contract['id']}&mes=2026-11")
    await expect(page.get_by_test_id("closed-banner")).to_be_visible(timeout=60_000)
    await expect(row).to_contain_text(MARKUP)
    await expect(page.get_by_role("button", name="Corrigir justificativa")).to_have_count(0)
