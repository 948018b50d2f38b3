"""Issue 19 in a real browser: XLSX and PDF beside the CSV on every report page (the API's own files for the page's
query), none of the export buttons for a principal without `export`, and "Verificar arquivo": an exported track
file checked against the daily seals (unchanged: valid; one digit changed: not valid, naming that row) and the
seals of a vehicle and period listed so an auditor can copy a digest."""

from __future__ import annotations

import asyncio
import io
import os
import re
import subprocess
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import openpyxl
import pytest
from playwright.async_api import FilePayload, Request, Route, expect
from pypdf import PdfReader

from telemetria.localtime import LOCAL_TZ
from telemetria.web import nav
from tests.browser.conftest import Site, Tab
from tests.browser.fisc_site import DOCS_IMG
from tests.browser.test_reports_pages import _query, _saved
from tests.e2e.conftest import CLI, ROOT

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def xlsx_rows(body: bytes) -> tuple[list[str], list[list[Any]]]:
    """The sheet names of a workbook and the rows of its data sheet (the second), blank rows left out."""
    book = openpyxl.load_workbook(io.BytesIO(body), read_only=True)
    names = list(book.sheetnames)
    rows = [list(r) for r in book[names[1]].iter_rows(values_only=True) if any(c is not None for c in r)]
    return names, rows


def pdf_text(body: bytes) -> str:
    return "\n".join(page.extract_text() or "" for page in PdfReader(io.BytesIO(body)).pages)


async def _api(site: Site, role: str, path: str, **params: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=site.url, timeout=60) as client:
        r = await client.get(path, params=params, headers=site.token(role))
    assert r.status_code == 200, r.text
    return r


# --- the report pages' files ---------------------------------------------------------------------------------


async def test_every_report_page_offers_xlsx_and_pdf_of_its_own_query(tab: Tab) -> None:
    await tab.login("auditor")
    page = tab.page
    for kind in nav.REPORTS:
        by = {"by": "day"} if kind == "km" else {}
        await tab.open(f"/relatorios/{kind}" + _query(tab, **by))
        await expect(page.locator("#report-status")).to_contain_text("Relatório gerado")
        shown = parse_qs(urlsplit(page.url).query)
        for fmt, button in (("xlsx", "XLSX"), ("pdf", "PDF")):
            await expect(page.get_by_role("button", name=button, exact=True)).to_be_visible()

            def asked(r: Request, fmt: str = fmt, kind: str = kind) -> bool:
                return urlsplit(r.url).path == f"/api/v1/reports/{kind}" and f"format={fmt}" in r.url

            async with page.expect_request(asked) as request, page.expect_download() as info:
                await page.get_by_role("button", name=button, exact=True).click()
            sent = parse_qs(urlsplit((await request.value).url).query)
            assert sent == {**shown, "format": [fmt]}, (kind, sent, shown)
            download = await info.value
            assert download.suggested_filename.endswith(f".{fmt}"), (kind, download.suggested_filename)
            body = await _saved(download)
            await expect(page.locator("#report-status")).to_contain_text(f"{download.suggested_filename} baixado")
            if fmt == "xlsx":
                names, rows = xlsx_rows(body)
                assert names[0] == "Consulta", (kind, names)
                csv = (await _api(tab.site, "auditor", f"/api/v1/reports/{kind}", **{k: v[0] for k, v in shown.items()},
                                  format="csv")).content.decode("utf-8-sig")  # fmt: skip
                table = csv.split("\r\n\r\n")[0].rstrip("\r\n").split("\r\n")  # the track CSV's seals come after
                assert len(rows) == len(table), (kind, len(rows), len(table))
                assert rows[0] == table[0].split(";"), (kind, rows[0])
                assert any(tab.site.history_plate in str(c) for r in rows for c in r), kind
            else:
                assert body.startswith(b"%PDF"), kind
                text = pdf_text(body)
                assert tab.site.history_plate in text and "Página 1 de" in text, (kind, text[:300])


