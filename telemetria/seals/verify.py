"""Verifying an exported track file against the daily seals (pure): the file read, its rows rebuilt, compared.

A track export (CSV: BOM, `;`, decimal comma, CRLF; or the XLSX workbook) is read into its rows grouped by
vehicle and local day (the service's zone, as the seals), each row rebuilt as its canonical line
(seals/canonical.py) from the file's time (in the zone its header names: `Data e hora (<zone>)`, converted to
UTC), latitude, longitude and speed; and into the seals it names (its seals table: seals/table.py). `judge`
compares one vehicle-day's rows with the lines of a seal's version restricted to the window the file names
(a whole day: the digest too) and names the first differing row: its number as a spreadsheet shows it (the
header is row 1), the line expected and the line found. The seals themselves come from the database
(seals/verify_store.py).

Blank rows are skipped wherever they are, and every row that is not the seals table's is a position: a row
inserted, moved or cut is a difference, not a reason to refuse the file. A file that is not a track export
at all raises NotAnExport (the API answers 400 naming `file`).
"""

from __future__ import annotations

import csv
import importlib
import io
import math
import re
import zipfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from telemetria.localtime import LOCAL_TZ, day_bounds
from telemetria.seals import canonical, table

MAX_ROWS = 2_000_000  # records in one file, blank and seals-table rows too (a year of one vehicle at 30 s is ~1.05 M)
MAX_DAYS = 400  # vehicle-days one file may name (rows or seals): each is judged against the database
# What one upload to the service may cost (issue 33): the CLI reads up to the bounds above; a file sent to
# POST /api/v1/seals/verify at most these many records (about 40 days of one vehicle at 30 s: a 2.7 MB workbook
# of 500,000 repeated rows took 68 s) and vehicle-days (each rebuilds its seal's lines from the fixes).
WEB_MAX_ROWS = 120_000
WEB_MAX_DAYS = 62
MAX_SHEETS = 16  # worksheets in a workbook (the export has at most 6; 20,000 empty ones took 23 s to open)
MAX_XLSX_UNPACKED = 256 * 1024 * 1024  # bytes the workbook's parts may unpack to (a zip bomb is refused)...
XLSX_RATIO = 30  # ...and at most this many times the upload (the service's workbooks unpack to about 5x)
MAX_SHARED_STRINGS = 32 * 1024 * 1024  # bytes of sharedStrings.xml, which openpyxl holds whole in memory
MAX_COLUMNS = 64  # a sheet's columns read (the track has 14): a row is not widened to a cell at column XFD
MAX_DIGITS = 18  # an id's digits at most (int() refuses more than 4300; the database's ids are 32-bit)
# Times and days outside these years are not read (a zone's offset or a day's bounds would overflow datetime).
FIRST_YEAR, LAST_YEAR = 2, 9998
_ZONED = re.compile(r"^Data e hora \((.+)\)$")
_NUMBER = re.compile(r"^-?\d+(,\d+)?$")  # as the CSV writes numbers: decimal comma, no thousands separator
_SHA = re.compile(r"^[0-9a-f]{64}$")
_WHEN = "%d/%m/%Y %H:%M:%S"
REQUIRED = ("Veículo (id)", "Latitude", "Longitude", "Velocidade (km/h)")


class NotAnExport(ValueError):
    """The file is not a track export this service can read; the message starts with `file:`."""


@dataclass(frozen=True, slots=True)
class Named:
    """A seal as the file names it (a row of its seals table)."""

    vehicle_id: int
    plate: str
    day: date
    version: int
    fixes: int
    sha256: str
    start: datetime  # aware, UTC
    end: datetime
    row: int  # where the file names it


@dataclass(slots=True)
class Group:
    """One vehicle-day's rows in the file: (row number, canonical line) in file order."""

    vehicle_id: int
    plate: str
    day: date
    rows: list[tuple[int, str]] = field(default_factory=list)


