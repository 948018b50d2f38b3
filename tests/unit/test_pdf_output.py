"""The reports' PDF without a database: layout pieces (pure) and whole documents read back with pypdf."""

from __future__ import annotations

import asyncio
import io
import re
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from PIL import Image
from pypdf import PdfReader
from reportlab.pdfbase.pdfmetrics import stringWidth

from telemetria.reports.output import gis, pdf, pdf_map
from telemetria.reports.output import pdf_layout as lay
from telemetria.reports.output.csv import DATETIME, INT, KM, TEXT, Column
from telemetria.reports.output.document import Document, Table
from telemetria.seals import table
from telemetria.seals.model import SealRef

TZ = ZoneInfo("America/Porto_Velho")
COLUMNS = [
    Column("Veículo (id)", "vehicle_id", INT), Column("Placa", "plate"), Column("Início", "t", DATETIME),
    Column("Km", "km", KM), Column("Observação", "note", TEXT),
]  # fmt: skip
T0 = datetime(2026, 3, 2, 10, tzinfo=UTC)


def _row(i: int) -> dict[str, Any]:
    return {"vehicle_id": 7, "plate": f"NBX{i:04d}", "t": T0 + timedelta(minutes=i), "km": i * 1.005, "note": None}


def _doc(rows: Any, **kw: Any) -> Document:
    total = [{"vehicle_id": None, "plate": "TOTAL", "t": None, "km": 1234.5, "note": None}]
    return Document(
        "km", "Km rodados", "km_rodados", TZ, [("Período", "02/03/2026 a 02/03/2026"), ("Observação", "ação nº 1")],
        "maria (monitor)", T0, [Table("Km rodados", COLUMNS, rows, lambda: total)],
        municipality="Prefeitura Municipal de São Ção", **kw,
    )  # fmt: skip


def _render(doc: Document) -> tuple[bytes, PdfReader, list[str]]:
    out = io.BytesIO()
    asyncio.run(pdf.render(doc, out))
    reader = PdfReader(io.BytesIO(out.getvalue()))
    return out.getvalue(), reader, [re.sub(r"\s+", " ", p.extract_text()) for p in reader.pages]


# -- pure pieces ---------------------------------------------------------------------------------------------------


def test_a_wide_table_turns_the_page() -> None:
    assert lay.page_size(8)[0] < lay.page_size(8)[1]
    assert lay.page_size(9)[0] > lay.page_size(9)[1]


def test_widths_share_the_page_by_what_each_column_shows() -> None:
    w = lay.widths(["Placa", "Observação longa"], [["AB", "x" * 200]], 500.0)
    assert sum(w) == pytest.approx(500.0) and w[1] > 3 * w[0]


def test_wrapping_keeps_every_line_inside_the_column() -> None:
    text = "uma observação " + "a" * 90 + " fim"
    lines = lay.wrap(text, 60.0)
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")  # nothing lost
    assert all(stringWidth(x, lay.FONT, lay.CELL_PT) <= 60.0 - 2 * lay.PAD for x in lines)
    assert lay.wrap("", 60.0) == [""] and lay.wrap("curto", 60.0) == ["curto"]


def test_the_pager_begins_a_page_when_a_block_does_not_fit() -> None:
    p = lay.Pager(top=100.0, bottom=10.0)
    assert p.place(30) == (True, 100.0) and p.page == 1
    assert p.place(30) == (False, 70.0)
    assert p.place(30) == (False, 40.0)  # ends at 10: fits exactly
    assert p.place(1) == (True, 100.0) and p.page == 2
    assert p.place(20, keep=75) == (True, 100.0) and p.page == 3  # keep: the next block's room too
    tall = lay.Pager(top=100.0, bottom=10.0)
    tall.place(1)
    assert tall.place(500) == (True, 100.0)  # taller than a page: alone on one, at its top
    assert tall.place(500) == (True, 100.0) and tall.page == 3


