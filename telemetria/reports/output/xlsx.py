"""A Document as an XLSX workbook, written by XlsxWriter in constant-memory mode to a temporary file, then streamed.

Sheets: "Consulta" (the title, the query, who and when, the notes, the seals), the data sheet (tables[0]: the CSV's
header texts and rows, totals included), the extra tables, and "Selos" when the document names seals.

Decisions (docs/architecture.md, "Why XlsxWriter"):
- Cells are typed by their column's Kind (cell_of): numbers are numbers (the kind's number format shows as many
  decimals as the spec asks, km `#,##0.000`: Excel writes its own decimal comma and thousands separator, issue
  36), date-times are naive local datetimes in the document's zone shown `dd/mm/yyyy hh:mm:ss` (truncated to the
  second, as the CSV), dates `dd/mm/yyyy`, durations (HMS) Excel durations `[h]:mm:ss`, shares percentages `0.0%`.
- Booleans are the CSV's words "Sim"/"Não" as text: the same in every spreadsheet's language, and filterable.
- Text stays text: cells are written with write_string, never write(), so `=1+1` is a string and no formula,
  hyperlink or number is ever guessed from user text (the CSV's leading `'` is not needed here).
- Memory stays flat: constant_memory flushes each row to a temporary file as the next begins; the rows (an async
  iterable computed while they stream, the track's) are consumed in batches written on a worker thread, never all
  held. The finished file is read back in chunks and deleted with its directory.
"""

from __future__ import annotations

import asyncio
import math
import re
import shutil
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from decimal import Decimal
from pathlib import Path
from typing import Any

import xlsxwriter
from fastapi.responses import StreamingResponse
from xlsxwriter.format import Format
from xlsxwriter.worksheet import Worksheet

from telemetria.reports.output import csv
from telemetria.reports.output.csv import Column, Kind, as_async
from telemetria.reports.output.document import Document, Table
from telemetria.seals import table as seal_table
from telemetria.seals.model import SealRef

MEDIA_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
CHUNK_BYTES = 64 * 1024
BATCH_ROWS = 2_000  # rows handed to the writer thread at a time
MAX_SHEET_NAME = 31  # Excel's limit
MAX_ROW = 1_048_575  # the last row a sheet has (0-based: the header is row 0)
MAX_WIDTH = 60  # characters: a column is never drawn wider (long text still fits in its cell)
MAX_TEXT = 32_767  # characters Excel keeps in a cell
SEAL_HEADERS = list(seal_table.COLUMNS)  # the seals table every track export ends with (seals/table.py)
DATETIME_FORMAT = "dd/mm/yyyy hh:mm:ss"
DATE_FORMAT = "dd/mm/yyyy"

# The Excel number format of each numeric kind (csv.py's Kind.name); decimal(n) kinds get "0.0…" with n places.
NUMBER_FORMATS = {
    "int": "0", "seconds": "0", "count": "#,##0", "m": "#,##0", "deg": "0",
    "km": "#,##0.000", "km_step": "#,##0.000", "kmh": "0.0", "pct": "0.0", "min": "0.0", "coord": "0.000000",
    "share": "0.0%",
}  # fmt: skip
WIDTHS = {"datetime": 19, "date": 10, "hms": 10, "coord": 11}  # characters, for the kinds whose cells are fixed
_BAD_SHEET_CHARS = re.compile(r"[\[\]:*?/\\]")


@dataclass(frozen=True, slots=True)
class Cell:
    """What one value becomes: its type ("number", "datetime", "string", "blank") and the value to write."""

    type: str
    value: Any = None
    style: str = ""  # the Excel number format ("" for text)


BLANK = Cell("blank")


def _decimal_places(name: str) -> int | None:
    m = re.fullmatch(r"decimal\((\d+)\)", name)
    return int(m.group(1)) if m else None


def number_format(kind: Kind) -> str | None:
    """The Excel number format of a numeric kind, None for the others."""
    if kind.name in NUMBER_FORMATS:
        return NUMBER_FORMATS[kind.name]
    places = _decimal_places(kind.name)
    if places is not None:
        return "#,##0." + "0" * places if places else "0"  # km, R$: thousands grouped (Excel's own separator)
    return None


def _number(value: Any) -> float | int | None:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal):
        return None
    return value if isinstance(value, int) else float(value)