@dataclass(slots=True)
class Parsed:
    kind: str  # "csv" or "xlsx"
    zone: str  # the zone the file's times are in
    groups: dict[tuple[int, date], Group]
    named: dict[tuple[int, date], Named]
    last_row: int  # the file's last row number

    def keys(self) -> list[tuple[int, date]]:
        """Every vehicle-day the file has rows of or names a seal of, by vehicle and day."""
        return sorted({*self.groups, *self.named})


@dataclass(frozen=True, slots=True)
class Version:
    """One stored version of a vehicle-day's seal and its canonical lines (the whole day, in time order)."""

    number: int
    fixes: int
    sha256: str
    lines: Sequence[str] | None  # None: not fetched, or the day's fixes are no longer kept (retention)


@dataclass(frozen=True, slots=True)
class Difference:
    row: int
    expected: str | None  # the seal's line (None: the file has a row the seal has not)
    found: str | None  # the file's row rebuilt (None: the file lacks the seal's line)

    def as_json(self) -> dict[str, Any]:
        return {
            "row": self.row, "expected": _bare(self.expected), "found": _bare(self.found),
            "expected_shown": shown(self.expected), "found_shown": shown(self.found),
        }  # fmt: skip


def shown(line: str | None, zone: ZoneInfo | None = None) -> str | None:
    """A canonical line as a track export shows the row (issue 36): the local time (dd/mm/aaaa HH:MM:SS), latitude
    and longitude with 6 decimals and the speed with 1, decimal comma, "; " between the cells. The canonical
    `2026-12-04T16:00:09Z;-10.437512;-62.466830;40.6` reads `04/12/2026 12:00:09; -10,437512; -62,466830; 40,6`."""
    if line is None:
        return None
    cells = line.rstrip("\n").split(";")
    t = _utc_of(cells[0]) if cells else None
    if t is None or len(cells) != 4:
        return line.rstrip("\n")
    local = t.astimezone(zone or LOCAL_TZ)
    return "; ".join([f"{local:%d/%m/%Y %H:%M:%S}", *(c.replace(".", ",") for c in cells[1:])])


def _bare(line: str | None) -> str | None:
    return None if line is None else line.rstrip("\n")


@dataclass(frozen=True, slots=True)
class DayResult:
    vehicle_id: int
    plate: str
    day: date
    version: int | None
    sha256: str | None
    rows: int
    valid: bool
    first_difference: Difference | None
    reason: str | None
    verdict: str = ""  # AUTHENTIC, NOT_SEALED_YET, ALTERED, UNCHECKABLE (empty: by `valid`)

    def as_json(self) -> dict[str, Any]:
        return {
            "date": self.day.isoformat(), "vehicle_id": self.vehicle_id, "plate": self.plate,
            "version": self.version, "sha256": self.sha256, "rows": self.rows, "valid": self.valid,
            "verdict": self.word(),
            "first_difference": None if self.first_difference is None else self.first_difference.as_json(),
            "reason": self.reason,
        }  # fmt: skip

    def word(self) -> str:
        return self.verdict or (AUTHENTIC if self.valid else ALTERED)


# The answer in three words (issue 36), per day and for the file: authentic (the rows match a seal), not sealed
# yet (its day has no seal yet: sealed once the day is over; the rows match the data stored today), altered (a
# row differs: the first one named, both sides as the file shows them). A day whose fixes retention removed has
# nothing to compare with: uncheckable.
AUTHENTIC, NOT_SEALED_YET, ALTERED, UNCHECKABLE = "autentico", "ainda_nao_selado", "alterado", "nao_verificavel"
ORDER = (ALTERED, UNCHECKABLE, NOT_SEALED_YET, AUTHENTIC)  # the file's verdict: its worst day's


def report(results: Sequence[DayResult]) -> dict[str, Any]:
    """The answer: valid when there is a day and every day is valid; `verdict` the worst day's word."""
    valid = bool(results) and all(r.valid for r in results)
    reason = None if results else "o arquivo não tem posições nem selos"
    words = {r.word() for r in results}
    verdict = next((w for w in ORDER if w in words), ALTERED)
    return {"valid": valid, "verdict": verdict, "days": [r.as_json() for r in results], "reason": reason}


# Comparing


