"""Every report as PDF (issue 19): application/pdf, A4, the text extractable with the plate and the totals, a
map for the track, trips and deviations, the track's span limited, audited like the CSV."""

from __future__ import annotations

import io
import re
from datetime import UTC, datetime
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from pypdf import PdfReader

from telemetria.formats import fmt
from tests.db import test_reports_api as reports_api
from tests.db.test_measurement_api import FIRST, LAST
from tests.db.test_measurement_api import _setup as measurement_setup
from tests.db.test_occurrences_api import api, auth, occurrence, world  # noqa: F401  (fixtures)
from tests.db.test_reports_accuracy import DAY
from tests.db.world import World

people = reports_api.people  # the fixtures: the users of every role, one simulated run posted
posted = reports_api.posted
_km = reports_api._km

KINDS = ["km", "summary", "trips", "speeding", "stops", "route-deviation", "track", "reporting", "schedule"]


def _text(pdf: bytes) -> tuple[PdfReader, str]:
    reader = PdfReader(io.BytesIO(pdf))
    return reader, re.sub(r"\s+", " ", "\n".join(p.extract_text() for p in reader.pages))


async def _pdf(client: httpx.AsyncClient, people: Any, kind: str, **params: str) -> httpx.Response:
    r = await client.get(
        f"/api/v1/reports/{kind}", params={"from": DAY, "to": DAY, "format": "pdf", **params},
        headers=people.auth("auditor"),
    )  # fmt: skip
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/pdf"
    assert r.headers["content-disposition"].endswith('.pdf"')
    return r


@pytest.mark.parametrize("kind", KINDS)
async def test_every_report_as_pdf_names_the_vehicle_on_a4_pages(
    client: httpx.AsyncClient, people: Any, posted: tuple[Any, Any], kind: str
) -> None:
    t, _ = posted
    r = await _pdf(client, people, kind, vehicle_id=str(t.vehicle_id))
    reader, text = _text(r.content)
    assert r.content.startswith(b"%PDF-")
    assert "AAA1A11" in text  # the query names the vehicle, the table's rows too
    assert "Prefeitura Municipal de Jaru" in text  # settings.municipality_name, on every page
    pages = len(reader.pages)
    for n, page in enumerate(reader.pages, 1):
        box = page.mediabox
        assert sorted((round(float(box.width)), round(float(box.height)))) == [595, 842]  # A4, either way up
        assert f"Página {n} de {pages}" in re.sub(r"\s+", " ", page.extract_text())
    assert re.search(r"Gerado por auditor \(auditor\) em \d\d/\d\d/\d{4} \d\d:\d\d:\d\d", text)