async def _without_export(route: Route) -> None:
    """The page as a principal without `export` would get it: its config names no such permission."""
    resp = await route.fetch()
    html = (await resp.text()).replace('"export", ', "").replace(', "export"', "")
    assert '"export"' not in html
    await route.fulfill(response=resp, body=html)


async def test_a_principal_without_export_sees_no_export_buttons(tab: Tab) -> None:
    # Every role of today may export (auth/roles.py); the pages follow the permission list their config carries, so
    # this gives a page the config of a principal without it and checks that nothing offers a file.
    page = tab.page
    await tab.login("auditor")
    await page.route(re.compile(r"/(relatorios/track|ocorrencias)(\?.*)?$"), _without_export)
    await tab.open("/relatorios/track" + _query(tab))
    await expect(page.locator("#report-status")).to_contain_text("Relatório gerado")
    await expect(page.get_by_role("button", name="Gerar relatório")).to_be_visible()
    await expect(page.locator("#report-actions button[data-format]")).to_have_count(0)
    await expect(page.get_by_role("group", name="Exportar arquivo")).to_have_count(0)
    await tab.open("/ocorrencias")
    await expect(page.locator("#o-status-line")).not_to_have_text("Carregando…")
    await expect(page.locator("#o-files")).to_be_hidden()
    # And with it, as the auditor really has: the three files, carrying the list's filters.
    await page.unroute(re.compile(r"/(relatorios/track|ocorrencias)(\?.*)?$"))
    await tab.open("/ocorrencias?kind=speeding")
    for fmt in ("csv", "xlsx", "pdf"):
        link = page.locator(f'#o-files a[data-format="{fmt}"]')
        await expect(link).to_be_visible()
        await expect(link).to_have_attribute("href", f"/api/v1/occurrences?kind=speeding&format={fmt}")