def test_cells_are_written_as_the_csv_writes_them() -> None:
    heads = lay.headers(COLUMNS, TZ)
    assert heads[2] == "Início (America/Porto_Velho)"
    cells = lay.cells(COLUMNS, TZ)({**_row(1), "note": "=linha\r\ndois"})
    assert cells == ["7", "NBX0001", "02/03/2026 06:01:00", "1,00", "=linha dois"]  # not neutralized: a PDF is read


def test_thinning_keeps_the_ends_and_drops_what_paper_cannot_show() -> None:
    pts = [(0.0, 0.0), (0.1, 0.0), (0.2, 0.1), (5.0, 5.0), (5.1, 5.0)]
    assert pdf_map.thin(iter(pts), 0.6) == [(0.0, 0.0), (5.0, 5.0), (5.1, 5.0)]
    assert pdf_map.thin(iter([(1.0, 1.0)]), 0.6) == [(1.0, 1.0)]


# -- whole documents -----------------------------------------------------------------------------------------------


def test_rows_run_onto_pages_each_with_header_row_letterhead_and_page_number() -> None:
    data, reader, pages = _render(_doc([_row(i) for i in range(400)]))
    n = len(reader.pages)
    assert data.startswith(b"%PDF-") and n >= 5
    for i, text in enumerate(pages, 1):
        assert "Prefeitura Municipal de São Ção" in text and "Km rodados" in text
        assert f"Página {i} de {n}" in text
        assert "Gerado por maria (monitor) em 02/03/2026 06:00:00" in text  # in the document's zone
        assert "Veículo (id) Placa Início (America/Porto_Velho) Km Observação" in text  # the header row
    every = " ".join(pages)
    assert all(f"NBX{i:04d}" in every for i in range(400))  # every row, in order
    assert every.index("NBX0000") < every.index("NBX0399") < every.index("TOTAL 1.234,50")
    assert "7 NBX0200 02/03/2026 09:20:00 201,00" in every  # decimal comma, local time, half away from zero
    assert "Observação: ação nº 1" in pages[0]  # Portuguese letters and º through Helvetica's Windows-1252


def test_rows_streamed_from_an_async_iterator_and_an_empty_table() -> None:
    async def rows() -> AsyncIterator[dict[str, Any]]:
        for i in range(150):
            yield _row(i)

    _, _, pages = _render(_doc(rows()))
    assert "NBX0149" in " ".join(pages)
    _, reader, pages = _render(_doc([]))
    assert len(reader.pages) == 1 and "Nenhuma linha." in pages[0] and "TOTAL 1.234,50" in pages[0]


def test_punctuation_outside_letters_comes_back_as_written() -> None:
    _, _, pages = _render(_doc([{**_row(1), "note": "“aspas” – travessão — § ª º ç ã é ≥"}]))
    assert "“aspas” – travessão — § ª º ç ã é ≥" in pages[0]


def test_the_seals_table_names_each_day_clipped_to_the_window() -> None:
    window = (datetime(2026, 3, 2, 12, tzinfo=UTC), datetime(2026, 3, 3, 12, tzinfo=UTC))
    seals = table.clipped([SealRef(7, "NBX0001", date(2026, 3, 2), 2, 8640, "ab" * 32)], *window)

    async def refs() -> list[SealRef]:
        return seals

    _, _, pages = _render(_doc([_row(1)], seals=refs))
    every = " ".join(pages)
    assert "Selos diários" in every
    assert "Veículo (id) Placa Dia Versão Posições SHA-256 De (UTC) Até (UTC)" in every
    assert "7 NBX0001 02/03/2026 2 8640" in every
    assert "2026-03-02T12:00:00Z 2026-03-03T04:00:00Z" in every  # the export's start, the local day's end
    assert ("ab" * 32) in every.replace(" ", "")


