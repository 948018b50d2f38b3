"""A Document as PDF: A4, the municipality's header and the page footer on every page, the query, the map, then
the tables, their header row repeated on every page they run onto, their totals, and the seals table.

Drawn straight on a reportlab canvas page by page as the rows arrive (no flowables kept for them), yielding to
the event loop every few rows. Each finished page's content is compressed at once (`_Canvas`), so what a long
report holds until the file is written is its pages compressed (a few kB per page), never its rows; the
file is then written to a spooled temporary file (on disk beyond SPOOL_BYTES) and streamed from it.
"Página N de M" names the page count before it is known: M is a form XObject drawn on every page and defined
once the last page is done (PDF resolves it when the page is shown).
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import operator
import pickle
import shutil
import tempfile
import zlib
from collections.abc import AsyncIterator, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from fastapi.responses import StreamingResponse
from reportlab.graphics import renderPDF
from reportlab.lib import colors
from reportlab.lib.units import cm
from reportlab.lib.utils import ImageReader
from reportlab.pdfbase import pdfdoc
from reportlab.pdfgen.canvas import Canvas

from telemetria.jobs import Jobs
from telemetria.reports.output import csv, pdf_map
from telemetria.reports.output import pdf_layout as lay
from telemetria.reports.output.csv import DATE, INT, TEXT, Column, as_async
from telemetria.reports.output.document import Document, Table
from telemetria.seals import table as seal_table
from telemetria.seals.model import SealRef

MEDIA_TYPE = "application/pdf"
MARGIN = 1.2 * cm
HEADER_PT = 1.5 * cm  # the municipality's header band at the top of every page
FOOTER_PT = 0.8 * cm
SPOOL_BYTES = 8 * 1024 * 1024  # a written PDF larger than this waits on disk, not in memory, while it is sent
CHUNK_BYTES = 64 * 1024
MAP_MIN_PT = 220.0  # a map left less room than this under the query goes on a page of its own
GREY = colors.HexColor("#555555")
HEAD_FILL = colors.HexColor("#e3e6ea")
TOTAL_FILL = colors.HexColor("#f1f2f4")
RULE = colors.HexColor("#b0b4ba")
YIELD_ROWS = 8  # rows drawn between two turns of the event loop (a few ms)
SIGN_PT = 62.0  # a signature line's band: room to sign above the line, the name and "nome, matrícula" under it
SIGN_GAP = 1.5 * cm
PAGES_FORM = "pagecount"
HEADER_FORM = "letterhead"


# The seals table every track export ends with (seals/table.py: its columns, its rows clipped to the window).
SEAL_KINDS = {"vehicle_id": INT, "day": DATE, "version": INT, "fixes": INT}
SEAL_COLUMNS = [Column(h, k, SEAL_KINDS.get(k, TEXT)) for h, k in zip(seal_table.COLUMNS, seal_table.KEYS, strict=True)]
SEALS_TITLE = seal_table.CSV_TITLE


def seal_rows(seals: Sequence[SealRef]) -> list[dict[str, Any]]:
    """The seals table's rows: each vehicle-day's seal and the part of that local day the export covers."""
    return [seal_table.cells(s) for s in seals]


def response(doc: Document, jobs: Jobs | None = None) -> StreamingResponse:
    """The document as a PDF download, sent once its last page is done: drawn in `jobs`' process pool when
    given (the caller holds a turn: jobs.streamed), else on this event loop as its rows stream."""
    headers = {"Content-Disposition": csv.content_disposition(doc.filename + ".pdf")}
    body = _body(doc) if jobs is None else _body_in_process(doc, jobs)
    return StreamingResponse(body, media_type=MEDIA_TYPE, headers=headers)


async def _body_in_process(doc: Document, jobs: Jobs) -> AsyncIterator[bytes]:
    """The PDF drawn by a worker process (issue 37): this process only reads the rows and writes their cells'
    text to a plan file as they come (record), the worker draws the pages from it (draw_plan) into a file that
    is then streamed from here. The event loop never draws, and the plan on disk keeps memory flat."""
    tmp = Path(tempfile.mkdtemp(prefix="telemetria-pdf-"))
    try:
        plan, out = tmp / "plan", tmp / "doc.pdf"
        with plan.open("wb") as f:
            await record(doc, f)
        await jobs.in_process(draw_plan, str(plan), str(out))
        with out.open("rb") as f:
            while chunk := await asyncio.to_thread(f.read, CHUNK_BYTES):
                yield chunk
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


PLAN_BATCH = 500  # rows' texts pickled at a time into the plan


def _same(value: Any, _tz: Any) -> Any:
    return value


PLAIN = csv.Kind("plain", _same)  # a cell whose text was made before (record): drawn as it is


def _plain(heads: Sequence[str]) -> list[Column]:
    return [Column(h, operator.itemgetter(j), PLAIN) for j, h in enumerate(heads)]


async def record(doc: Document, f: IO[bytes]) -> None:
    """What `render` draws, in its order, as picklable records in `f`: the document without its sources, the
    map's coordinates, each table's header texts, its rows' and totals' cell texts (as the PDF shows them,
    lay.cells) in batches, then "end". draw_plan draws the same PDF from them."""

    def dump(item: tuple[Any, ...]) -> None:
        pickle.dump(item, f, protocol=pickle.HIGHEST_PROTOCOL)

    def plain_table(t: Table) -> Table:
        return Table(t.title, _plain(lay.headers(t.columns, doc.tz)), [])

    dump(("head", dataclasses.replace(doc, tables=[plain_table(doc.tables[0])], extra=None, drawing=None, seals=None)))
    if doc.drawing is not None:
        dump(("map", await pdf_map.collect(doc.drawing)))

    async def table(t: Table) -> None:
        texts = lay.cells(t.columns, doc.tz)
        dump(("table", t.title, lay.headers(t.columns, doc.tz)))
        batch: list[list[str]] = []
        async for row in as_async(t.rows):
            batch.append(texts(row))
            if len(batch) >= PLAN_BATCH:
                dump(("rows", batch))
                batch = []
        if batch:
            dump(("rows", batch))
        dump(("totals", [texts(r) for r in t.totals()] if t.totals else []))

    for t in doc.tables:
        await table(t)
    for t in doc.extra() if doc.extra else ():
        await table(t)
    seals = await doc.seals() if doc.seals else []
    if seals:
        await table(Table(SEALS_TITLE, SEAL_COLUMNS, seal_rows(seals)))
    dump(("end",))


class _PlanRows:
    """A recorded table's rows read from the plan as they are drawn, then its totals."""

    def __init__(self, f: IO[bytes]) -> None:
        self.f = f
        self.rest: list[list[str]] | None = None

    def __iter__(self) -> Iterator[list[str]]:
        while (item := pickle.load(self.f))[0] == "rows":  # our own plan, written by record()
            yield from item[1]
        self.rest = item[1]

    def totals(self) -> list[list[str]]:
        if self.rest is None:  # the rows were not all drawn: read past them
            for _ in self:
                pass
        return self.rest or []