# --- "Verificar arquivo" --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
async def sealed(site: Site) -> AsyncIterator[Site]:
    """The recorded day sealed as the service seals it: the rollup refresh of closed days (`telemetria rollup`)."""
    env = {**os.environ, "TELEMETRIA_DATABASE_URL": site.dsn}
    done = await asyncio.to_thread(subprocess.run, [*CLI, "rollup", "refresh", "--all"], env=env, cwd=ROOT,
                                   capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stderr
    yield site


def _track_params(site: Site) -> dict[str, str]:
    return {"vehicle_id": str(site.history_vehicle_id), "from": site.history_day, "to": site.history_day}


def _tampered(csv: bytes) -> tuple[bytes, int]:
    """The CSV with one digit of one latitude changed (the 10th position); the file's line number of that row."""
    lines = csv.decode("utf-8-sig").split("\r\n")
    header = next(i for i, line in enumerate(lines) if "Latitude" in line)
    col = lines[header].split(";").index("Latitude")
    at = header + 10
    cells = lines[at].split(";")
    last = cells[col][-1]
    cells[col] = cells[col][:-1] + ("1" if last != "1" else "2")
    lines[at] = ";".join(cells)
    return ("\ufeff" + "\r\n".join(lines)).encode(), at + 1


def _file(name: str, body: bytes, mime: str) -> FilePayload:
    return {"name": name, "mimeType": mime, "buffer": body}


async def _verify(tab: Tab, name: str, body: bytes, mime: str) -> None:
    await tab.page.set_input_files("#v-file", files=[_file(name, body, mime)])
    await tab.page.get_by_role("button", name="Verificar", exact=True).click()
    await expect(tab.page.locator("#v-status")).to_contain_text(f"{name} verificado", timeout=30_000)


async def test_an_unchanged_track_file_is_valid_and_a_changed_digit_names_its_row(tab: Tab, sealed: Site) -> None:
    page = tab.page
    csv = (await _api(sealed, "contractor", "/api/v1/reports/track", **_track_params(sealed), format="csv")).content
    await tab.login("contractor", then="/verificar")
    await expect(page.locator('#menu a[href="/verificar"]')).to_have_attribute("aria-current", "page")  # in its menu
    await expect(page.get_by_text("O que é um selo")).to_be_visible()

    await _verify(tab, "trajetoria.csv", csv, "text/csv")
    verdict = page.locator("#v-verdict")
    await expect(verdict).to_have_attribute("data-valid", "true")
    await expect(verdict).to_have_attribute("data-verdict", "autentico")
    await expect(verdict.locator("strong")).to_have_text("Autêntico.")
    row = page.locator(f'#v-days tbody tr[data-date="{sealed.history_day}"]')
    await expect(row).to_have_attribute("data-valid", "true")
    await expect(row).to_contain_text(sealed.history_plate)
    await expect(row).to_contain_text("23/11/2026")
    await expect(row.locator("td").nth(2)).to_have_text("1")  # the seal's version
    await expect(row.locator("td").nth(3)).to_have_text("210")  # the day's rows
    await expect(row.locator("td").nth(4)).to_have_text("autêntico")
    await tab.shot("verify-valid")

    changed, line = _tampered(csv)
    await _verify(tab, "trajetoria-alterada.csv", changed, "text/csv")
    await expect(verdict).to_have_attribute("data-valid", "false")
    await expect(verdict.locator("strong")).to_have_text("Alterado.")
    await expect(row).to_have_attribute("data-valid", "false")
    await expect(row.locator("td").nth(4)).to_have_text("alterado")
    diff = row.locator(".v-diff")
    await expect(diff).to_contain_text(f"Linha {line} do arquivo")
    await expect(diff).to_contain_text("Esperado (selo)")
    await expect(diff).to_contain_text("Encontrado (arquivo)")
    # Both sides as the file shows them (issue 36): local date and time, decimal comma; never the seal's raw line.
    for side in (diff.locator(".v-expected"), diff.locator(".v-found")):
        await expect(side).to_have_text(re.compile(r"^23/11/2026 \d\d:\d\d:\d\d; -\d+,\d{6}; -\d+,\d{6}; (\d+,\d)?$"))
    assert await diff.locator(".v-expected").text_content() != await diff.locator(".v-found").text_content()
    DOCS_IMG.mkdir(parents=True, exist_ok=True)  # docs/fiscalizacao.md shows it (DOCS_SCREENSHOTS=1)
    await page.screenshot(path=str(DOCS_IMG / "verificar-arquivo.png"), full_page=True)


async def test_on_a_phone_each_days_verification_result_is_on_screen(tab: Tab, sealed: Site) -> None:
    """Issue 36: on a phone the days' table scrolled its result ("confere"/"não confere") off the screen's edge."""
    page = tab.page
    csv = (await _api(sealed, "contractor", "/api/v1/reports/track", **_track_params(sealed), format="csv")).content
    await page.set_viewport_size({"width": 360, "height": 780})
    await tab.login("contractor", then="/verificar")
    await _verify(tab, "trajetoria.csv", csv, "text/csv")
    row = page.locator(f'#v-days tbody tr[data-date="{sealed.history_day}"]')
    result = row.locator("td").nth(4)
    await expect(result).to_contain_text("autêntico")
    await tab.shot(f"issue36-verify-phone-{os.environ.get('PHASE', 'after')}")
    box = await result.locator(".badge").bounding_box()  # where it is, not scrolled to: the reader sees it or not
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360, box
    assert await result.get_attribute("data-label") == "Resultado"


async def test_a_file_of_a_day_not_sealed_yet_says_so_and_when_to_try_again(tab: Tab, site: Site) -> None:
    """Issue 36: today's track (a day the service seals once it is over) is "ainda não selado", not "não válido":
    its rows match the data stored now; try again tomorrow. One digit changed in it is "alterado"."""
    today = datetime.now(LOCAL_TZ).date().isoformat()
    vid = site.live_ids["WEB1A00"]  # the simulator posts it live, now
    params = {"vehicle_id": str(vid), "from": today, "to": today, "format": "csv"}
    for _ in range(60):  # rows enough to change the 10th (the simulator posts one a second)
        csv = (await _api(site, "contractor", "/api/v1/reports/track", **params)).content
        if csv.count(b"\r\n") > 15:
            break
        await asyncio.sleep(1)
    await tab.login("contractor", then="/verificar")
    await _verify(tab, "hoje.csv", csv, "text/csv")
    verdict = tab.page.locator("#v-verdict")
    await expect(verdict).to_have_attribute("data-verdict", "ainda_nao_selado")
    await expect(verdict.locator("strong")).to_have_text("Ainda não selado.")
    await expect(verdict).to_contain_text("tente novamente amanhã")
    await expect(verdict).to_contain_text("As linhas conferem com os dados guardados hoje")
    await expect(verdict).not_to_contain_text("Não válido")
    await expect(tab.page.locator("#v-days tbody tr td:nth-child(5)")).to_have_text("ainda não selado")
    await tab.shot("issue36-verify-not-sealed-yet")
    changed, _ = _tampered(csv)
    await _verify(tab, "hoje-alterado.csv", changed, "text/csv")
    await expect(verdict).to_have_attribute("data-verdict", "alterado")


async def test_an_xlsx_track_file_is_verified_too(tab: Tab, sealed: Site) -> None:
    r = await _api(sealed, "auditor", "/api/v1/reports/track", **_track_params(sealed), format="xlsx")
    await tab.login("auditor", then="/verificar")
    await _verify(tab, "trajetoria.xlsx", r.content, XLSX)
    await expect(tab.page.locator("#v-verdict")).to_have_attribute("data-valid", "true")
    await expect(tab.page.locator("#v-days tbody tr")).to_have_count(1)


async def test_a_file_that_is_no_track_export_is_refused_in_portuguese(tab: Tab) -> None:
    page = tab.page
    await tab.login("monitor", then="/verificar")
    notes = b"isto;nao;e\r\numa;trajetoria;exportada\r\n"
    await page.set_input_files("#v-file", files=[_file("notas.csv", notes, "text/csv")])
    await page.get_by_role("button", name="Verificar", exact=True).click()
    await expect(page.locator("#v-status")).to_contain_text("Não foi possível verificar o arquivo")
    await expect(page.locator("#v-file")).to_have_attribute("aria-invalid", "true")
    await expect(page.locator("#v-result")).to_be_hidden()


async def test_the_seals_of_a_vehicle_are_listed_from_the_history_page_to_copy(tab: Tab, sealed: Site) -> None:
    page = tab.page
    seals = (await _api(sealed, "auditor", "/api/v1/seals", **_track_params(sealed))).json()["items"]
    [seal] = [s for s in seals if s["date"] == sealed.history_day and s["version"] == 1]
    await tab.login("auditor")
    day = sealed.history_day
    await tab.open(f"/historico?vehicle_id={sealed.history_vehicle_id}&from={day}T00:00&to={day}T23:59")
    await expect(page.locator("#h-status")).to_contain_text("posições", timeout=30_000)
    await page.get_by_role("link", name="Selos diários deste veículo no período").click()
    await page.wait_for_url(re.compile(r"/verificar\?"))
    row = page.locator(f'#s-table tbody tr[data-date="{day}"][data-version="1"]')
    await expect(row).to_contain_text(seal["sha256"])
    await expect(row).to_contain_text(sealed.history_plate)
    await expect(row.locator("td").nth(3)).to_have_text(str(seal["fixes"]))
    await expect(page.locator("#s-status")).to_contain_text("23/11/2026 a 23/11/2026")
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    await row.get_by_role("button", name="Copiar o selo de 23/11/2026, versão 1", exact=True).click()
    await expect(page.locator("#toast")).to_contain_text("copiado")
    assert await page.evaluate("navigator.clipboard.readText()") == seal["sha256"]
    await tab.shot("verify-seals")
