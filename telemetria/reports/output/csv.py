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

import operator
import re
import unicodedata
from collections.abc import AsyncIterable, AsyncIterator, Callable, Iterable, Mapping, Sequence
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


Writer = Callable[[Any], str]  # a non-None value's cell text, quoted where needed


@dataclass(frozen=True, slots=True)
class Kind:
    """How a column's non-None values become cell text.

    `fmt` is the rule (XLSX and PDF use it too); `writer`, when given, makes once per export and zone a faster
    function that writes exactly fmt's text (quoted, for text kinds): the CSV's hot loop (issue 37).
    """

    name: str
    fmt: Callable[[Any, tzinfo], str]
    text: bool = False  # user text: quoted when needed and neutralized against formulas
    zoned: bool = False  # the header states the report's zone
    writer: Callable[[tzinfo], Writer] | None = None
    places: int | None = None  # a plain number with this many decimals (formats.number): the line writes floats

    def cell_writer(self, tz: tzinfo) -> Writer:
        """The function that writes this kind's non-None values in zone `tz`, as `fmt` (and the quoting) would."""
        if self.writer is not None:
            return self.writer(tz)
        fmt = self.fmt
        if self.text:
            return lambda v: _quote(fmt(v, tz))
        return lambda v: fmt(v, tz)


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


def _text_writer(_tz: tzinfo) -> Writer:
    def write(value: Any) -> str:
        s = value if isinstance(value, str) else str(value)
        if s.startswith(_FORMULA_START):
            s = "'" + s
        if ";" in s or '"' in s or "\n" in s or "\r" in s:  # _NEEDS_QUOTES, without a regex per cell
            return '"' + s.replace('"', '""') + '"'
        return s

    return write


def _int_writer(tz: tzinfo) -> Writer:
    return lambda v: str(v) if type(v) is int else _int(v, tz)


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


def _day(days: dict[int, str], key: int, d: datetime) -> str:
    """`dd/mm/aaaa ` of local day `d` (ordinal `key`), kept in `days` (rows come in time order: few days each)."""
    if len(days) > 4096:
        days.clear()
    day = days[key] = "%02d/%02d/%04d " % (d.day, d.month, d.year)  # noqa: UP031 - faster than an f-string
    return day


class _DatetimeWriter:
    """_datetime, each local day's `dd/mm/aaaa ` made once (_day); CsvFormatter's lines inline the same code."""

    def __init__(self, tz: tzinfo) -> None:
        self.tz = tz
        self.days: dict[int, str] = {}

    def __call__(self, value: Any) -> str:
        if type(value) is not datetime or value.tzinfo is None:
            return _datetime(value, self.tz)  # raises for a naive one
        d = value.astimezone(self.tz)
        key = d.toordinal()
        hms = "%02d:%02d:%02d" % (d.hour, d.minute, d.second)  # noqa: UP031 - faster than an f-string
        return (self.days.get(key) or _day(self.days, key, d)) + hms


def _tz_of(write: Writer) -> tzinfo:
    assert isinstance(write, _DatetimeWriter)
    return write.tz


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
    write = formats.number_writer(places)
    return Kind(f"decimal({places})", lambda v, _tz: _number(v, places), writer=lambda _tz: write, places=places)


def rule(name: str) -> Kind:
    """A figure written by its kind's rule in telemetria/formats.py (the same as on the pages)."""
    write, places = formats.writer(name), formats.RULES.get(name) if name != "share" else None
    return Kind(name, lambda v, _tz: formats.fmt(name, v), writer=lambda _tz: write, places=places)


TEXT = Kind("text", _text, text=True, writer=_text_writer)
INT = Kind("int", _int, writer=_int_writer)
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


DATETIME = Kind("datetime", _datetime, zoned=True, writer=_DatetimeWriter)
DATE = Kind("date", _date)
BOOL = Kind("bool", lambda v, _tz: "Sim" if v else "Não", writer=lambda _tz: lambda v: "Sim" if v else "Não")
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