def _naive_local(value: datetime, tz: tzinfo) -> datetime:
    if value.tzinfo is None:
        raise ValueError(f"naive datetime in a report: {value!r}")
    return value.astimezone(tz).replace(tzinfo=None, microsecond=0)  # the CSV shows whole seconds too


def _text(value: Any) -> Cell:
    s = value if isinstance(value, str) else str(value)
    return Cell("string", s[:MAX_TEXT])


def cell_of(kind: Kind, value: Any, tz: tzinfo) -> Cell:
    """The typed cell of one value of a column of `kind`, in zone `tz`."""
    if value is None:
        return BLANK
    name = kind.name
    if kind.text or name == "bool":
        return _text(kind.fmt(value, tz)) if name == "bool" else _text(value)
    if name == "datetime" and isinstance(value, datetime):
        return Cell("datetime", _naive_local(value, tz), DATETIME_FORMAT)
    if name == "date" and isinstance(value, date):
        d = _naive_local(value, tz).date() if isinstance(value, datetime) else value
        return Cell("datetime", datetime(d.year, d.month, d.day), DATE_FORMAT)
    if name in ("hms", "seconds"):
        s = value.total_seconds() if isinstance(value, timedelta) else value
        if _number(s) is None or not math.isfinite(s):
            return BLANK if _number(s) is not None else _text(kind.fmt(value, tz))
        if name == "seconds":
            return Cell("number", round(s), "0")
        if s < 0:  # Excel cannot show a negative duration: the CSV's text then
            return _text(kind.fmt(value, tz))
        return Cell("number", round(s) / 86400, "[h]:mm:ss")
    style = number_format(kind)
    n = _number(value)
    if style is not None and n is not None:
        return Cell("number", n, style) if math.isfinite(n) else BLANK
    text = kind.fmt(value, tz)  # an unknown kind, or a value that is not a number: what the CSV shows
    return _text(text) if text else BLANK


def headers_of(columns: Sequence[Column], tz: tzinfo) -> list[str]:
    """The CSV's header texts, unquoted (date-time columns name the zone, as csv.CsvFormatter.header says)."""
    zone = str(getattr(tz, "key", tz))
    return [f"{c.header} ({zone})" if c.kind.zoned else c.header for c in columns]


def sheet_name(title: str, used: set[str]) -> str:
    """A valid, unique sheet name from a title: no `[]:*?/\\`, at most 31 characters, unique ignoring case."""
    base = _BAD_SHEET_CHARS.sub("-", title).strip("'").strip() or "Tabela"
    base = base[:MAX_SHEET_NAME]
    name, n = base, 2
    while name.lower() in used:
        suffix = f" ({n})"
        name, n = base[: MAX_SHEET_NAME - len(suffix)] + suffix, n + 1
    used.add(name.lower())
    return name


def seal_rows(refs: Iterable[SealRef]) -> list[list[Any]]:
    """The "Selos" rows, as seals/table.py writes the seals table (refs already clipped to the export's window),
    the day a date cell."""
    out = []
    for ref in refs:
        cells = seal_table.cells(ref)
        day = cells["day"]
        cells["day"] = datetime(day.year, day.month, day.day)
        out.append([cells[k] for k in seal_table.KEYS])
    return out


Emit = Callable[[int, int, Any], None]  # writes one non-None value at (row, column)
EXCEL_EPOCH = datetime(1899, 12, 30)  # serial 0 of Excel's 1900 date system (right from March 1900 on)


def _serial(naive: datetime) -> float:
    return (naive - EXCEL_EPOCH) / timedelta(days=1)