def within(lines: Iterable[str], start: datetime, end: datetime) -> list[str]:
    """The canonical lines whose time is in [start, end) (the line starts with its UTC second)."""
    a, b = table.iso(start), table.iso(end)
    return [x for x in lines if a <= x[:20] < b]


def arrived_since(found: Sequence[tuple[int, str]], stored: Sequence[str]) -> bool:
    """Whether the file's rows are the stored lines in order with only some stored lines missing from the file: what
    a day not sealed yet looks like when positions arrived after the export (pure)."""
    it = iter(stored)
    return len(found) < len(stored) and all(any(line == want for want in it) for _, line in found)


def first_difference(found: Sequence[tuple[int, str]], expected: Sequence[str], end_row: int) -> Difference | None:
    """Where the file's rows first differ from the expected lines; `end_row` names a line missing at the end."""
    for i, want in enumerate(expected):
        if i >= len(found):
            return Difference(end_row, want, None)
        row, got = found[i]
        if got != want:
            return Difference(row, want, got)
    if len(found) > len(expected):
        row, got = found[len(expected)]
        return Difference(row, None, got)
    return None


def _span(group: Group) -> tuple[datetime, datetime]:
    """From the first row's second to just after the last row's (the window when the file names no seal)."""
    times = [_utc_of(line) for _, line in group.rows]
    known = [t for t in times if t is not None]
    start, end = day_bounds(group.day)
    if not known:
        return start, end
    return min(known), max(known) + timedelta(seconds=1)