def draw_plan(plan: str, out: str) -> None:
    """(In a worker process) the PDF of a plan written by `record`, into the file `out`."""
    with open(plan, "rb") as f, open(out, "wb") as o:
        asyncio.run(_draw_plan(f, o))


async def _draw_plan(f: IO[bytes], out: IO[bytes]) -> None:
    def load() -> tuple[Any, ...]:
        item: tuple[Any, ...] = pickle.load(f)  # our own plan, written by record()
        return item

    doc: Document = load()[1]
    arms = await asyncio.to_thread(Path(doc.coat_of_arms_path).read_bytes) if doc.coat_of_arms_path else None
    w = _Writer(doc, out, arms)
    w.intro()
    while (item := load())[0] != "end":
        if item[0] == "map":
            await w.map(item[1])
            continue
        rows = _PlanRows(f)
        await w.table(Table(item[1], _plain(item[2]), rows, rows.totals))  # type: ignore[arg-type]  # lists, by index
    w.closing()
    w.finish()


async def _body(doc: Document) -> AsyncIterator[bytes]:
    with tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES) as out:
        await render(doc, out)
        out.seek(0)
        while chunk := await asyncio.to_thread(out.read, CHUNK_BYTES):
            yield chunk


async def render(doc: Document, out: IO[bytes]) -> None:
    """Write the document as PDF into `out` (pages drawn as the rows arrive; the file written at the end)."""
    arms = await asyncio.to_thread(Path(doc.coat_of_arms_path).read_bytes) if doc.coat_of_arms_path else None
    w = _Writer(doc, out, arms)
    w.intro()
    if doc.drawing is not None:
        await w.map(await pdf_map.collect(doc.drawing))
    await w.table(doc.tables[0])
    for t in doc.tables[1:]:
        await w.table(t)
    for t in doc.extra() if doc.extra else ():
        await w.table(t)
    seals = await doc.seals() if doc.seals else []
    if seals:
        await w.table(Table(SEALS_TITLE, SEAL_COLUMNS, seal_rows(seals)))
    w.closing()
    await asyncio.to_thread(w.finish)  # compressing and writing every object is CPU work: off the event loop


