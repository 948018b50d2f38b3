"""pt-BR CSV for Excel and LibreOffice, streamed in chunks: BOM, `;`, decimal comma, CRLF, local time, no formulas.

Decisions (for people opening the file, not for parsers):
- Date-time columns state the report's zone in their header, e.g. `Início (America/Porto_Velho)`; the cells are
  `dd/mm/aaaa HH:MM:SS` in that zone. Date columns are `dd/mm/aaaa` (a datetime given to one is first converted).
- Durations come as two kinds: SECONDS (an integer, for sums) and HMS (`HH:MM:SS`, hours may pass 24).
- Only text kinds are neutralized against formula injection (a leading `'` before `= + - @ TAB CR`); numbers,
  negative coordinates included, are written as numbers so that the spreadsheet can add them up.
- None and non-finite numbers (NaN marks "not sent" in our arrays) are empty cells.
- Numbers are built as strings (no `locale`) by telemetria/formats.py, the rules pages follow too: decimals per
  kind of figure (km 2, km/h 1, % 1, coordinates 6...), decimal comma, no thousands separator, half away from zero,
  `-0,0` written as `0,0`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, datetime, timedelta, tzinfo
from typing import Any, TypeVar

from telemetria import formats

T = TypeVar("T")

CSV_MEDIA_TYPE = "text/csv; charset=utf-8"
CHUNK_CHARS = 64 * 1024  # a chunk is yielded once this many characters are buffered (~64 KiB of mostly ASCII)
BOM = "\ufeff"  # Excel reads the file as UTF-8 only with it
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # OWASP "CSV injection" list
_NEEDS_QUOTES = re.compile(r'[;"\r\n]')


@dataclass(frozen=True, slots=True)
class Kind:
    """How a column's non-None values become cell text."""

    name: str
    fmt: Callable[[Any, tzinfo], str]
    text: bool = False  # user text: quoted when needed and neutralized against formulas
    zoned: bool = False  # the header states the report's zone


_finite = formats.finite
_number = formats.number


def _int(value: Any, _tz: tzinfo) -> str:
    if not _finite(value):
        return ""
    if value != int(value):
        raise ValueError(f"not an integer: {value!r}")  # silently truncating would hide a wrong kind
    return str(int(value))


def _text(value: Any, _tz: tzinfo) -> str:
    s = value if isinstance(value, str) else str(value)
    return "'" + s if s.startswith(_FORMULA_START) else s


def _local(value: datetime, tz: tzinfo) -> datetime:
    if value.tzinfo is None:
        raise ValueError(f"naive datetime in a report: {value!r}")
    return value.astimezone(tz)


def _datetime(value: datetime, tz: tzinfo) -> str:
    d = _local(value, tz)
    return f"{d.day:02d}/{d.month:02d}/{d.year:04d} {d.hour:02d}:{d.minute:02d}:{d.second:02d}"


def _between(value: tuple[datetime | None, datetime | None], tz: tzinfo) -> str:
    """The bounds of an estimated instant: `dd/mm/aaaa HH:MM:SS a HH:MM:SS` (the date again when it changes), `até`
    or `desde` one of them when the other is unknown."""
    lo, hi = value
    if lo is None:
        return "" if hi is None else f"até {_datetime(hi, tz)}"
    if hi is None:
        return f"desde {_datetime(lo, tz)}"
    a, b = _local(lo, tz), _local(hi, tz)
    return f"{_datetime(lo, tz)} a {_datetime(hi, tz) if a.date() != b.date() else f'{b:%H:%M:%S}'}"


def _date(value: date, tz: tzinfo) -> str:
    d = _local(value, tz) if isinstance(value, datetime) else value
    return f"{d.day:02d}/{d.month:02d}/{d.year:04d}"


def _seconds_of(value: Any) -> int | None:
    s = value.total_seconds() if isinstance(value, timedelta) else value
    return round(s) if _finite(s) else None


def _seconds(value: Any, _tz: tzinfo) -> str:
    s = _seconds_of(value)
    return "" if s is None else str(s)


def _hms(value: Any, _tz: tzinfo) -> str:
    s = _seconds_of(value)
    if s is None:
        return ""
    h, rest = divmod(abs(s), 3600)
    return f"{'-' if s < 0 else ''}{h:02d}:{rest // 60:02d}:{rest % 60:02d}"


def decimal(places: int) -> Kind:
    """A number with `places` decimals, decimal comma (1234.5 → `1234,5`)."""
    return Kind(f"decimal({places})", lambda v, _tz: _number(v, places))


def rule(name: str) -> Kind:
    """A figure written by its kind's rule in telemetria/formats.py (the same as on the pages)."""
    return Kind(name, lambda v, _tz: formats.fmt(name, v))