def _utc_of(line: str) -> datetime | None:
    try:
        return datetime.strptime(line[:20], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None


def judge(
    key: tuple[int, date],
    group: Group | None,
    named: Named | None,
    versions: Sequence[Version],
    plate: str,
    current: Sequence[str] | None = None,
) -> DayResult:
    """One vehicle-day of the file against its seal: the version named (or, none named, any version); a day with
    no seal yet against `current`, the canonical lines of the fixes stored now (None: not looked up)."""
    vehicle_id, day = key
    rows = group.rows if group else []
    plate = group.plate if group and group.plate else named.plate if named else plate
    end_row = (rows[-1][0] + 1) if rows else (named.row if named else 0)

    def result(v: Version | None, diff: Difference | None, reason: str | None, valid: bool) -> DayResult:
        number = v.number if v else named.version if named else None
        sha = v.sha256 if v else named.sha256 if named else None
        word = UNCHECKABLE if reason == gone else ""
        return DayResult(vehicle_id, plate, day, number, sha, len(rows), valid, diff, reason, word)

    gone = "as posições deste dia já não são guardadas (retenção): não há com o que comparar"
    if not versions:  # an unknown vehicle, one outside the caller's scope, a day not sealed: nothing of a seal said
        if current is not None and group is not None:  # not sealed yet: the rows against the data stored now
            start, end = _span(group)
            stored = within(current, start, end)
            diff = first_difference(rows, stored, end_row)
            if diff is None or arrived_since(rows, stored):
                # Every row of the file is stored as it says; positions a tracker stored and forwarded (Art. 15
                # §3) may still arrive for the day after the export: that is the day still open, not an alteration.
                late = len(stored) - len(rows)
                since = f" ({late} posição(ões) do período chegaram depois da exportação)" if late else ""
                reason = ("dia ainda não selado: o selo deste dia é gerado depois que ele termina; tente novamente "
                          "amanhã. As linhas conferem com os dados guardados hoje" + since)  # fmt: skip
                return DayResult(vehicle_id, plate, day, None, None, len(rows), False, None, reason, NOT_SEALED_YET)
            reason = "dia ainda não selado, e as linhas do arquivo não conferem com os dados guardados"
            return DayResult(vehicle_id, plate, day, None, None, len(rows), False, diff, reason, ALTERED)
        reason = "dia não selado: não há selo deste veículo neste dia"
        return DayResult(vehicle_id, plate, day, None, None, len(rows), False, None, reason)
    if named is None:
        assert group is not None  # a key comes from the rows or from the seals table
        start, end = _span(group)
        diffs = []
        for v in sorted(versions, key=lambda v: -v.number):
            if v.lines is None:
                continue
            diff = first_difference(rows, within(v.lines, start, end), end_row)
            if diff is None:
                reason = (
                    f"o arquivo não nomeia o selo deste dia: as linhas conferem com a versão {v.number} entre a "
                    "primeira e a última posição do dia no arquivo"
                )
                return result(v, None, reason, True)
            diffs.append((v, diff))
        if not diffs:
            return result(None, None, gone, False)
        v, diff = diffs[0]
        return result(v, diff, "o arquivo não nomeia o selo deste dia e nenhuma versão do selo confere", False)

    by_number = {o.number: o for o in versions}
    named_version = by_number.get(named.version)
    if named_version is None:
        have = ", ".join(str(n) for n in sorted(by_number))
        return result(None, None, f"a versão {named.version} do selo deste dia não existe (há: {have})", False)
    v = named_version
    if v.lines is None:
        return result(v, None, gone, False)
    reasons = []
    if named.sha256 != v.sha256:
        reasons.append(f"o SHA-256 que o arquivo nomeia não é o da versão {v.number} do selo")
    if canonical.digest(v.lines) != v.sha256 or len(v.lines) != v.fixes:
        reasons.append(f"as linhas guardadas da versão {v.number} não dão o SHA-256 do selo")
    diff = first_difference(rows, within(v.lines, named.start, named.end), end_row)
    if diff is None and table.whole_day(day, named.start, named.end):
        if canonical.digest(line for _, line in rows) != v.sha256:
            reasons.append("o SHA-256 das linhas do dia no arquivo não é o do selo")
    if diff is not None:
        others = [
            o.number
            for o in versions
            if o.number != v.number
            and o.lines is not None
            and first_difference(rows, within(o.lines, named.start, named.end), 0) is None
        ]
        if others:  # cut while the seal was behind (a late fix not yet sealed), or after: its rows are sealed
            match = by_number[others[-1]]
            reason = (
                f"o arquivo nomeia a versão {v.number} do selo, mas suas linhas conferem com a versão "
                f"{match.number} (uma posição atrasada foi selada depois de o arquivo ser gerado, ou antes)"
            )
            return result(match, None, reason, True)
        reasons.append(f"a linha {diff.row} difere da versão {v.number} do selo")
    return result(v, diff, "; ".join(reasons) or None, not reasons)


@dataclass(frozen=True, slots=True)
class Looked:
    """What the database says of one vehicle-day of a file: its seal's versions (empty when the vehicle is unknown,
    outside the caller's scope, or the day not sealed) and, for a day not sealed yet, the lines of its fixes now."""

    key: tuple[int, date]
    versions: list[Version]
    current: list[str] | None


def judge_all(parsed: Parsed, looked: Sequence[Looked]) -> list[DayResult]:
    """Each vehicle-day of the file judged against what the database said of it (pure: the service runs it in its
    worker process, where the file was read, so that 100,000 rows are not compared on the event loop)."""
    return [judge(k.key, parsed.groups.get(k.key), parsed.named.get(k.key), k.versions, "", k.current) for k in looked]


# Reading the file


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise NotAnExport(f"file: unknown time zone {name!r} in the header 'Data e hora ({name})'") from None


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    text = value.strip() if isinstance(value, str) else ""
    if text.isdigit() and text.isascii() and len(text) <= MAX_DIGITS:
        return int(text)
    return None


def _number(value: Any) -> float | None:
    """A cell's number: a numeric cell, or text as the CSV writes numbers (`-10,437512`)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str) and _NUMBER.match(value.strip()):
        return float(value.strip().replace(",", "."))
    return None


def _time(value: Any, zone: ZoneInfo, previous: datetime | None) -> datetime | None:
    """The row's instant in UTC: a date cell (naive, in the file's zone) or `dd/mm/aaaa HH:MM:SS` text."""
    if isinstance(value, datetime):
        naive = value.replace(tzinfo=None)
        # A spreadsheet's date is a fraction of a day: 10:15:30 may come back as 10:15:29.999999.
        naive = (naive + timedelta(microseconds=500)).replace(microsecond=0) if naive.microsecond else naive
    elif isinstance(value, str):
        try:
            naive = datetime.strptime(value.strip(), _WHEN)
        except ValueError:
            return None
    else:
        return None
    if not FIRST_YEAR <= naive.year <= LAST_YEAR:
        return None  # 01/01/0001 east of UTC or 31/12/9999 west of it overflows: a row that cannot be read
    t = naive.replace(tzinfo=zone).astimezone(UTC)
    if previous is not None and t < previous:  # a repeated hour when clocks go back: the second one
        later = naive.replace(tzinfo=zone, fold=1).astimezone(UTC)
        t = later if later >= previous else t
    return t


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, datetime):
        return f"{value:{_WHEN}}"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Builder:
    """Rows into vehicle-day groups of canonical lines, and the seals table into Named."""

    def __init__(self, kind: str, zone_name: str, max_days: int) -> None:
        self.zone = _zone(zone_name)
        self.max_days = max_days
        self.parsed = Parsed(kind, zone_name, {}, {}, 0)
        self.last: tuple[int, date, datetime | None] | None = None  # vehicle, day and time of the row before
        self.days: set[tuple[int, date]] = set()  # every vehicle-day named, by rows or by the seals table

    def day(self, key: tuple[int, date]) -> None:
        if key not in self.days:
            self.days.add(key)
            if len(self.days) > self.max_days:
                raise NotAnExport(f"file: more than {self.max_days} vehicle-days in one file; verify it in parts")

    def position(self, row: int, vid: Any, plate: Any, when: Any, lat: Any, lon: Any, speed: Any) -> None:
        vehicle = _int(vid)
        previous = self.last[2] if self.last and vehicle in (None, self.last[0]) else None
        t = _time(when, self.zone, previous)
        la, lo = _number(lat), _number(lon)
        sp = None if speed is None or (isinstance(speed, str) and not speed.strip()) else _number(speed)
        bad_speed = sp is None and not (speed is None or (isinstance(speed, str) and not speed.strip()))
        if t is not None and la is not None and lo is not None and not bad_speed:
            line = canonical.line(t, la, lo, sp)
        else:  # rebuilt from the cells as they are: it matches no seal's line
            utc = canonical.utc_second(t) if t is not None else _text(when)
            line = f"{utc};{_text(lat)};{_text(lon)};{_text(speed)}\n"
        if vehicle is None or t is None:
            if self.last is None:
                raise NotAnExport(f"file: row {row}: a position needs its vehicle id and its time")
            # Kept where it stands: with the rows before it, where it differs from the seal.
            vehicle = vehicle if vehicle is not None else self.last[0]
            day = self.last[1] if t is None else t.astimezone(LOCAL_TZ).date()
        else:
            day = t.astimezone(LOCAL_TZ).date()
        key = (vehicle, day)
        group = self.parsed.groups.get(key)
        if group is None:
            self.day(key)
            group = self.parsed.groups[key] = Group(vehicle, _text(plate).strip(), day)
        group.rows.append((row, line))
        self.last = (vehicle, day, t if t is not None else (self.last[2] if self.last else None))

    def seal(self, row: int, cells: Sequence[Any]) -> None:
        cells = [*cells, *([None] * (len(table.COLUMNS) - len(cells)))][: len(table.COLUMNS)]
        vid, plate, day, version, fixes, sha, start, end = cells
        parsed = (_int(vid), _day(day), _int(version), _int(fixes), _instant(start), _instant(end))
        sha_text = _text(sha).strip()
        if any(x is None for x in parsed) or not _SHA.match(sha_text):
            raise NotAnExport(f"file: row {row}: not a row of the seals table ({'; '.join(table.COLUMNS)})")
        v, d, n, f, a, b = parsed
        assert v is not None and d is not None and n is not None and f is not None and a is not None
        assert b is not None
        key = (v, d)
        if key in self.parsed.named:
            raise NotAnExport(f"file: row {row}: a second seal named for vehicle {v} on {d:%d/%m/%Y}")
        self.day(key)
        self.parsed.named[key] = Named(v, _text(plate).strip(), d, n, f, sha_text, a, b, row)


def _day(value: Any) -> date | None:
    day = _any_day(value)
    return day if day is not None and FIRST_YEAR <= day.year <= LAST_YEAR else None


def _any_day(value: Any) -> date | None:
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        for fmt in ("%d/%m/%Y", "%Y-%m-%d"):
            try:
                return datetime.strptime(value.strip(), fmt).date()
            except ValueError:
                pass
    return None


def _instant(value: Any) -> datetime | None:
    """`2026-03-02T04:00:00Z` (or a date cell, UTC)."""
    try:
        t = _any_instant(value)
    except OverflowError:  # an aware cell at the edge of the calendar
        return None
    return t if t is not None and FIRST_YEAR <= t.year <= LAST_YEAR else None


def _any_instant(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
    if isinstance(value, str) and value.strip().endswith("Z"):
        try:
            return datetime.strptime(value.strip(), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except ValueError:
            return None
    return None


def _header(cells: Sequence[Any]) -> tuple[dict[str, int], str] | None:
    """The columns of a track's header row and the zone it names, or None when it is not one."""
    names = [_text(c).strip() for c in cells]
    zoned = [(i, m.group(1)) for i, n in enumerate(names) if (m := _ZONED.match(n))]
    if not zoned or any(n not in names for n in REQUIRED):
        return None
    index = {n: names.index(n) for n in REQUIRED}
    index["Data e hora"] = zoned[0][0]
    index["Placa"] = names.index("Placa") if "Placa" in names else -1
    return index, zoned[0][1]


