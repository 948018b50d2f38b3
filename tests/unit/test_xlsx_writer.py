"""The XLSX writer (reports/output/xlsx.py) without a database: typed cells, number formats, text that looks like a
formula stays text, the sheets and their names, the seals, and the file streamed then deleted."""

from __future__ import annotations

import asyncio
import io
import tempfile
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import openpyxl
import pytest

from telemetria.reports.output import xlsx
from telemetria.reports.output.csv import (
    BOOL,
    COORD,
    DATE,
    DATETIME,
    HMS,
    INT,
    KM,
    KMH,
    PCT,
    SECONDS,
    SHARE,
    TEXT,
    Column,
    decimal,
)  # fmt: skip
from telemetria.reports.output.document import Document, Table
from telemetria.seals import table
from telemetria.seals.model import SealRef

TZ = ZoneInfo("America/Porto_Velho")
T = datetime(2026, 3, 2, 14, 5, 9, 700_000, tzinfo=UTC)  # 10:05:09.7 in Porto Velho
COLUMNS = [
    Column("Veículo (id)", "vehicle_id", INT),
    Column("Placa", "plate"),
    Column("Data e hora", "time", DATETIME),
    Column("Data", "day", DATE),
    Column("Latitude", "lat", COORD),
    Column("Km", "km", KM),
    Column("Velocidade (km/h)", "kmh", KMH),
    Column("Excesso (%)", "pct", PCT),
    Column("Cobertura (%)", "share", SHARE),
    Column("Duração", "dur", HMS),
    Column("Segundos", "secs", SECONDS),
    Column("Usada", "used", BOOL),
    Column("Valor (R$)", "money", decimal(2)),
    Column("Local", "place", TEXT),
]


def row(**over: Any) -> dict[str, Any]:
    base = {
        "vehicle_id": 7, "plate": "NDK1A23", "time": T, "day": date(2026, 3, 2), "lat": -10.4312345, "km": 12.3456,
        "kmh": 41.25, "pct": 12.5, "share": 0.975, "dur": timedelta(hours=26, minutes=3, seconds=4), "secs": 61.4,
        "used": True, "money": Decimal("1234.56"), "place": "=HYPERLINK(\"http://x\")",
    }  # fmt: skip
    return {**base, **over}


def doc(rows: Any, **kw: Any) -> Document:
    return Document(
        kind="km", title="Km rodados", filename="km_rodados_2026-03-02", tz=TZ,
        query=[("Período", "02/03/2026 a 02/03/2026"), ("Agrupamento", "por veículo")],
        generated_by="maria (monitor)", generated_at=T, tables=[Table("Km rodados", COLUMNS, rows)], **kw,
    )  # fmt: skip


def build(d: Document) -> openpyxl.Workbook:
    async def run() -> bytes:
        return b"".join([c async for c in xlsx.chunks(d, chunk_bytes=4096)])

    return openpyxl.load_workbook(io.BytesIO(asyncio.run(run())))


def test_cells_are_typed_with_the_kinds_number_formats() -> None:
    wb = build(doc([row(), row(vehicle_id=None, km=float("nan"), dur=None, used=False)]))
    assert wb.sheetnames == ["Consulta", "Km rodados"]
    ws = wb["Km rodados"]
    head = [c.value for c in ws[1]]
    assert head[2] == "Data e hora (America/Porto_Velho)" and head[0] == "Veículo (id)" and len(head) == 14
    cells = ws[2]
    values = [c.value for c in cells]
    assert values[0] == 7 and cells[0].number_format == "0"
    assert values[1] == "NDK1A23" and cells[1].data_type == "s"
    assert values[2] == datetime(2026, 3, 2, 10, 5, 9)  # local, naive, truncated to the second as in the CSV
    assert cells[2].number_format == "dd/mm/yyyy hh:mm:ss"
    assert values[3] == datetime(2026, 3, 2) and cells[3].number_format == "dd/mm/yyyy"
    assert values[4] == pytest.approx(-10.4312345) and cells[4].number_format == "0.000000"
    assert values[5] == pytest.approx(12.3456) and cells[5].number_format == "#,##0.000"  # km grouped
    assert cells[6].number_format == "0.0" and cells[7].number_format == "0.0"
    assert values[8] == pytest.approx(0.975) and cells[8].number_format == "0.0%"
    assert values[9] == timedelta(hours=26, minutes=3, seconds=4) and cells[9].number_format == "[h]:mm:ss"
    assert values[10] == 61 and cells[10].number_format == "0"
    assert values[11] == "Sim"
    assert values[12] == pytest.approx(1234.56) and cells[12].number_format == "#,##0.00"
    second = [c.value for c in ws[3]]
    assert second[0] is None and second[5] is None and second[9] is None and second[11] == "Não"


