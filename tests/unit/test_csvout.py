"""pt-BR CSV: what Excel and LibreOffice (pt-BR) need, formula neutralization, and constant memory while streaming."""

from __future__ import annotations

import csv
import io
import math
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from telemetria.reports.output.csv import (
    BOOL,
    COORD,
    DATE,
    DATETIME,
    HMS,
    INT,
    SECONDS,
    TEXT,
    Column,
    ColumnSpec,
    content_disposition,
    csv_chunks,
    decimal,
    export_filename,
)
from tests.unit.csvfile import iter_csv_chunks

PVH = ZoneInfo("America/Porto_Velho")
BOM = b"\xef\xbb\xbf"


def render(columns: list[ColumnSpec], rows: list[Any], chunk_chars: int = 64 * 1024) -> str:
    data = b"".join(iter_csv_chunks(columns, rows, PVH, chunk_chars))
    assert data.startswith(BOM)
    return data[len(BOM) :].decode("utf-8")


def cells(text: str) -> list[list[str]]:
    """Parse back the way a strict RFC 4180 reader does."""
    return list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))


def one(kind: Any, value: Any) -> str:
    """The cell written for `value` in a one-column file."""
    return cells(render([("X", "x", kind)], [{"x": value}]))[1][0]


def test_bom_once_semicolon_and_crlf() -> None:
    cols: list[ColumnSpec] = [("Placa", "plate", TEXT), ("Km", "km", decimal(1))]
    rows = [{"plate": f"NBX{i:04d}", "km": i / 3} for i in range(5000)]
    chunks = list(iter_csv_chunks(cols, rows, PVH, chunk_chars=1000))
    assert len(chunks) > 10
    data = b"".join(chunks)
    assert data.count(BOM) == 1 and data.startswith(BOM)
    assert all(BOM not in c for c in chunks[1:])
    text = data[3:].decode()
    assert text.count("\r\n") == 5001 and text.count("\n") == 5001
    assert text.splitlines()[0] == "Placa;Km"
    assert text.splitlines()[2] == "NBX0001;0,3"


def test_quoting_of_separator_quotes_and_newlines() -> None:
    values = ["a;b", 'diz "oi"', "linha1\nlinha2", "cr\rhere", "simples"]
    text = render([("Obs", "x", TEXT)], [{"x": v} for v in values])
    assert text.split("\r\n")[1:4] == ['"a;b"', '"diz ""oi"""', '"linha1\nlinha2"']
    assert "\r\nsimples\r\n" in text
    assert [r[0] for r in cells(text)[1:]] == values


def test_numbers_use_decimal_comma_and_no_separators() -> None:
    assert one(decimal(1), 1234.5) == "1234,5"
    assert one(decimal(1), -0.0) == "0,0"
    assert one(decimal(2), -0.001) == "0,00"
    assert one(decimal(2), Decimal("2.675")) == "2,68"
    assert one(decimal(0), 1234567.4) == "1234567"
    assert one(INT, 12345678901234) == "12345678901234"
    assert one(INT, 7.0) == "7"
    assert one(INT, np.int64(5)) == "5"
    assert one(COORD, -10.4123449) == "-10,412345"
    with pytest.raises(ValueError, match="not an integer"):
        one(INT, 7.5)


def test_negative_numbers_stay_numbers() -> None:
    row = {"lat": -10.412345, "lon": -62.5, "s": -3}
    text = render([("Lat", "lat", COORD), ("Lon", "lon", COORD), ("Saldo", "s", INT)], [row])
    assert text.splitlines()[1] == "-10,412345;-62,500000;-3"  # no quote, no apostrophe


def test_formula_injection_is_neutralized_in_text_only() -> None:
    for value, expected in [
        ('=HYPERLINK("http://x";"clique")', '\'=HYPERLINK("http://x";"clique")'),
        ("+1", "'+1"),
        ("@SUM(A1:A2)", "'@SUM(A1:A2)"),
        ("\tTAB", "'\tTAB"),
        ("\rCR", "'\rCR"),
        ("-x", "'-x"),
        ("-5", "'-5"),  # user text that looks like a number is still text
        ("Escola Municipal", "Escola Municipal"),
        ("a=b", "a=b"),
    ]:
        assert one(TEXT, value) == expected, value
    assert one(TEXT, -5) == "'-5"  # a number in a text column is text
    assert one(COORD, -10.5) == "-10,500000"
    assert one(INT, -5) == "-5"


def test_none_and_nan_are_empty() -> None:
    cols: list[ColumnSpec] = [
        ("T", "a", TEXT),
        ("D", "a", decimal(2)),
        ("I", "a", INT),
        ("C", "b", COORD),
        ("H", "a", DATETIME),
        ("S", "b", SECONDS),
        ("M", "b", HMS),
        ("B", "a", BOOL),
        ("F", "c", decimal(1)),
    ]
    text = render(cols, [{"a": None, "b": math.nan, "c": np.float32("nan")}])
    assert text.splitlines()[1] == ";;;;;;;;"