def _line_of(kinds: Sequence[Kind], writers: Sequence[Writer]) -> Callable[[Sequence[Any]], str]:
    """A function of a row's cells to its CSV line, its code made for these columns: each cell's writer called
    in place (no loop over the columns), and a float of a plain number kind written inline as
    formats.number_writer writes it (`%` formatting unless NaN, infinite, huge or an exact half; `-0` unsigned).
    """
    env: dict[str, Any] = {"HUGE": formats.HUGE, "EXACT_INT": formats.EXACT_INT}
    body, cells = [], []
    # No cell of these kinds holds a "." once written: the decimal points of the inlined floats are then made
    # commas once for the whole line, not once per cell.
    dotless = all(k.places is not None or k in (INT, BOOL, DATETIME, DATE, SECONDS, HMS) for k in kinds)
    comma = "" if dotless else ".replace('.', ',')"
    for j, (kind, write) in enumerate(zip(kinds, writers, strict=True)):
        env[f"w{j}"] = write
        v, s = f"v{j}", f"s{j}"
        if kind is INT:
            cells.append(f"(str({v}) if type({v}) is int else '' if {v} is None else w{j}({v}))")
            continue
        if kind is DATETIME:  # _datetime_writer inlined
            env["datetime"], env["tz"], env["days"], env["day_of"] = datetime, _tz_of(write), {}, _day
            body += [
                f"    if type({v}) is datetime and {v}.tzinfo is not None:",
                f"        d = {v}.astimezone(tz)",
                "        k = d.toordinal()",
                f"        {s} = (days.get(k) or day_of(days, k, d)) + '%02d:%02d:%02d' % (d.hour, d.minute, d.second)",
                "    else:",
                f"        {s} = '' if {v} is None else w{j}({v})",
            ]  # fmt: skip
            cells.append(s)
            continue
        if kind is BOOL:
            cells.append(f"('' if {v} is None else 'Sim' if {v} else 'Não')")
            continue
        if kind.places is None:
            cells.append(f"('' if {v} is None else w{j}({v}))")
            continue
        env[f"f{j}"], env[f"t{j}"] = f"%.{kind.places}f", float(2 ** (kind.places + 1))
        body += [
            f"    if type({v}) is float and -HUGE < {v} < HUGE and {v} * t{j} % 2.0 != 1.0:",
            f"        {s} = f{j} % {v}",
            f"        if {s}[0] == '-' and not {s}.strip('-0.'):",
            f"            {s} = {s}[1:]",
            *([f"        {s} = {s}.replace('.', ',')"] if comma else []),
            f"    elif type({v}) is int and -EXACT_INT < {v} < EXACT_INT:",
            f"        {s} = (f{j} % {v}){comma}",
            "    else:",
            f"        {s} = '' if {v} is None else w{j}({v})",
        ]  # fmt: skip
        cells.append(s)
    unpack = f"    {', '.join(f'v{j}' for j in range(len(kinds)))}, = cells" if kinds else ""
    joined = f"';'.join(({', '.join(cells)},))" if cells else "''"
    if dotless and any(k.places is not None for k in kinds):
        joined += ".replace('.', ',')"
    code = "\n".join(["def line(cells):", unpack, *body, f"    return {joined} + '\\r\\n'", ""])
    exec(compile(code, "<csv line>", "exec"), env)  # our own code, made from the columns' kinds
    line: Callable[[Sequence[Any]], str] = env["line"]
    return line


class CsvFormatter:
    """Turns rows into pt-BR CSV lines (CRLF-terminated) for a fixed list of columns and a zone."""

    def __init__(self, columns: Iterable[ColumnSpec], tz: tzinfo) -> None:
        self.columns = [c if isinstance(c, Column) else Column(*c) for c in columns]
        self.tz = tz
        self._writers = [c.kind.cell_writer(tz) for c in self.columns]
        self._values: dict[type, Callable[[Any], Sequence[Any]]] = {}  # how a row of each type gives its cells
        self._cells = _line_of([c.kind for c in self.columns], self._writers)

    def header(self) -> str:
        zone = str(getattr(self.tz, "key", self.tz))
        names = [f"{c.header} ({zone})" if c.kind.zoned else c.header for c in self.columns]
        cells = [_quote(n) for n in names]
        if cells and cells[0].startswith("ID"):
            cells[0] = f'"{cells[0]}"'  # Excel takes a file starting with "ID" for SYLK and refuses it
        return ";".join(cells) + "\r\n"

    def line(self, row: Any) -> str:
        values = self._values.get(type(row)) or self._values_of(row)
        return self._cells(values(row))

    def lines(self, rows: Iterable[Any]) -> str:
        """The lines of several rows at once."""
        return "".join([self.line(row) for row in rows])

    def _values_of(self, row: Any) -> Callable[[Any], Sequence[Any]]:
        """The function that reads a row of this type's cells, in column order (made once per row type).

        Mappings and asyncpg.Record by key, anything else by attribute, as _getter; a misspelt key raises.
        """
        by_key = isinstance(row, Mapping) or hasattr(row, "keys")
        keys = [c.get for c in self.columns]
        if all(isinstance(k, str) for k in keys):
            names = [k for k in keys if isinstance(k, str)]
            if not names:
                found: Callable[[Any], Sequence[Any]] = lambda _row: ()  # noqa: E731
            else:
                one = (operator.itemgetter if by_key else operator.attrgetter)(*names)
                found = (lambda r: (one(r),)) if len(names) == 1 else one
        else:
            gets = [k if callable(k) else (operator.itemgetter(k) if by_key else operator.attrgetter(k)) for k in keys]
            found = lambda r: [get(r) for get in gets]  # noqa: E731
        self._values[type(row)] = found
        return found


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
    head = BOM + fmt.header()
    parts, n = [head], len(head)  # as Chunker, inlined: this loop runs once per row
    cells, by_type, values_of = fmt._cells, fmt._values, fmt._values_of
    if isinstance(rows, AsyncIterable):
        async for row in rows:
            line = cells((by_type.get(type(row)) or values_of(row))(row))
            parts.append(line)
            n += len(line)
            if n >= chunk_chars:
                yield "".join(parts).encode("utf-8")
                parts, n = [], 0
    else:
        for row in rows:
            line = cells((by_type.get(type(row)) or values_of(row))(row))
            parts.append(line)
            n += len(line)
            if n >= chunk_chars:
                yield "".join(parts).encode("utf-8")
                parts, n = [], 0
    if parts:
        yield "".join(parts).encode("utf-8")


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