def test_text_that_looks_like_a_formula_stays_text() -> None:
    texts = ["=1+1", "+55 69", "-3", "@SUM(A1)", "http://example.org", "1234", "0012"]
    wb = build(doc([row(place=t, plate=t) for t in texts]))
    ws = wb["Km rodados"]
    for n, t in enumerate(texts, start=2):
        for col in (2, 14):
            cell = ws.cell(n, col)
            assert cell.value == t and cell.data_type == "s", (t, cell.data_type)
    assert ws.cell(2, 14).hyperlink is None


def test_header_row_frozen_filtered_and_columns_sized() -> None:
    ws = build(doc([row(place="x" * 200)] * 3))["Km rodados"]
    assert ws.freeze_panes == "A2"
    assert ws.auto_filter.ref == "A1:N4"
    assert ws.column_dimensions["C"].width >= 19  # a date-time fits
    assert 40 < ws.column_dimensions["N"].width <= xlsx.MAX_WIDTH + 3  # long text: wide, but capped


def test_the_query_sheet_comes_first() -> None:
    ws = build(doc([row()], notes=["km pela rota"]))["Consulta"]
    lines = [(r[0].value, r[1].value if len(r) > 1 else None) for r in ws.iter_rows()]
    assert lines[0][0] == "Km rodados"
    assert ("Período", "02/03/2026 a 02/03/2026") in lines and ("Agrupamento", "por veículo") in lines
    assert ("Gerado por", "maria (monitor)") in lines
    assert ("Gerado em (America/Porto_Velho)", datetime(2026, 3, 2, 10, 5, 9)) in lines
    assert ("Nota", "km pela rota") in lines


def test_rows_may_be_an_async_iterable_with_totals_and_extra_tables() -> None:
    seen: list[int] = []

    async def rows() -> AsyncIterator[dict[str, Any]]:
        for i in range(5_000):  # more than a batch
            seen.append(i)
            yield row(vehicle_id=i)

    def totals() -> list[dict[str, Any]]:
        return [row(vehicle_id=None, plate="TOTAL", km=float(len(seen)))]

    extra = [Table("Totais", COLUMNS[:2], [{"vehicle_id": 1, "plate": "A"}]), Table("Km rodados", COLUMNS[:1], [])]
    d = doc(rows())
    d.tables[0].totals = totals
    d.extra = lambda: extra
    wb = build(d)
    assert wb.sheetnames == ["Consulta", "Km rodados", "Totais", "Km rodados (2)"]
    ws = wb["Km rodados"]
    assert ws.max_row == 1 + 5_000 + 1
    assert [c.value for c in ws[ws.max_row]][:2] == [None, "TOTAL"] and ws.cell(ws.max_row, 6).value == 5_000
    assert [c.value for c in wb["Totais"][2]] == [1, "A"]


def test_seals_go_to_the_query_sheet_and_their_own_sheet() -> None:
    window = (datetime(2026, 3, 2, 12, tzinfo=UTC), datetime(2026, 3, 5, tzinfo=UTC))
    refs = table.clipped([SealRef(7, "NDK1A23", date(2026, 3, 2), 2, 1440, "ab" * 32)], *window)

    async def seals() -> list[SealRef]:
        return refs

    wb = build(doc([row()], seals=seals))
    assert wb.sheetnames == ["Consulta", "Km rodados", "Selos"]
    ws = wb["Selos"]
    assert [c.value for c in ws[1]] == xlsx.SEAL_HEADERS
    assert [c.value for c in ws[2]] == [
        7,
        "NDK1A23",
        datetime(2026, 3, 2),
        2,
        1440,
        "ab" * 32,
        "2026-03-02T12:00:00Z",
        "2026-03-03T04:00:00Z",
    ]
    query = [[c.value for c in r] for r in wb["Consulta"].iter_rows()]
    at = next(i for i, r in enumerate(query) if r[0] == "Selos diários")
    assert query[at + 1][:8] == xlsx.SEAL_HEADERS and query[at + 2][5] == "ab" * 32