def _date(c: Canvas, when: datetime) -> None:
    """The PDF's creation (and modification) date: `when`, not the year 2000 reportlab's invariant mode writes.

    Invariant mode stays on (the document id is then derived from the content, not from the clock), so two
    downloads of a closed month's boletim, whose `when` is its closing's, carry the same metadata."""
    utc = when.astimezone(UTC)
    stamp = c._doc._timeStamp  # type: ignore[attr-defined]  # reportlab's document, its one time stamp
    stamp.t = utc.timestamp()
    stamp.lt = utc.timetuple()
    stamp.YMDhms = tuple(utc.timetuple())[:6]
    stamp.dhh = stamp.dmm = 0


class _Canvas(Canvas):
    """A canvas whose finished pages are compressed at once, so that the pages waiting to be written are small."""

    def showPage(self) -> None:
        super().showPage()
        page = self._doc.Pages.pages[-1]  # type: ignore[attr-defined]  # reportlab's document, its last page
        stream = page.stream
        page.stream = None
        data = stream.encode("utf8") if isinstance(stream, str) else stream
        page.Contents = pdfdoc.PDFStream(content=zlib.compress(data), filters=[_FLATE_DONE])


class _FlateDone:
    """A filter already applied: names FlateDecode, leaves the (compressed) content as it is."""

    pdfname = "FlateDecode"

    def encode(self, data: bytes) -> bytes:
        return data


_FLATE_DONE = _FlateDone()