TEXT = Kind("text", _text, text=True)
INT = Kind("int", _int)
COORD = rule("coord")  # degrees, 6 decimals (~0.1 m)
KM = rule("km")
KM_STEP = rule("km_step")
KMH = rule("kmh")
PCT = rule("pct")  # a percentage: 32.5 → 32,5
SHARE = rule("share")  # a share (0..1) written as a percentage: 0.5 → 50,0
MIN = rule("min")
DEG = rule("deg")
DATETIME = Kind("datetime", _datetime, zoned=True)
BETWEEN = Kind("between", _between, zoned=True)  # (earliest, latest) of an estimated instant (issue 34)
DATE = Kind("date", _date)
BOOL = Kind("bool", lambda v, _tz: "Sim" if v else "Não")
SECONDS = Kind("seconds", _seconds)  # a duration (timedelta or seconds) as whole seconds
HMS = Kind("hms", _hms)  # a duration as HH:MM:SS


@dataclass(frozen=True, slots=True)
class Column:
    """One column: its Portuguese header, a key/attribute name or a getter of the row, and its kind."""

    header: str
    get: str | Callable[[Any], Any]
    kind: Kind = TEXT


ColumnSpec = Column | tuple[str, str | Callable[[Any], Any], Kind]


def _quote(s: str) -> str:
    return '"' + s.replace('"', '""') + '"' if _NEEDS_QUOTES.search(s) else s


def _getter(key: str | Callable[[Any], Any]) -> Callable[[Any], Any]:
    if callable(key):
        return key

    def get(row: Any) -> Any:
        # Mappings and asyncpg.Record by key, anything else by attribute; a misspelt key raises.
        return row[key] if isinstance(row, Mapping) or hasattr(row, "keys") else getattr(row, key)

    return get


class CsvFormatter:
    """Turns rows into pt-BR CSV lines (CRLF-terminated) for a fixed list of columns and a zone."""

    def __init__(self, columns: Iterable[ColumnSpec], tz: tzinfo) -> None:
        self.columns = [c if isinstance(c, Column) else Column(*c) for c in columns]
        self.tz = tz
        self._cells = [(_getter(c.get), c.kind.fmt, c.kind.text) for c in self.columns]

    def header(self) -> str:
        zone = str(getattr(self.tz, "key", self.tz))
        names = [f"{c.header} ({zone})" if c.kind.zoned else c.header for c in self.columns]
        cells = [_quote(n) for n in names]
        if cells and cells[0].startswith("ID"):
            cells[0] = f'"{cells[0]}"'  # Excel takes a file starting with "ID" for SYLK and refuses it
        return ";".join(cells) + "\r\n"

    def line(self, row: Any) -> str:
        out = []
        for get, fmt, text in self._cells:
            value = get(row)
            if value is None:
                out.append("")
            elif text:
                out.append(_quote(fmt(value, self.tz)))
            else:
                out.append(fmt(value, self.tz))
        return ";".join(out) + "\r\n"


class Chunker:
    """Buffers text pieces and hands them back as UTF-8 chunks of about `size` characters."""

    def __init__(self, size: int = CHUNK_CHARS) -> None:
        self.size = size
        self._parts: list[str] = []
        self._n = 0

    def add(self, piece: str) -> bytes | None:
        """The buffered bytes once `size` is reached, else None."""
        self._parts.append(piece)
        self._n += len(piece)
        return self.flush() if self._n >= self.size else None

    def flush(self) -> bytes:
        data = "".join(self._parts).encode("utf-8")
        self._parts.clear()
        self._n = 0
        return data


async def as_async(items: AsyncIterable[T] | Iterable[T]) -> AsyncIterator[T]:
    """Iterate a sync or async iterable alike (sync ones are not offloaded: keep them cheap per item)."""
    if isinstance(items, AsyncIterable):
        async for item in items:
            yield item
    else:
        for item in items:
            yield item


async def csv_chunks(
    columns: Iterable[ColumnSpec],
    rows: AsyncIterable[Any] | Iterable[Any],
    tz: tzinfo,
    chunk_chars: int = CHUNK_CHARS,
) -> AsyncIterator[bytes]:
    """The CSV file as UTF-8 chunks of ~64 KiB (BOM and header first): for Starlette's StreamingResponse."""
    fmt = CsvFormatter(columns, tz)
    buf = Chunker(chunk_chars)
    buf.add(BOM + fmt.header())
    async for row in as_async(rows):
        if chunk := buf.add(fmt.line(row)):
            yield chunk
    if tail := buf.flush():
        yield tail


def export_filename(stem: str, start: date | str | None = None, end: date | str | None = None, ext: str = "csv") -> str:
    """ASCII-safe download name: `km_2026-03-01_2026-03-31.csv` (dates as given, inclusive as people read them).

    Ends given as text (`2026-03-01T08:00`) keep their digits: `2026-03-01T0800`.
    """
    parts = [stem, *(d.replace(":", "") if isinstance(d, str) else f"{d:%Y-%m-%d}" for d in (start, end) if d)]
    return _ascii_safe("_".join(parts)) + "." + _ascii_safe(ext)


def content_disposition(filename: str) -> str:
    """The header value that makes browsers save the download as `filename` (made ASCII-safe)."""
    return f'attachment; filename="{_ascii_safe(filename)}"'


def _ascii_safe(name: str) -> str:
    # "Relatório março" → "Relatorio_marco": accents dropped, anything but [A-Za-z0-9._-] becomes "_".
    ascii_ = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode()
    return re.sub(r"[^A-Za-z0-9._-]+", "_", ascii_).strip("._") or "export"