def test_no_seals_no_sheet() -> None:
    async def seals() -> list[SealRef]:
        return []

    assert build(doc([row()], seals=seals)).sheetnames == ["Consulta", "Km rodados"]


@pytest.mark.parametrize(
    ("title", "name"),
    [
        ("Regularidade de transmissão", "Regularidade de transmissão"),
        ("Um título muito longo para uma aba do Excel", "Um título muito longo para uma "),
        ("a/b: c*d?[e]\\", "a-b- c-d--e--"),
        ("", "Tabela"),
    ],
)
def test_sheet_names_are_valid(title: str, name: str) -> None:
    got = xlsx.sheet_name(title, set())
    assert got == name and len(got) <= 31


def test_sheet_names_are_unique_ignoring_case() -> None:
    used: set[str] = set()
    names = [xlsx.sheet_name(t, used) for t in ["Consulta", "consulta", "X" * 40, "X" * 40]]
    assert names == ["Consulta", "consulta (2)", "X" * 31, "X" * 27 + " (2)"]


def spy_mkdtemp(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The directories the writer makes, as it makes them."""
    made: list[str] = []
    real = tempfile.mkdtemp

    def spy(*a: Any, **kw: Any) -> str:
        made.append(real(*a, **kw))
        return made[-1]

    monkeypatch.setattr(xlsx.tempfile, "mkdtemp", spy)
    return made


def test_the_temporary_file_is_deleted(monkeypatch: pytest.MonkeyPatch) -> None:
    made = spy_mkdtemp(monkeypatch)
    build(doc([row()]))
    assert made and not Path(made[0]).exists()


def test_the_response_names_the_file_and_type() -> None:
    r = xlsx.response(doc([row()]))
    assert r.media_type == xlsx.MEDIA_TYPE
    assert r.headers["content-disposition"] == 'attachment; filename="km_rodados_2026-03-02.xlsx"'


def test_a_negative_duration_is_the_csvs_text() -> None:
    assert xlsx.cell_of(HMS, -75, TZ) == xlsx.Cell("string", "-00:01:15")
    assert xlsx.cell_of(KM, float("inf"), TZ) is xlsx.BLANK
    assert xlsx.cell_of(DATE, datetime(2026, 3, 2, 2, tzinfo=UTC), TZ).value == datetime(2026, 3, 1)


def test_a_failed_export_leaves_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    made = spy_mkdtemp(monkeypatch)

    def broken() -> Any:
        yield row()
        raise RuntimeError("the database went away")

    with pytest.raises(RuntimeError, match="went away"):
        build(doc(broken()))
    assert made and not Path(made[0]).exists()


def test_report_header_keys_read_in_portuguese() -> None:
    from telemetria.reports.output import files

    assert files.label("by") == "Agrupamento" and files.label("max_gap_s") == "max gap s"
    assert files.VALUES[("by", "day")] == "por veículo e dia"


def test_the_schedules_points_table_names_each_runs_vehicle_day_and_route() -> None:
    from telemetria.reports.kinds import schedule

    runs = [{"vehicle_id": 1, "plate": "A", "date": date(2026, 3, 2), "route_code": "R1", "made": True,
             "points": [{"seq": 1, "name": "Escola"}, {"seq": 2, "name": "Garagem"}]}]  # fmt: skip
    got = schedule.points(runs)
    assert [(p["plate"], p["route_code"], p["seq"]) for p in got] == [("A", "R1", 1), ("A", "R1", 2)]
    assert "made" not in got[0]


def test_a_sheet_refuses_rows_past_its_last_rather_than_drop_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(xlsx, "MAX_ROW", 3)
    book = xlsx.Book(tmp_path / "b.xlsx", tmp_path)
    sheet = xlsx.Sheet(book, book.sheet("T"), [Column("N", "n", INT)], UTC)
    sheet.write([{"n": i} for i in range(3)])
    with pytest.raises(ValueError, match="more than 3 rows"):
        sheet.write([{"n": 3}])
    book.close()
