"""Compare an exported workbook's data sheet with the CSV of the same query, cell by cell (tests only).

Each XLSX cell is turned back into the value the CSV was written from (a naive local datetime into an aware one in
the zone, a duration into seconds) and formatted by its column's Kind: that must be the CSV's cell exactly.
Numeric kinds must be numeric cells, date-times Excel dates.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import openpyxl

from telemetria.reports.output import xlsx
from telemetria.reports.output.csv import Column

LOCAL = ZoneInfo("America/Porto_Velho")


def csv_rows(content: bytes) -> list[list[str]]:
    """The CSV's header and rows, up to its first empty line (the track's seals table follows one)."""
    out = []
    for r in csv.reader(io.StringIO(content.decode("utf-8-sig")), delimiter=";"):
        if not r:
            break
        out.append(r)
    return out


def workbook(content: bytes) -> openpyxl.Workbook:
    return openpyxl.load_workbook(io.BytesIO(content))


def _as_csv(column: Column, cell: Any, tz: ZoneInfo) -> str:
    v, kind = cell.value, column.kind
    if v is None:
        return ""
    name = kind.name
    if name == "bool" or isinstance(v, str):
        assert cell.data_type == "s", (column.header, v)
        return v if name == "bool" or not kind.text else kind.fmt(v, tz)
    if name in ("datetime", "date"):
        assert isinstance(v, datetime), (column.header, v)
        return kind.fmt(v.replace(tzinfo=tz), tz)
    if name == "hms":
        assert isinstance(v, timedelta), (column.header, v)
        return kind.fmt(v.total_seconds(), tz)
    assert isinstance(v, int | float) and not isinstance(v, bool), (column.header, v)
    assert xlsx.number_format(kind) == cell.number_format or name == "seconds", (column.header, cell.number_format)
    return kind.fmt(v, tz)


def same_rows(content_xlsx: bytes, content_csv: bytes, columns: Sequence[Column], sheet: int = 1) -> int:
    """Assert that the workbook's data sheet holds the CSV's header and rows; the number of data rows."""
    book = workbook(content_xlsx)
    assert book.sheetnames[0] == "Consulta", book.sheetnames
    ws = book.worksheets[sheet]
    assert ws.freeze_panes == "A2"
    expected = csv_rows(content_csv)
    got = list(ws.iter_rows())
    header = [c.value for c in got[0]]
    assert header == [h.strip('"') for h in expected[0]], (header, expected[0])
    assert len(got) == len(expected), (len(got), len(expected))
    assert len(columns) == len(header)
    for n, (cells, line) in enumerate(zip(got[1:], expected[1:], strict=True), start=2):
        shown = [_as_csv(col, cell, LOCAL) for col, cell in zip(columns, cells, strict=True)]
        assert shown == line, (n, [(h, a, b) for h, a, b in zip(header, shown, line, strict=True) if a != b])
    return len(got) - 1