async def test_the_km_pdf_holds_the_csv_rows_and_the_group_total(
    client: httpx.AsyncClient, people: Any, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    total = (await _km(client, people, t.vehicle_id))["total_km"]
    _, text = _text((await _pdf(client, people, "km")).content)
    assert "TOTAL" in text and fmt("km", total) in text  # written as the CSV writes it: decimal comma
    assert "Km rodados" in text and "Período: 23/11/2026 a 23/11/2026" in text


async def test_the_track_pdf_has_a_map_and_its_positions(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: Any, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    r = await _pdf(client, people, "track", vehicle_id=str(t.vehicle_id))
    reader, text = _text(r.content)
    assert "Mapa" in text and "1 linha(s): AAA1A11 23/11/2026" in text
    assert re.search(r"\d+(,\d+)? k?m", text)  # the scale bar
    assert reader.pages[0].mediabox.width > reader.pages[0].mediabox.height  # 14 columns: landscape
    doc = orjson.loads((await client.get(
        "/api/v1/reports/track", params={"vehicle_id": str(t.vehicle_id), "from": DAY, "to": DAY},
        headers=people.auth("auditor"),
    )).content)  # fmt: skip
    first, last = doc["positions"][0], doc["positions"][-1]
    assert fmt("coord", first["lat"]) in text and fmt("km", last["km"]) in text
    for page in reader.pages:  # the header row on every page the positions run onto
        shown = page.extract_text()
        assert "AAA1A11 23/11/2026 " not in shown or "Veículo (id) Placa Data e hora" in shown
    mapped = [p.extract_text() for p in reader.pages if "Mapa" in p.extract_text()]
    assert len(mapped) == 1 and "km\nN\n" in mapped[0]  # the heading, its scale bar and north arrow together
    entry = await conn.fetchrow("SELECT action, detail FROM audit_log WHERE action = 'export.track'")
    assert entry["detail"]["format"] == "pdf"


@pytest.mark.parametrize("kind", ["trips", "route-deviation"])
async def test_trips_and_deviations_are_mapped(
    client: httpx.AsyncClient, people: Any, posted: tuple[Any, Any], kind: str
) -> None:
    t, _ = posted
    rows = orjson.loads((await client.get(
        f"/api/v1/reports/{kind}", params={"vehicle_id": str(t.vehicle_id), "from": DAY, "to": DAY},
        headers=people.auth("auditor"),
    )).content)  # fmt: skip
    _, text = _text((await _pdf(client, people, kind, vehicle_id=str(t.vehicle_id))).content)
    assert "Mapa" in text and "linha(s): rota" in text  # the assigned route's line
    marked = sum(2 for _ in rows["trips" if kind == "trips" else "episodes"])
    assert f"{marked} local(is) marcado(s)" in text or marked == 0


async def test_a_track_pdf_covers_at_most_a_month(client: httpx.AsyncClient, people: Any) -> None:
    params = {"from": "2026-09-01", "to": "2026-11-23", "format": "pdf"}
    r = await client.get("/api/v1/reports/track", params=params, headers=people.auth("auditor"))
    assert r.status_code == 400 and orjson.loads(r.content)["field"] == "to"


@pytest.mark.parametrize("fmt", ["pdf", "xlsx"])
async def test_a_track_file_with_more_positions_than_it_holds_is_refused_before_it_begins(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: Any, posted: tuple[Any, Any],
    monkeypatch: pytest.MonkeyPatch, fmt: str,
) -> None:  # fmt: skip
    from telemetria.reports import api as reports_api_module

    t, _ = posted
    n = await conn.fetchval("SELECT count(*) FROM fixes WHERE vehicle_id = $1", t.vehicle_id)
    params = {"vehicle_id": str(t.vehicle_id), "from": DAY, "to": DAY, "format": fmt}
    monkeypatch.setitem(reports_api_module.ROW_CAPS, fmt, n - 1)
    r = await client.get("/api/v1/reports/track", params=params, headers=people.auth("auditor"))
    assert r.status_code == 400 and orjson.loads(r.content)["field"] == "to", r.text
    assert f"at most {n - 1} positions" in r.text
    monkeypatch.setitem(reports_api_module.ROW_CAPS, fmt, n)  # exactly as many: the file is made
    assert (await client.get("/api/v1/reports/track", params=params, headers=people.auth("auditor"))).status_code == 200


async def test_the_occurrence_list_as_pdf_maps_each_occurrence(
    api: httpx.AsyncClient,  # noqa: F811
    conn: asyncpg.Connection,
    world: World,  # noqa: F811
) -> None:
    await occurrence(conn, world)
    await occurrence(conn, world, 2, kind="unauthorized_stop", place='=HYPERLINK("http://x")')
    r = await api.get(
        "/api/v1/occurrences", params={"from": "2026-03-02", "format": "pdf"}, headers=auth(world, "auditor")
    )
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    _, text = _text(r.content)
    assert "Ocorrências" in text and "AAA1A11" in text and "Av. Brasil" in text
    assert "=HYPERLINK" in text  # set as text, as written: a PDF computes nothing
    assert "Mapa" in text and "2 local(is) marcado(s)" in text
    audited = "SELECT count(*) FROM audit_log WHERE action = 'export.occurrences' AND detail->>'format' = 'pdf'"
    assert await conn.fetchval(audited) == 1


async def test_the_boletim_as_pdf(client: httpx.AsyncClient, conn: asyncpg.Connection, people: Any) -> None:
    w = await measurement_setup(client, conn, people)
    params = {"contract_id": w["k"], "from": FIRST, "to": LAST}
    r = await client.get(
        "/api/v1/reports/measurement", params={**params, "format": "pdf"}, headers=people.auth("auditor")
    )
    assert r.status_code == 200 and r.headers["content-type"] == "application/pdf"
    _, text = _text(r.content)
    assert "Boletim de medição" in text and "Período: 02/03/2026 a 06/03/2026" in text
    assert "Prefeitura Municipal de Jaru" in text and "Página 1 de" in text


async def _boletim_pdf(client: httpx.AsyncClient, people: Any, **params: str) -> tuple[PdfReader, str]:
    r = await client.get("/api/v1/reports/measurement", params={**params, "format": "pdf"},
                         headers=people.auth("auditor"))  # fmt: skip
    assert r.status_code == 200, r.text
    return _text(r.content)


def _created(reader: PdfReader) -> str:
    assert reader.metadata is not None
    return str(reader.metadata["/CreationDate"])


async def test_the_boletim_pdf_is_the_one_a_secretaria_signs(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: Any
) -> None:
    """Issue 36: contract and contractor, period, the rule in words, a table per route, totals (payable km, amount),
    the month's status, signature lines, whole header words, no internal ids, a true creation date."""
    w = await measurement_setup(client, conn, people)
    reader, text = await _boletim_pdf(client, people, contract_id=str(w["k"]), **{"from": FIRST, "to": LAST})
    assert "Contrato: 012/2026, contratada" in text and "vigência 01/02/2026 a 31/12/2026" in text
    assert "Período: 02/03/2026 a 06/03/2026" in text
    assert "Regra de pagamento: corrida com cobertura" in text and "de 50 % a menos de 95 % é parcial" in text
    assert "paga em proporção à cobertura" in text and "km fora da rota não pagos" in text
    assert "Contrato 012/2026: totais por rota" in text and "Total do contrato 5 2 1 2 0 11,000" in text
    # the week of test_measurement_api: 2.2 + 2.2 (substitute) + 1.54 km = 5.94 km × R$ 4.50 = R$ 26.73
    assert "Contrato 012/2026: km a pagar: 5,940 km" in text
    assert "Contrato 012/2026: valor a pagar: R$ 26,73" in text
    assert "Mês 03/2026: aberto (não fechado)" in text
    assert "Fiscal do contrato" in text and "Secretário(a) Municipal de Educação" in text
    for word in ("Corrida", "Placa", "Valor (R$)", "Justificativa", "Cobertura (%)", "Km a pagar", "Situação",
                 "Justificadas", "Km contratado"):  # fmt: skip
        assert word in text, word  # header words whole, never "Execuç/ão"
    assert not re.search(r"Execuç\s+ão|Veícu\s+lo|Valo\s+r", text)
    assert "(id)" not in text and f"contract:{w['k']}" not in text
    created = _created(reader)
    assert not created.startswith("D:2000"), created
    assert created.startswith(f"D:{datetime.now(UTC):%Y%m%d}"), created  # generated now: the month is open


async def test_a_closed_months_boletim_pdf_names_its_closing_and_keeps_its_date(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: Any
) -> None:
    w = await measurement_setup(client, conn, people)
    r = await client.post(f"/api/v1/measurements/{w['k']}/2026-03/close", headers=people.auth("monitor"))
    assert r.status_code == 201, r.text
    sha = r.json()["sha256"]
    await conn.execute("UPDATE measurement_closures SET closed_at = '2026-04-03 14:30:00+00' WHERE sha256 = $1", sha)
    params = {"contract_id": str(w["k"]), "from": "2026-03-01", "to": "2026-03-31"}
    reader, text = await _boletim_pdf(client, people, **params)
    assert "Mês 03/2026: fechado em 03/04/2026 10:30 por" in text and f"SHA-256 {sha}" in text
    assert _created(reader).startswith("D:20260403143000")  # the closing's moment, not the download's
    again, _ = await _boletim_pdf(client, people, **params)
    assert _created(again) == _created(reader) and again.trailer["/ID"] == reader.trailer["/ID"]