def test_the_map_and_the_coat_of_arms(tmp_path: Path) -> None:
    png = tmp_path / "brasao.png"
    Image.new("RGB", (60, 80), (30, 90, 160)).save(png, "PNG")

    async def drawing() -> tuple[list[gis.Segment], list[gis.Place]]:
        line = [gis.Position(T0, -10.43 + i * 1e-4, -62.46 + (i % 9) * 1e-4) for i in range(3000)]
        return [gis.Segment("NBX0001 02/03/2026", line)], [gis.Place("Escola", "school", -10.43, -62.46)]

    data, _, pages = _render(_doc([_row(1)], drawing=drawing, coat_of_arms_path=png))
    assert "Mapa" in pages[0] and "1 linha(s): NBX0001 02/03/2026; 1 local(is) marcado(s)" in pages[0]
    assert data.count(b"/Subtype /Image") == 1  # the arms, drawn once (the letterhead is a form on every page)


def test_when_words_must_break_a_plate_stays_whole() -> None:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    from telemetria.reports.output import pdf_layout as lay

    heads = ["Placa", "Fatos medidos", *[f"C{i}" for i in range(16)]]
    sample = [["FLO1A11", "velocidade_maxima=72,0;limite=60,0;excesso=12,0;" * 3, *["02/03/2026"] * 16]]
    got = lay.widths(heads, sample, 780.0)  # A4 landscape's table: the long column's words break, not the plate's
    assert sum(got) == pytest.approx(780.0)
    assert len(lay.wrap(sample[0][1], got[1])) > 1
    assert got[0] >= stringWidth("FLO1A11", lay.FONT, lay.CELL_PT) + 2 * lay.PAD
    assert lay.wrap("FLO1A11", got[0]) == ["FLO1A11"]


# -- drawn in a worker process (issue 37) --------------------------------------------------------------------------


def _full_doc(png: Path) -> Document:
    async def rows() -> AsyncIterator[dict[str, Any]]:
        for i in range(300):
            yield {**_row(i), "note": "linha\nquebrada" if i % 50 == 0 else None}

    async def drawing() -> tuple[list[gis.Segment], list[gis.Place]]:
        line = [gis.Position(T0, -10.43 + i * 1e-4, -62.46 + (i % 9) * 1e-4) for i in range(500)]
        return [gis.Segment("NBX0001 02/03/2026", line)], [gis.Place("Escola", "school", -10.43, -62.46)]

    window = (datetime(2026, 3, 2, 12, tzinfo=UTC), datetime(2026, 3, 3, 12, tzinfo=UTC))
    seals = table.clipped([SealRef(7, "NBX0001", date(2026, 3, 2), 2, 8640, "ab" * 32)], *window)

    async def refs() -> list[SealRef]:
        return seals

    extra = [Table("Locais", [Column("Local", "name")], [{"name": "Escola"}, {"name": "Garagem"}])]
    return _doc(rows(), drawing=drawing, seals=refs, extra=lambda: extra, coat_of_arms_path=png, notes=["nota"])


async def test_a_pdf_drawn_in_the_process_pool_is_the_same_file(tmp_path: Path, monkeypatch: Any) -> None:
    from telemetria.jobs import Jobs

    png = tmp_path / "brasao.png"
    Image.new("RGB", (60, 80), (30, 90, 160)).save(png, "PNG")
    here = io.BytesIO()
    await pdf.render(_full_doc(png), here)

    class NotHere:
        def __init__(self, *_: Any) -> None:
            raise AssertionError("the PDF was drawn in the service's process")

    monkeypatch.setattr(pdf, "_Writer", NotHere)  # this process may only read the rows and write the plan
    jobs = Jobs(workers=1, queue=0, per_user=1)
    try:
        async with jobs.turn("u"):
            there = b"".join([c async for c in pdf.response(_full_doc(png), jobs).body_iterator])  # type: ignore[misc]
    finally:
        jobs.close()
    assert there == here.getvalue()
    assert len(PdfReader(io.BytesIO(there)).pages) >= 5