def test_datetimes_in_the_report_zone_and_the_header_says_which() -> None:
    cols: list[ColumnSpec] = [("Início", "t", DATETIME), ("Dia", "t", DATE), ("Data", "d", DATE)]
    rows = [{"t": datetime(2026, 3, 2, 11, 0, tzinfo=UTC), "d": date(2026, 12, 31)}]
    header, line = cells(render(cols, rows))
    assert header == ["Início (America/Porto_Velho)", "Dia", "Data"]
    assert line == ["02/03/2026 07:00:00", "02/03/2026", "31/12/2026"]
    # 02:00 UTC is still the previous day in Porto Velho
    assert one(DATE, datetime(2026, 3, 2, 2, 0, tzinfo=UTC)) == "01/03/2026"
    with pytest.raises(ValueError, match="naive"):
        one(DATETIME, datetime(2026, 3, 2, 11, 0))


def test_bool_and_durations() -> None:
    assert one(BOOL, True) == "Sim" and one(BOOL, False) == "Não"
    d = timedelta(hours=27, minutes=5, seconds=9.6)
    assert one(SECONDS, d) == "97510"
    assert one(HMS, d) == "27:05:10"
    assert one(HMS, 59) == "00:00:59"
    assert one(HMS, -61.0) == "-00:01:01"


@dataclass(frozen=True)
class Trip:
    vehicle: str
    start: datetime
    km: float
    lat: float


def test_round_trip_through_csv_module_with_objects_and_getters() -> None:
    t0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
    trips = [
        Trip('Ônibus "7"; rota\nnorte', t0, 12.25, -10.4),
        Trip("=cmd|' /C calc'!A0", t0 + timedelta(hours=1), 0.0, -9.0),
    ]
    cols: list[ColumnSpec] = [
        Column("Veículo", "vehicle"),
        Column("Início", "start", DATETIME),
        ("Km", "km", decimal(2)),
        ("Lat", "lat", COORD),
        ("Km×2", lambda t: t.km * 2, decimal(1)),
    ]
    rows = cells(render(cols, trips))
    assert rows == [
        ["Veículo", "Início (America/Porto_Velho)", "Km", "Lat", "Km×2"],
        ['Ônibus "7"; rota\nnorte', "02/03/2026 07:00:00", "12,25", "-10,400000", "24,5"],
        ["'=cmd|' /C calc'!A0", "02/03/2026 08:00:00", "0,00", "-9,000000", "0,0"],
    ]


def test_header_starting_with_id_is_quoted_against_sylk() -> None:
    assert render([("ID", "x", INT)], []) == '"ID"\r\n'


def test_missing_key_raises_instead_of_blank_column() -> None:
    with pytest.raises(KeyError):
        render([("X", "typo", TEXT)], [{"x": 1}])


async def test_async_rows_give_the_same_bytes() -> None:
    cols: list[ColumnSpec] = [("N", "n", INT), ("Texto", "s", TEXT)]
    rows = [{"n": i, "s": f"-{i};"} for i in range(3000)]

    async def agen() -> AsyncIterator[dict[str, Any]]:
        for r in rows:
            yield r

    chunks = [c async for c in csv_chunks(cols, agen(), PVH, chunk_chars=4096)]
    assert len(chunks) > 5
    assert b"".join(chunks) == b"".join(iter_csv_chunks(cols, rows, PVH))
    assert b"".join([c async for c in csv_chunks(cols, rows, PVH)]) == b"".join(chunks)


def _many(n: int) -> Iterator[dict[str, Any]]:
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    for i in range(n):
        yield {"v": f"NBX{i % 50:04d}", "t": t0 + timedelta(seconds=30 * i), "lat": -10.4 - i * 1e-6, "km": i * 0.01}


async def _peak_bytes(n: int) -> tuple[int, int]:
    """Peak traced bytes and file size while streaming n rows through csv_chunks (the StreamingResponse path)."""
    cols: list[ColumnSpec] = [
        ("Placa", "v", TEXT),
        ("Hora", "t", DATETIME),
        ("Lat", "lat", COORD),
        ("Km", "km", decimal(2)),
    ]
    tracemalloc.start()
    try:
        total = 0
        async for chunk in csv_chunks(cols, _many(n), PVH):
            total += len(chunk)
        return tracemalloc.get_traced_memory()[1], total
    finally:
        tracemalloc.stop()


async def test_streaming_memory_is_flat_in_the_number_of_rows() -> None:
    # 100k rows (~4.7 MB of CSV) rather than 1M to keep the suite fast under tracemalloc (~3x slower; 1M rows
    # take ~5 s without it); the comparison with 10k rows is what shows that memory does not grow with the rows.
    small_peak, _ = await _peak_bytes(10_000)
    peak, size = await _peak_bytes(100_000)
    assert size > 4_500_000
    assert peak < 1_000_000, peak  # a 64 KiB chunk, its str parts and the encoded bytes
    assert peak < small_peak + 100_000, (small_peak, peak)


def test_filenames_are_ascii_safe() -> None:
    assert export_filename("km", date(2026, 3, 1), date(2026, 3, 31)) == "km_2026-03-01_2026-03-31.csv"
    assert export_filename("Relatório de março/abril") == "Relatorio_de_marco_abril.csv"
    assert export_filename("trajeto", date(2026, 3, 1), ext="gpx") == "trajeto_2026-03-01.gpx"
    minutes = export_filename("trajeto", "2026-03-01T08:00", "2026-03-01T11:59")
    assert minutes == "trajeto_2026-03-01T0800_2026-03-01T1159.csv"
    assert content_disposition('a"b;c\r\n.csv') == 'attachment; filename="a_b_c_.csv"'
    assert content_disposition("Ônibus.csv") == 'attachment; filename="Onibus.csv"'
