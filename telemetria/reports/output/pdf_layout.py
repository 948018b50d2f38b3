"""The PDF's layout, pure: page size, the cells' text, column widths, cells wrapped into lines, rows cut into pages.

Cells are written as the CSV writes them (telemetria/formats.py: decimal comma, dd/mm/aaaa HH:MM:SS in the
report's zone) but not neutralized against formulas: a PDF is read, not computed. Helvetica (one of the PDF's
standard fonts, nothing embedded) draws Windows-1252, which holds every Portuguese letter and “ ” – º ª §;
reportlab draws the few other symbols (≥, →) from the standard Symbol font, and anything else as a box.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import tzinfo
from typing import Any

from reportlab.lib.pagesizes import A4, landscape
from reportlab.lib.utils import simpleSplit
from reportlab.pdfbase.pdfmetrics import stringWidth

from telemetria.formats import grouped
from telemetria.reports.output.csv import Column

FONT = "Helvetica"
BOLD = "Helvetica-Bold"
CELL_PT = 6.5  # the tables' type size
LEADING = 7.8  # a table line's height
PAD = 2.0  # space around a cell's text
WIDE = 8  # a first table with more columns than this is laid out on a landscape page
MAX_WORD_PT = 60.0  # a longer word (a digest, a JSON value) may be broken rather than widen its column
MAX_HEAD_WORD_PT = 36.0  # a header's longer word ("(America/Porto_Velho)") is broken before a cell's word is
MAX_CELL_PT = 170.0  # the widest a column asks for before the page is shared out (longer text wraps)
SAMPLE_ROWS = 100  # rows measured to share the page's width among the columns


def page_size(columns: int) -> tuple[float, float]:
    """A4 portrait, or landscape when the first table has more than WIDE columns (points)."""
    return landscape(A4) if columns > WIDE else A4


def getter(key: str | Callable[[Any], Any]) -> Callable[[Any], Any]:
    """A column's value of a row: by key for mappings (and asyncpg records), by attribute otherwise."""
    if callable(key):
        return key
    return lambda row: row[key] if isinstance(row, Mapping) or hasattr(row, "keys") else getattr(row, key)


def headers(columns: Sequence[Column], tz: tzinfo) -> list[str]:
    """The header texts, as in the CSV: a date-time column names its zone."""
    zone = str(getattr(tz, "key", tz))
    return [f"{c.header} ({zone})" if c.kind.zoned else c.header for c in columns]


def cells(columns: Sequence[Column], tz: tzinfo) -> Callable[[Any], list[str]]:
    """A row → its cells' text, each as the CSV writes it (None: empty), a number's thousands grouped as on the
    pages (formats.grouped: "2.819,63"; a CSV keeps them plain for spreadsheets and scripts)."""
    # Text as it is (the PDF needs no CSV quoting); other kinds by the CSV's own writer of their values (the same
    # text as Kind.fmt, made once per column: csv.Kind.cell_writer).
    parts = [(getter(c.get), c.kind.text, _plain_text if c.kind.text else c.kind.cell_writer(tz)) for c in columns]

    def texts(row: Any) -> list[str]:
        out = []
        for get, text, write in parts:
            value = get(row)
            cell = "" if value is None else _flat(write(value))
            out.append(cell if text else grouped(cell))
        return out

    return texts


def _plain_text(value: Any) -> str:
    return value if isinstance(value, str) else str(value)


def _flat(text: str) -> str:
    # A line break or tab inside a value would be drawn as a box: a PDF line has none.
    return text.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")