class _Writer:
    def __init__(self, doc: Document, out: IO[bytes], arms: bytes | None) -> None:
        self.doc = doc
        self.size = lay.page_size(len(doc.tables[0].columns))
        self.width = self.size[0] - 2 * MARGIN
        self.c = _Canvas(out, pagesize=self.size, pageCompression=0, invariant=1)
        self.c.setTitle(doc.title)
        self.c.setAuthor(doc.municipality or "Telemetria")
        self.c.setCreator("Telemetria")
        _date(self.c, doc.created_at or doc.generated_at)
        local = doc.generated_at.astimezone(doc.tz)
        self.stamp = f"Gerado por {doc.generated_by} em {local:%d/%m/%Y %H:%M:%S}"
        self.pager = lay.Pager(top=self.size[1] - MARGIN - HEADER_PT, bottom=MARGIN + FOOTER_PT)
        self._letterhead(arms)

    # -- pages ---------------------------------------------------------------------------------------------------

    def _letterhead(self, arms: bytes | None) -> None:
        c, top = self.c, self.size[1] - MARGIN
        c.beginForm(HEADER_FORM)
        x = MARGIN
        if arms:
            reader = ImageReader(io.BytesIO(arms))
            iw, ih = reader.getSize()
            h = HEADER_PT - 0.3 * cm
            c.drawImage(reader, MARGIN, top - h, width=h * iw / ih, height=h, mask="auto")
            x += h * iw / ih + 8
        c.setFont(lay.BOLD, 10)
        c.drawString(x, top - 12, self.doc.municipality or "Telemetria")
        c.setFont(lay.FONT, 8.5)
        c.setFillColor(GREY)
        c.drawString(x, top - 24, self.doc.title)
        c.setStrokeColor(RULE)
        c.setLineWidth(0.6)
        c.line(MARGIN, top - HEADER_PT + 4, self.size[0] - MARGIN, top - HEADER_PT + 4)
        c.endForm()

    def begin_page(self) -> None:
        """The page the pager has just begun: the last one shown, the header and the footer drawn."""
        if self.pager.page > 1:
            self.c.showPage()
        c = self.c
        c.doForm(HEADER_FORM)
        c.setFont(lay.FONT, 7)
        c.setFillColor(GREY)
        y = MARGIN + 2
        c.drawString(MARGIN, y, self.stamp)
        label = f"Página {self.pager.page} de "
        x = self.size[0] - MARGIN - 40
        c.drawString(x, y, label)
        c.saveState()
        c.translate(x + c.stringWidth(label, lay.FONT, 7), y)
        c.doForm(PAGES_FORM)
        c.restoreState()
        c.setFillColor(colors.black)

    def _room(self, height: float, keep: float = 0.0) -> float:
        """The top of a block `height` tall, on this page or a new one."""
        began, top = self.pager.place(height, keep)
        if began:
            self.begin_page()
        return top

    def finish(self) -> None:
        if not self.pager.page:
            self.pager.new_page()
            self.begin_page()
        self.c.showPage()
        c = self.c
        c.beginForm(PAGES_FORM)
        c.setFont(lay.FONT, 7)
        c.setFillColor(GREY)
        c.drawString(0, 0, str(self.pager.page))
        c.endForm()
        c.save()

    # -- blocks --------------------------------------------------------------------------------------------------

    def _text(self, text: str, font: str, size: float, leading: float, color: Any = colors.black) -> None:
        for line in lay.wrap(text, self.width + 2 * lay.PAD, font, size):
            top = self._room(leading)
            self.c.setFont(font, size)
            self.c.setFillColor(color)
            self.c.drawString(MARGIN, top - size, line)
        self.c.setFillColor(colors.black)

    def intro(self) -> None:
        self._text(self.doc.title, lay.BOLD, 14, 18)
        self.pager.y -= 4
        for label, value in self.doc.query:
            self._text(f"{label}: {value}", lay.FONT, 8, 10)
        self._text(self.stamp, lay.FONT, 8, 10, GREY)
        for note in self.doc.notes:
            self._text(note, lay.FONT, 8, 10, GREY)
        self.pager.y -= 8

    def closing(self) -> None:
        """The closing block: the summary's lines, then the signature lines, kept together on one page."""
        doc = self.doc
        if doc.summary:
            self._room(14, 10)
            self._text("Totais e situação", lay.BOLD, 9, 13)
            for label, value in doc.summary:
                self._text(f"{label}: {value}", lay.FONT, 8, 10)
            self.pager.y -= 6
        if doc.signatures:
            top = self._room(SIGN_PT * ((len(doc.signatures) + 1) // 2) + 6)
            c, col = self.c, (self.width - SIGN_GAP) / 2
            c.setStrokeColor(colors.black)
            c.setLineWidth(0.5)
            for n, name in enumerate(doc.signatures):
                x = MARGIN + (n % 2) * (col + SIGN_GAP)
                y = top - SIGN_PT * (n // 2 + 1) + 12
                c.line(x, y, x + col, y)
                c.setFont(lay.FONT, 8)
                c.drawCentredString(x + col / 2, y - 10, name)
                c.setFont(lay.FONT, 7)
                c.setFillColor(GREY)
                c.drawCentredString(x + col / 2, y - 19, "nome, matrícula e data")
                c.setFillColor(colors.black)

    async def map(self, chart: pdf_map.Chart) -> None:
        if chart.empty():
            return
        room = self.pager.y - self.pager.bottom - 13 - 14 if self.pager.page else 0.0
        page = self.pager.top - self.pager.bottom - 40
        height = min(self.width * 0.55, room if room >= MAP_MIN_PT else page)  # below the query when it fits
        top = self._room(13 + height, 14)  # the heading with its map, and a line of legend under it
        self.c.setFont(lay.BOLD, 9)
        self.c.drawString(MARGIN, top - 10, "Mapa")
        drawing = await asyncio.to_thread(pdf_map.chart, chart, self.width, height)
        renderPDF.draw(drawing, self.c, MARGIN, top - 13 - height)
        self._text(pdf_map.legend(chart), lay.FONT, 7, 9, GREY)
        self.pager.y -= 8

    async def table(self, table: Table) -> None:
        heads = lay.headers(table.columns, self.doc.tz)
        texts = lay.cells(table.columns, self.doc.tz)
        rows = as_async(table.rows)
        sample: list[list[str]] = []
        async for row in rows:
            sample.append(texts(row))
            if len(sample) >= lay.SAMPLE_ROWS:
                break
        widths = lay.widths(heads, sample, self.width)
        grid = _Grid(self, table.title, heads, widths)
        grid.heading()
        for cells in sample:
            await grid.row(cells)
        if len(sample) >= lay.SAMPLE_ROWS:
            async for row in rows:
                await grid.row(texts(row))
        if not grid.count:
            self._text("Nenhuma linha.", lay.FONT, 7.5, 10, GREY)
        for row in table.totals() if table.totals else ():
            await grid.row(texts(row), total=True)
        self.pager.y -= 10


class _Grid:
    """A table's rows drawn page by page: its header row at the top of each page it runs onto."""

    def __init__(self, w: _Writer, title: str, heads: list[str], widths: list[float]) -> None:
        self.w, self.title, self.widths = w, title, widths
        self.heads = [lay.wrap(h, cw, lay.BOLD) for h, cw in zip(heads, widths, strict=True)]
        self.head_h = lay.row_height(max((len(h) for h in self.heads), default=1))
        self.count = 0
        self.page = 0

    def heading(self) -> None:
        w = self.w
        top = w._room(14, self.head_h + lay.row_height(1))
        w.c.setFont(lay.BOLD, 9)
        w.c.drawString(MARGIN, top - 10, self.title)
        self._head_row()

    def _head_row(self) -> None:
        top = self.w._room(self.head_h)
        self.page = self.w.pager.page
        self._draw(self.heads, top, self.head_h, lay.BOLD, HEAD_FILL)

    async def row(self, cells: list[str], total: bool = False) -> None:
        font = lay.BOLD if total else lay.FONT
        lines = [lay.wrap(t, cw, font) for t, cw in zip(cells, self.widths, strict=True)]
        h = lay.row_height(max(len(x) for x in lines) if lines else 1)
        w = self.w
        began, top = w.pager.place(h)
        if began:
            w.begin_page()
            w.pager.y = top
            self._head_row()
            top = w.pager.y
            w.pager.y -= h
        self._draw(lines, top, h, font, TOTAL_FILL if total else None)
        self.count += 0 if total else 1
        if self.count % YIELD_ROWS == 0:
            await asyncio.sleep(0)  # drawing is CPU work on the event loop: let it serve others between rows

    def _draw(self, lines: list[list[str]], top: float, h: float, font: str, fill: Any) -> None:
        c = self.w.c
        total_w = sum(self.widths)
        if fill is not None:
            c.setFillColor(fill)
            c.rect(MARGIN, top - h, total_w, h, stroke=0, fill=1)
            c.setFillColor(colors.black)
        c.setStrokeColor(RULE)
        c.setLineWidth(0.3)
        c.line(MARGIN, top - h, MARGIN + total_w, top - h)
        text = c.beginText()
        text.setFont(font, lay.CELL_PT)
        x = MARGIN
        for cell, cw in zip(lines, self.widths, strict=True):
            for n, line in enumerate(cell):
                if line:
                    text.setTextOrigin(x + lay.PAD, top - lay.PAD - lay.CELL_PT - n * lay.LEADING + 1)
                    text.textOut(line)
            x += cw
        c.drawText(text)
