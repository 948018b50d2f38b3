"""Issue 18's "done means", end to end in a browser against a real server whose detector runs every second:

fixes posted over HTTP → two speeding alerts appear on the live map → the monitor reviews and confirms the first
(evidence frozen: its SHA-256 shown) → notifies → the Termo opens as a PDF → the contractor writes a defence with
an attachment → the admin decides a fine (its UPFM and R$ shown from the answer) → the second occurrence, of the
same severity and contractor, decided as a fine too, shows the fine doubled (Art. 38 sole paragraph).

Speeding is classified `media` by default, which does not double; the admin first makes it `grave` on the
classification page (what the page is for), so both occurrences are detected as grave.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from playwright.async_api import Browser, Page, expect

from telemetria.fix import Fix
from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings
from tests.browser.conftest import Tab
from tests.browser.fisc_site import DOCS_IMG, FiscSite, drive, fisc_site, fisc_tab
from tests.browser.test_files_and_seals import pdf_text, xlsx_rows

PLATE = "FLO1A11"
UPFM_BRL = Decimal("4.71")
DETECTED_S = 90  # found within 60 s of the completing fix (issue 18), plus the panel's poll


@pytest.fixture(scope="module")
async def flow_site(base_settings: Settings) -> AsyncIterator[FiscSite]:
    year = datetime.now(UTC).astimezone(LOCAL_TZ).year
    env = {"TELEMETRIA_DETECTOR_INTERVAL_S": "1", "TELEMETRIA_UPFM_BRL": f"{year - 1}=4.52,{year}={UPFM_BRL}"}
    async with fisc_site(base_settings, "telemetria_flow", (PLATE,), **env) as s:
        yield s


@pytest.fixture
async def flow_tab(browser: Browser, flow_site: FiscSite) -> AsyncIterator[Tab]:
    async with fisc_tab(browser, flow_site, downloads=True) as tab:
        yield tab


def two_speedings(route: Any, start: datetime) -> list[Fix]:
    """A fix every 5 s along the route: 40 s at 95 km/h (limit 60), 60 s at 40, 40 s at 95 again, 15 s at 40."""
    out: list[Fix] = []
    at_m = 0.0
    for n, kmh in ((9, 95.0), (12, 40.0), (9, 95.0), (4, 40.0)):
        part = drive(route, start + timedelta(seconds=5 * len(out)), n, 5.0, kmh, at_m=at_m)
        out += part
        at_m += n * 5.0 * kmh / 3.6
    return out


async def logout(page: Page) -> None:
    await page.get_by_role("button", name="Sair").click()
    await expect(page).to_have_url(re.compile("/entrar$"))


async def status_is(page: Page, status: str) -> None:
    await expect(page.locator("body")).to_have_attribute("data-occurrence-status", status)


def fine(detail: dict[str, Any]) -> tuple[Decimal, Decimal]:
    return Decimal(str(detail["fine_upfm"])), Decimal(str(detail["fine_brl"]))


async def test_the_flow_from_a_live_alert_to_a_doubled_fine(flow_tab: Tab, flow_site: FiscSite) -> None:
    page = flow_tab.page
    site = flow_site

    # The admin classifies speeding as grave (Art. 38, VIII: imprudência): its recurrence doubles.
    await flow_tab.login("admin", then="/fiscalizacao/classificacao")
    row = page.locator('tr[data-kind="speeding"]')
    await row.get_by_label("Infração: Excesso de velocidade").fill("Art. 38, VIII")
    await row.get_by_role("button", name="Salvar").click()
    await expect(page.locator("#k-status")).to_contain_text("salva")
    await expect(row.locator('td[data-field="severity"]')).to_have_text("Grave")
    await page.screenshot(path=str(DOCS_IMG / "fiscalizacao-classificacao.png"), full_page=True)
    await logout(page)

    # The monitor watches the live map; the tracker posts two speeding episodes.
    await flow_tab.login("monitor", then="/mapa")
    await expect(page.locator("#alerts .alerts-status")).not_to_have_text("Carregando alertas…")
    await site.post(PLATE, two_speedings(site.vehicles[PLATE].route, datetime.now(UTC) - timedelta(seconds=170)))
    alerts = page.locator('#alerts-list li:has(button[data-kind="speeding"])')
    await expect(alerts).to_have_count(2, timeout=DETECTED_S * 1000)
    await expect(alerts.first).to_have_class("new")
    await expect(alerts.first).to_contain_text(PLATE)
    listed = (await site.api("monitor", "GET", "/api/v1/occurrences", params={"kind": "speeding"})).json()["items"]
    first, second = sorted(listed, key=lambda o: o["start"])
    assert first["severity"] == second["severity"] == "grave", listed
    assert first["facts"]["max_kmh"] > first["facts"]["limit_kmh"]
    DOCS_IMG.mkdir(parents=True, exist_ok=True)
    await page.screenshot(path=str(DOCS_IMG / "fiscalizacao-mapa-alertas.png"))

    # Review and confirm from the alert's own page: the evidence is frozen.
    await page.locator(f'#alerts-list button[data-id="{first["id"]}"]').click()
    link = page.locator(".leaflet-popup-content").get_by_role("link", name="Abrir a ocorrência")
    await expect(link).to_have_attribute("href", f"/ocorrencias/{first['id']}")
    await link.click()
    await expect(page).to_have_url(re.compile(f"/ocorrencias/{first['id']}$"))
    await status_is(page, "detected")
    review = page.get_by_role("form", name="Revisar")
    await review.get_by_label("Confirmar").check()
    reason = review.get_by_label("Motivo (obrigatório para descartar)")
    await reason.fill("Conferido no trajeto: 95 km/h numa via de 60.")
    await review.get_by_role("button", name="Registrar revisão").click()
    await status_is(page, "confirmed")
    await expect(page.locator("#oc-sha")).to_have_text(re.compile(r"^[0-9a-f]{64}$"))

    # Notify: the Termo de Comunicação opens as a PDF.
    await page.get_by_role("form", name="Notificar a empresa").get_by_role("button", name="Notificar").click()
    await status_is(page, "notified")
    termo = page.locator("#oc-termo")
    href = await termo.get_attribute("href")
    assert href == f"/api/v1/occurrences/{first['id']}/termo.pdf"
    async with page.context.expect_page() as opened:
        await termo.click()
    pdf = await page.request.get(site.url + href)
    assert pdf.status == 200 and pdf.headers["content-type"].startswith("application/pdf")
    assert (await pdf.body()).startswith(b"%PDF")
    await (await opened.value).close()
    await expect(page.locator('#oc-history li[data-action="notified"]')).to_be_visible()
    await logout(page)

    # The contractor answers, with a document attached.
    await flow_tab.login("contractor", then=f"/ocorrencias/{first['id']}")
    await status_is(page, "notified")
    defense = page.get_by_role("form", name="Apresentar defesa")
    said = "O veículo levava um aluno passando mal ao posto de saúde; segue a declaração da unidade."
    await defense.get_by_label("Texto da defesa").fill(said)
    await defense.get_by_label("Anexos (opcional)").set_input_files(
        {"name": "declaracao.pdf", "mimeType": "application/pdf", "buffer": b"%PDF-1.4\n% declaracao\n"}
    )
    await expect(defense.locator("#df-term")).to_contain_text("dias úteis")  # the contractor sees its term
    await defense.get_by_label("Esta é a minha defesa final").check()  # the decision need not wait for the term
    await defense.get_by_role("button", name="Enviar defesa").click()
    await status_is(page, "defense")
    await expect(page.locator('#oc-history li[data-action="defense"]')).to_contain_text(said)
    await logout(page)

    # The admin decides a fine: 30 UPFM for grave, in R$ by the year's UPFM value, shown from the answer.
    await flow_tab.login("admin", then=f"/ocorrencias/{first['id']}")
    await status_is(page, "defense")
    decision = page.get_by_role("form", name="Decidir")
    await decision.get_by_label("Advertência e multa").check()  # Art. 38: "advertência escrita e multa"
    await decision.get_by_label("Motivação (Art. 42)").fill("A declaração não cobre o trecho: velocidade incompatível.")
    await decision.get_by_role("button", name="Registrar decisão").click()
    await status_is(page, "decided")
    one = (await site.api("admin", "GET", f"/api/v1/occurrences/{first['id']}")).json()
    assert fine(one) == (Decimal(30), (Decimal(30) * UPFM_BRL).quantize(Decimal("0.01")))
    await expect(page.get_by_test_id("fine")).to_contain_text("30")
    await expect(page.get_by_test_id("fine")).to_contain_text("141,30")
    await expect(page.locator("#oc-facts")).to_contain_text("Prazo de recurso")  # the servidor sees the deadlines
    await page.screenshot(path=str(DOCS_IMG / "fiscalizacao-ocorrencia.png"), full_page=True)
    # Only a final penalty counts for recurrence: the appeal term of the first runs out unused.
    await site.sql("UPDATE occurrences SET appeal_due = now() - interval '1 second' WHERE id = $1", first["id"])

    # The second: confirmed, notified and answered over the API, decided on the page — the fine doubles.
    sid = second["id"]
    for role, path, body in (
        ("monitor", "review", {"decision": "confirm", "reason": "mesmo trajeto"}),
        ("monitor", "notify", {}),
        ("contractor", "defense", {"text": "Mesma justificativa.", "final": True}),
    ):
        r = await site.api(role, "POST", f"/api/v1/occurrences/{sid}/{path}", json=body)
        assert r.status_code in (200, 201), (path, r.text)
    await flow_tab.open(f"/ocorrencias/{sid}")
    await status_is(page, "defense")
    decision = page.get_by_role("form", name="Decidir")
    await decision.get_by_label("Advertência e multa").check()
    motivation = "Reincidência em 12 meses: multa em dobro (Art. 38, parágrafo único)."
    await decision.get_by_label("Motivação (Art. 42)").fill(motivation)
    await decision.get_by_role("button", name="Registrar decisão").click()
    await status_is(page, "decided")
    two = (await site.api("admin", "GET", f"/api/v1/occurrences/{sid}")).json()
    assert fine(two) == (2 * fine(one)[0], (2 * fine(one)[0] * UPFM_BRL).quantize(Decimal("0.01"))), two
    await expect(page.get_by_test_id("fine")).to_contain_text("60")
    await expect(page.get_by_test_id("fine")).to_contain_text("282,60")

    # The list: both, decided; its CSV link carries the same filters.
    await flow_tab.open("/ocorrencias?kind=speeding")
    await expect(page.locator("#o-table tbody tr")).to_have_count(2)
    await expect(page.locator('#o-table tr[data-status="decided"]')).to_have_count(2)
    await expect(page.locator("#o-csv")).to_have_attribute("href", re.compile("kind=speeding.*format=csv"))
    # XLSX and PDF beside it (issue 19), with the same filters: a workbook listing both, a PDF naming the plate.
    for fmt in ("xlsx", "pdf"):
        href = await page.locator(f'#o-files a[data-format="{fmt}"]').get_attribute("href")
        assert href is not None and parse_qs(urlsplit(href).query) == {"kind": ["speeding"], "format": [fmt]}, href
        r = await site.api("admin", "GET", href)
        assert r.status_code == 200, r.text
        if fmt == "xlsx":
            _, rows = xlsx_rows(r.content)
            assert sum(any(PLATE in str(c) for c in row) for row in rows) == 2, rows
        else:
            assert PLATE in pdf_text(r.content)
    await page.screenshot(path=str(DOCS_IMG / "fiscalizacao-lista.png"), full_page=True)