def widths(heads: Sequence[str], sample: Sequence[Sequence[str]], avail: float) -> list[float]:
    """Column widths (points) summing to `avail`. Each column first gets what its longest word needs (a sampled
    cell's, at most MAX_WORD_PT, then its header's, at most MAX_HEAD_WORD_PT), so that words are not broken;
    what is left goes to the columns whose cells are longer than that, as far as they need (MAX_CELL_PT)."""
    cells, floor, want = [], [], []
    for i, head in enumerate(heads):
        column = [r[i] for r in sample if i < len(r)]
        # A header's word may be broken when the page is short of room (its column's cells are what matter).
        head_word = min(max((stringWidth(w, BOLD, CELL_PT) for w in head.split()), default=0.0), MAX_HEAD_WORD_PT)
        word = max((min(stringWidth(w, FONT, CELL_PT), MAX_WORD_PT) for c in column for w in c.split()), default=0.0)
        cell = max((stringWidth(c, FONT, CELL_PT) for c in column), default=0.0)
        cells.append(max(word, 8.0) + 2 * PAD + 0.5)  # + 0.5: the word fits whatever the rounding
        floor.append(max(cells[-1], head_word + 2 * PAD + 0.5))
        want.append(max(floor[-1], min(cell, MAX_CELL_PT) + 2 * PAD))
    if not heads:
        return []
    if sum(cells) >= avail:  # some words must break: the longest ones (a JSON value), never a plate or a number
        return _squeeze(cells, avail)
    if sum(floor) >= avail:  # the cells' words whole, the headers' words broken where they must
        spare = [f - c for f, c in zip(floor, cells, strict=True)]
        return [c + (avail - sum(cells)) * x / sum(spare) for c, x in zip(cells, spare, strict=True)]
    extra = [w - f for w, f in zip(want, floor, strict=True)]
    room = avail - sum(floor)
    if sum(extra) <= room:  # everything fits unwrapped: the rest shared out alike
        return [w + (room - sum(extra)) * w / sum(want) for w in want]
    return [f + room * e / sum(extra) for f, e in zip(floor, extra, strict=True)]


SHORT_WORD_PT = 40.0  # a column whose longest word is at most this wide keeps it whole when words must break


def _squeeze(cells: Sequence[float], avail: float) -> list[float]:
    """Widths for columns whose words do not all fit: the short-worded columns keep their width, the others share
    what is left by need; proportionally when even the short ones do not fit."""
    short = [c if c <= SHORT_WORD_PT + 2 * PAD + 0.5 else 0.0 for c in cells]
    long_need = sum(c for c, s in zip(cells, short, strict=True) if not s)
    room = avail - sum(short)
    if not long_need or room <= 0:
        return [f * avail / sum(cells) for f in cells]
    return [s if s else c * room / long_need for c, s in zip(cells, short, strict=True)]


def wrap(text: str, width: float, font: str = FONT, size: float = CELL_PT) -> list[str]:
    """`text` in lines at most `width` points wide: broken at spaces, a longer word broken between characters."""
    room = max(width - 2 * PAD, size)
    if not text:
        return [""]
    if text.isascii() and len(text) * _widest(font) * size <= room:  # fits even in its widest letter: no measuring
        return [text]
    if stringWidth(text, font, size) <= room:
        return [text]
    out: list[str] = []
    for line in simpleSplit(text, font, size, room) or [""]:
        while stringWidth(line, font, size) > room and len(line) > 1:
            n = len(line) - 1
            while n > 1 and stringWidth(line[:n], font, size) > room:
                n -= 1
            out.append(line[:n])
            line = line[n:]
        out.append(line)
    return out


@functools.cache
def _widest(font: str) -> float:
    """The widest printable ASCII character of `font`, in points at size 1 (wrap's shortcut, issue 37)."""
    return max(stringWidth(chr(c), font, 1000.0) for c in range(32, 127)) / 1000.0


def row_height(lines: int) -> float:
    """The height of a table row whose tallest cell has `lines` lines (points)."""
    return max(lines, 1) * LEADING + 2 * PAD


@dataclass
class Pager:
    """Where the next block goes on a page whose content runs from `top` down to `bottom` (points)."""

    top: float
    bottom: float
    y: float = 0.0
    page: int = 0  # pages begun so far

    def fits(self, height: float) -> bool:
        return self.page > 0 and self.y - height >= self.bottom

    def new_page(self) -> None:
        self.page += 1
        self.y = self.top

    def place(self, height: float, keep: float = 0.0) -> tuple[bool, float]:
        """Room for a block `height` tall (and `keep` more after it): (whether a page was begun, the block's top).

        A block taller than a whole page is placed at the top of its own page and runs off it (a cell of
        more lines than a page holds; not met with in reports, whose cells are short)."""
        began = False
        if not self.fits(height + keep) and not (self.page > 0 and self.y == self.top):
            self.new_page()
            began = True
        top = self.y
        self.y -= height
        return began, top
