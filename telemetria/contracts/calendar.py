"""The school calendar: which days of a school year are school days, and what a valid school year is; pure.

School days are Monday to Friday from the year's start to its end (both included), minus the national
holidays and pontos facultativos (`holidays.py`), minus the days the Secretaria marks as without school
(each with its reason: a municipal holiday, a recess, rain that closed the roads), plus the extra school days
it marks (a Saturday of classes, or a ponto facultativo with classes).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from telemetria.contracts.holidays import Holiday, national_holidays
from telemetria.http import FieldError

FIRST_YEAR, LAST_YEAR = 2000, 2100  # the years a route's school_year may take


class CalendarError(FieldError):
    """A school year that cannot be stored; the message names the field at fault."""


@dataclass(frozen=True, slots=True)
class MarkedDay:
    day: date
    reason: str | None

    def as_json(self) -> dict[str, str | None]:
        return {"date": self.day.isoformat(), "reason": self.reason}


@dataclass(frozen=True, slots=True)
class SchoolYear:
    year: int
    start: date
    end: date
    no_school_days: tuple[MarkedDay, ...] = ()
    extra_school_days: tuple[MarkedDay, ...] = ()


def _days(start: date, end: date) -> Iterator[date]:
    for n in range((end - start).days + 1):
        yield start + timedelta(days=n)


def holidays_by_day(year: int) -> dict[date, Holiday]:
    return {h.day: h for h in national_holidays(year)}


def why_not(day: date, off: dict[date, Holiday]) -> str | None:
    """Why `day` is not a school day before the Secretaria's marks (weekend, holiday), or None if it is one."""
    if day.isoweekday() == 6:
        return "a Saturday"
    if day.isoweekday() == 7:
        return "a Sunday"
    h = off.get(day)
    return f"{h.name} ({h.kind})" if h else None


def school_days(sy: SchoolYear) -> list[date]:
    """The school days of a (valid) school year, in order."""
    off = holidays_by_day(sy.year)
    closed = {m.day for m in sy.no_school_days}
    extra = {m.day for m in sy.extra_school_days}
    return [d for d in _days(sy.start, sy.end) if d in extra or (why_not(d, off) is None and d not in closed)]


def check(sy: SchoolYear) -> None:
    """Raise CalendarError naming the first field at fault; a school year that passes can be stored as is."""
    if not FIRST_YEAR <= sy.year <= LAST_YEAR:
        raise CalendarError(f"year: must be from {FIRST_YEAR} to {LAST_YEAR}", "year")
    for name, d in (("start", sy.start), ("end", sy.end)):
        if d.year != sy.year:
            raise CalendarError(f"{name}: {d.isoformat()} is not in {sy.year}", name)
    if sy.end < sy.start:
        raise CalendarError(f"end: {sy.end.isoformat()} is before start {sy.start.isoformat()}", "end")
    off = holidays_by_day(sy.year)
    seen: dict[date, str] = {}
    _marks(sy, "no_school_days", sy.no_school_days, seen, off, reason_required=True)
    _marks(sy, "extra_school_days", sy.extra_school_days, seen, off, reason_required=False)


def _marks(
    sy: SchoolYear, name: str, marks: Sequence[MarkedDay], seen: dict[date, str], off: dict[date, Holiday],
    *, reason_required: bool,
) -> None:  # fmt: skip
    for n, m in enumerate(marks):
        field = f"{name}[{n}]"
        d = m.day.isoformat()
        if reason_required and not (m.reason and m.reason.strip()):
            raise CalendarError(f"{field}.reason: say why there is no school on {d}", f"{field}.reason")
        if not sy.start <= m.day <= sy.end:
            raise CalendarError(
                f"{field}.date: {d} is outside the school year ({sy.start.isoformat()} to {sy.end.isoformat()})",
                f"{field}.date",
            )
        if m.day in seen:
            raise CalendarError(f"{field}.date: {d} is already listed in {seen[m.day]}", f"{field}.date")
        seen[m.day] = field
        anyway = why_not(m.day, off)
        if reason_required and anyway:
            raise CalendarError(f"{field}.date: {d} has no school anyway: it is {anyway}", f"{field}.date")
        if not reason_required and anyway is None:
            raise CalendarError(f"{field}.date: {d} is already a school day", f"{field}.date")


def days_off(sy: SchoolYear) -> list[dict[str, str]]:
    """Every weekday of the school year without school, with why: for pages and for checking a calendar."""
    off = holidays_by_day(sy.year)
    extra = {m.day for m in sy.extra_school_days}
    closed = {m.day: m.reason or "" for m in sy.no_school_days}
    out = []
    for d in _days(sy.start, sy.end):
        if d in extra or d.isoweekday() > 5:
            continue
        if d in off:
            out.append({"date": d.isoformat(), "kind": off[d].kind, "reason": off[d].name})
        elif d in closed:
            out.append({"date": d.isoformat(), "kind": "sem_aula", "reason": closed[d]})
    return out