class Sheet:
    """One table's worksheet: the header row frozen and filtered, typed rows, widths from what was written.

    Each column gets an emitter made once for its kind: the common kinds write their cell directly (the same cell
    cell_of gives, its serial computed here for dates), the others go through cell_of. This is the hot loop of a
    100,000-row export (bench/xlsx.py).
    """

    def __init__(self, book: Book, ws: Worksheet, columns: Sequence[Column], tz: tzinfo) -> None:
        self.book, self.ws, self.tz = book, ws, tz
        kinds = [c.kind for c in columns]
        self.headers = headers_of(columns, tz)
        self.widths = [max(len(h), WIDTHS.get(k.name, 8)) for h, k in zip(self.headers, kinds, strict=True)]
        self.cells = [(j, csv._getter(c.get), self._emitter(j, c.kind)) for j, c in enumerate(columns)]
        self.row = 0
        for j, h in enumerate(self.headers):
            ws.write_string(0, j, h, book.style("header"))
        ws.freeze_panes(1, 0)

    def _emitter(self, j: int, kind: Kind) -> Emit:
        ws, tz, widths, book = self.ws, self.tz, self.widths, self.book
        number, string = ws.write_number, ws.write_string
        style = number_format(kind)
        if kind.text:

            def text(i: int, j: int, v: Any) -> None:
                s = (v if isinstance(v, str) else str(v))[:MAX_TEXT]
                string(i, j, s)
                if len(s) > widths[j]:
                    widths[j] = len(s)

            return text
        if kind.name == "datetime":
            fmt = book.style(DATETIME_FORMAT)

            def when(i: int, j: int, v: Any) -> None:
                if isinstance(v, datetime):
                    number(i, j, _serial(_naive_local(v, tz)), fmt)
                else:
                    book.put(ws, i, j, cell_of(kind, v, tz), widths)

            return when
        if style is not None and kind.name != "seconds":
            fmt = book.style(style)

            def num(i: int, j: int, v: Any) -> None:
                if type(v) is float or type(v) is int:
                    if math.isfinite(v):
                        number(i, j, v, fmt)
                else:
                    book.put(ws, i, j, cell_of(kind, v, tz), widths)

            return num
        return lambda i, j, v: book.put(ws, i, j, cell_of(kind, v, tz), widths)

    def write(self, rows: Iterable[Any]) -> None:
        """Write rows (dicts or records, as the CSV takes them) after those already written."""
        cells = self.cells
        i = self.row
        for row in rows:
            i += 1
            if i > MAX_ROW:  # XlsxWriter would return -1 and drop the cell: a file missing rows must not be sent
                raise ValueError(f"more than {MAX_ROW} rows for one sheet")
            for j, get, emit in cells:
                v = get(row)
                if v is not None:
                    emit(i, j, v)
        self.row = i

    def finish(self) -> None:
        for j, w in enumerate(self.widths):
            self.ws.set_column(j, j, min(w, MAX_WIDTH) + 2)
        if self.headers:
            self.ws.autofilter(0, 0, self.row, len(self.headers) - 1)


class Book:
    """The workbook being written; its formats made once."""

    def __init__(self, path: Path, tmpdir: Path) -> None:
        self.wb = xlsxwriter.Workbook(
            str(path),
            {
                "constant_memory": True, "tmpdir": str(tmpdir), "strings_to_formulas": False,
                "strings_to_urls": False, "strings_to_numbers": False, "default_date_format": DATETIME_FORMAT,
            },
        )  # fmt: skip
        self._styles: dict[str, Format] = {}
        self.used: set[str] = set()

    def style(self, name: str) -> Format:
        if name not in self._styles:
            spec: dict[str, Any] = {"bold": True} if name in ("header", "title") else {"num_format": name}
            if name == "title":
                spec["font_size"] = 14
            self._styles[name] = self.wb.add_format(spec)
        return self._styles[name]

    def put(self, ws: Worksheet, i: int, j: int, cell: Cell, widths: list[int] | None = None) -> None:
        if cell.type == "blank":
            return
        if cell.type == "string":
            ws.write_string(i, j, cell.value)
            if widths is not None:
                widths[j] = max(widths[j], len(cell.value))
        elif cell.type == "number":
            ws.write_number(i, j, cell.value, self.style(cell.style))
            if widths is not None:
                widths[j] = max(widths[j], len(f"{cell.value:.6g}") + 2)
        else:
            ws.write_datetime(i, j, cell.value, self.style(cell.style))

    def sheet(self, title: str) -> Worksheet:
        return self.wb.add_worksheet(sheet_name(title, self.used))

    def close(self) -> None:
        self.wb.close()