NOT_TRACK = (
    "file: not a track export of this service (a CSV or XLSX of /relatorios/track whose header names "
    "'Veículo (id)', 'Data e hora (<fuso>)', 'Latitude', 'Longitude', 'Velocidade (km/h)')"
)


@dataclass(frozen=True, slots=True)
class Bounds:
    """What reading one file may cost: records (blank ones and the seals table's too) and vehicle-days."""

    rows: int
    days: int


def cli_bounds() -> Bounds:
    return Bounds(MAX_ROWS, MAX_DAYS)


def web_bounds() -> Bounds:
    """The bounds of a file sent to the service (read when called: the module's constants may be changed)."""
    return Bounds(min(MAX_ROWS, WEB_MAX_ROWS), min(MAX_DAYS, WEB_MAX_DAYS))


def _counted(rows: Iterable[Sequence[Any]], most: int) -> Iterator[tuple[int, Sequence[Any]]]:
    """Records numbered from 1, every one counted against `most` (blank ones and the seals table's too)."""
    for n, cells in enumerate(rows, 1):
        if n > most:
            raise NotAnExport(f"file: more than {most} rows in one file")
        yield n, cells


def _read(
    kind: str, rows: Iterator[tuple[int, Sequence[Any]]], seals: Iterator[tuple[int, Sequence[Any]]], max_days: int
) -> Parsed:
    """Rows of the data (header first, blank rows skipped) and of a separate seals table (XLSX) into Parsed; both
    streamed (a row is not kept once read)."""
    head: tuple[dict[str, int], str] | None = None
    for _n, cells in rows:
        if any(_text(c).strip() for c in cells):
            head = _header(cells)
            break
    if head is None:
        raise NotAnExport(NOT_TRACK)
    index, zone = head
    b = _Builder(kind, zone, max_days)

    def at(cells: Sequence[Any], name: str) -> Any:
        return cells[index[name]] if 0 <= index[name] < len(cells) else None

    last = 0
    for n, cells in rows:
        last = n
        if not any(_text(c).strip() for c in cells):
            continue
        first = _text(cells[0]).strip()
        if first == table.CSV_TITLE:
            continue  # the seals table's header (CSV)
        if first == table.CSV_MARK:
            b.seal(n, cells[1:])
            continue
        b.position(
            n, at(cells, "Veículo (id)"), at(cells, "Placa"), at(cells, "Data e hora"), at(cells, "Latitude"),
            at(cells, "Longitude"), at(cells, "Velocidade (km/h)"),
        )  # fmt: skip
    for n, cells in seals:
        if not any(_text(c).strip() for c in cells) or _text(cells[0]).strip() == table.COLUMNS[0]:
            continue
        b.seal(n, cells)
    b.parsed.last_row = last
    return b.parsed


def parse_csv(data: bytes, bounds: Bounds | None = None) -> Parsed:
    """A pt-BR track CSV (BOM optional) into Parsed."""
    bounds = bounds or cli_bounds()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise NotAnExport(f"{NOT_TRACK}: not UTF-8 text") from None
    if "\x00" in text:
        raise NotAnExport(f"{NOT_TRACK}: it holds NUL characters")

    def records() -> Iterator[Sequence[Any]]:
        try:
            yield from csv.reader(io.StringIO(text, newline=""), delimiter=";")
        except csv.Error as e:
            raise NotAnExport(f"{NOT_TRACK}: {e}") from None

    return _read("csv", _counted(records(), bounds.rows), iter(()), bounds.days)


def parse_xlsx(data: bytes, bounds: Bounds | None = None) -> Parsed:
    """The track workbook (the data sheet and the "Selos" sheet) into Parsed."""
    try:
        return _parse_xlsx(data, bounds or cli_bounds())
    except NotAnExport:
        raise
    except Exception as e:  # a damaged or foreign zip, a worksheet's XML cut short, a string index out of range...:
        raise NotAnExport(f"{NOT_TRACK}: not a workbook it can read ({type(e).__name__})") from None


def _parse_xlsx(data: bytes, bounds: Bounds) -> Parsed:
    openpyxl = importlib.import_module("openpyxl")  # read only here: imported when a workbook comes

    most = min(MAX_XLSX_UNPACKED, XLSX_RATIO * len(data))
    with zipfile.ZipFile(io.BytesIO(data)) as z:  # the sizes it declares bound what zipfile unpacks
        parts = z.infolist()
        if sum(i.file_size for i in parts) > most:
            raise NotAnExport(f"file: the workbook unpacks to more than {most} bytes")
        if any(i.filename.lower().endswith("sharedstrings.xml") and i.file_size > MAX_SHARED_STRINGS for i in parts):
            raise NotAnExport(f"file: the workbook's shared strings unpack to more than {MAX_SHARED_STRINGS} bytes")
        count = sum(1 for i in parts if i.filename.lower().startswith("xl/worksheets/") and i.filename.endswith(".xml"))
        if count > MAX_SHEETS:
            raise NotAnExport(f"file: the workbook has {count} sheets; a track export has at most {MAX_SHEETS}")
    wb = openpyxl.load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    try:
        for ws in wb.worksheets:
            ws.reset_dimensions()  # the dimension a sheet declares (A1:XFD1048576) would pad every row and the end

        def cells(ws: Any) -> Iterator[Sequence[Any]]:
            return ws.iter_rows(max_col=MAX_COLUMNS, values_only=True)  # type: ignore[no-any-return]

        sheets = [ws for ws in wb.worksheets if ws.title != table.SHEET]
        ordered = sheets[1:2] + sheets[:1] + sheets[2:]  # the data sheet is the second (after "Consulta")
        for ws in ordered:
            top = [row for _, row in zip(range(30), cells(ws), strict=False)]
            if any(_header(row) for row in top):
                seal_sheet = wb[table.SHEET] if table.SHEET in wb.sheetnames else None
                seals = _counted(cells(seal_sheet), bounds.rows) if seal_sheet is not None else iter(())
                return _read("xlsx", _counted(cells(ws), bounds.rows), seals, bounds.days)
        raise NotAnExport(NOT_TRACK)
    finally:
        wb.close()


def parse(data: bytes, bounds: Bounds | None = None) -> Parsed:
    """A track export, CSV or XLSX (told apart by their bytes, not by the name), into Parsed; `bounds`: what it may
    cost (None: the CLI's, cli_bounds())."""
    if data[:4] == b"PK\x03\x04":
        return parse_xlsx(data, bounds)
    return parse_csv(data, bounds)