class Query:
    """The "Consulta" sheet: label and value rows; the seals are appended once known."""

    def __init__(self, book: Book, doc: Document) -> None:
        self.book, self.doc = book, doc
        self.ws = book.sheet("Consulta")
        self.ws.set_column(0, 0, 28)
        self.ws.set_column(1, 1, 90)
        self.ws.write_string(0, 0, doc.title, book.style("title"))
        self.row = 1
        for label, value in doc.query:
            self.line(label, value)
        self.line("Gerado por", doc.generated_by)
        when = _naive_local(doc.generated_at, doc.tz)
        self.row += 1
        self.ws.write_string(self.row, 0, f"Gerado em ({getattr(doc.tz, 'key', doc.tz)})", book.style("header"))
        self.ws.write_datetime(self.row, 1, when, book.style(DATETIME_FORMAT))
        for note in doc.notes:
            self.line("Nota", note)

    def line(self, label: str, value: str) -> None:
        self.row += 1
        self.ws.write_string(self.row, 0, label, self.book.style("header"))
        self.ws.write_string(self.row, 1, value[:MAX_TEXT])

    def seals(self, rows: list[list[Any]]) -> None:
        """The seals table under the query: its header, then one row per seal."""
        self.row += 2
        self.ws.write_string(self.row, 0, "Selos diários", self.book.style("header"))
        self.row += 1
        for j, h in enumerate(SEAL_HEADERS):
            self.ws.write_string(self.row, j, h, self.book.style("header"))
        for r in rows:
            self.row += 1
            _seal_cells(self.book, self.ws, self.row, r)


def _seal_cells(book: Book, ws: Worksheet, i: int, r: list[Any]) -> None:
    for j, v in enumerate(r):
        if isinstance(v, datetime):
            ws.write_datetime(i, j, v, book.style(DATE_FORMAT))
        elif isinstance(v, int):
            ws.write_number(i, j, v, book.style("0"))
        else:
            ws.write_string(i, j, str(v))


def _selos(book: Book, rows: list[list[Any]]) -> None:
    ws = book.sheet(seal_table.SHEET)
    for j, h in enumerate(SEAL_HEADERS):
        ws.write_string(0, j, h, book.style("header"))
    for i, r in enumerate(rows, start=1):
        _seal_cells(book, ws, i, r)
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, len(rows), len(SEAL_HEADERS) - 1)
    for j, w in enumerate([12, 10, 11, 8, 10, 66, 22, 22]):
        ws.set_column(j, j, w)


async def _table(book: Book, table: Table, tz: tzinfo, totals: Callable[[], list[dict[str, Any]]] | None) -> None:
    sheet = await asyncio.to_thread(lambda: Sheet(book, book.sheet(table.title), table.columns, tz))
    batch: list[Any] = []
    async for row in as_async(table.rows):
        batch.append(row)
        if len(batch) >= BATCH_ROWS:
            await asyncio.to_thread(sheet.write, batch)
            batch = []
    batch += totals() if totals else []
    await asyncio.to_thread(sheet.write, batch)
    sheet.finish()


async def write(doc: Document, path: Path) -> None:
    """Write the document's workbook to `path` (its scratch files beside it); rows are consumed as they come.

    A write that fails or is cancelled (the client went away) leaves the book unclosed: chunks() removes the
    directory, scratch files and all.
    """
    book = Book(path, path.parent)
    query = Query(book, doc)
    for table in doc.tables:
        await _table(book, table, doc.tz, table.totals)
    for table in doc.extra() if doc.extra else []:
        await _table(book, table, doc.tz, table.totals)
    refs = await doc.seals() if doc.seals else []
    if refs:
        rows = seal_rows(refs)
        query.seals(rows)
        _selos(book, rows)
    await asyncio.to_thread(book.close)


async def chunks(doc: Document, chunk_bytes: int = CHUNK_BYTES) -> AsyncIterator[bytes]:
    """The workbook's bytes: written whole to a temporary directory first, then read back and deleted."""
    tmp = Path(tempfile.mkdtemp(prefix="telemetria-xlsx-"))
    try:
        path = tmp / "book.xlsx"
        await write(doc, path)
        with path.open("rb") as f:
            while data := await asyncio.to_thread(f.read, chunk_bytes):
                yield data
    finally:
        shutil.rmtree(tmp, ignore_errors=True)  # not awaited: it must run when the stream is cancelled too


def response(doc: Document) -> StreamingResponse:
    """The document as an XLSX download named `<doc.filename>.xlsx`."""
    headers = {"Content-Disposition": csv.content_disposition(doc.filename + ".xlsx")}
    return StreamingResponse(chunks(doc), media_type=MEDIA_TYPE, headers=headers)
