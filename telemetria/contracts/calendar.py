"""The school calendar: which days of a school year are school days, and what a valid school year is; pure.

School days are Monday to Friday from the year's start to its end (both included), minus the national
holidays and pontos facultativos (`holidays.py`), minus the days the Secretaria marks as without school
(each with its reason: a municipal holiday, a recess, rain that closed the roads), plus the extra school days
it marks (a Saturday of classes, or a ponto facultativo with classes).

The school day as it was (issue 31): a day without school may name the shifts (manhã, tarde, noite) it had no
school in; the day stays a school day for the others, and only the runs of those shifts are not due (a run's
shift comes from its timetable: `shift_of`). A schedule change (an early dismissal, a late start) says that on a
date a shift's runs were due from another time (measurement/schoolday.py moves them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, time, timedelta
from typing import Literal

from telemetria.contracts.holidays import Holiday, national_holidays
from telemetria.http import FieldError

FIRST_YEAR, LAST_YEAR = 2000, 2100  # the years a route's school_year may take
Shift = Literal["manha", "tarde", "noite"]
ChangeKind = Literal["saida_antecipada", "entrada_atrasada"]
SHIFTS: tuple[Shift, ...] = ("manha", "tarde", "noite")
AFTERNOON, EVENING = time(12, 0), time(18, 0)  # a run starting from 12:00 is the afternoon's, from 18:00 the night's


def shift_of(start: time) -> Shift:
    """The shift a run belongs to, by the local time its window starts (its timetable)."""
    return "manha" if start < AFTERNOON else "tarde" if start < EVENING else "noite"


class CalendarError(FieldError):
    """A school year that cannot be stored; the message names the field at fault."""


@dataclass(frozen=True, slots=True)
class MarkedDay:
    day: date
    reason: str | None
    shifts: tuple[Shift, ...] | None = None  # a day without school in these shifts only; None: the whole day

    def as_json(self) -> dict[str, object]:
        out: dict[str, object] = {"date": self.day.isoformat(), "reason": self.reason}
        return out | {"shifts": list(self.shifts)} if self.shifts is not None else out

    @property
    def whole(self) -> bool:
        return self.shifts is None or set(self.shifts) >= set(SHIFTS)


@dataclass(frozen=True, slots=True)
class ScheduleChange:
    """On `day`, the runs of `shift` were due from `runs_due_from` (local) instead of their timetable: those due
    after it (an early dismissal, `saida_antecipada`, the default) or those due before it (a late start,
    `entrada_atrasada`)."""

    day: date
    shift: Shift
    runs_due_from: time
    reason: str
    kind: ChangeKind = "saida_antecipada"

    def as_json(self) -> dict[str, str]:
        due = self.runs_due_from.strftime("%H:%M")
        return {
            "date": self.day.isoformat(),
            "shift": self.shift,
            "runs_due_from": due,
            "reason": self.reason,
            "kind": self.kind,
        }


@dataclass(frozen=True, slots=True)
class SchoolYear:
    year: int
    start: date
    end: date
    no_school_days: tuple[MarkedDay, ...] = ()
    extra_school_days: tuple[MarkedDay, ...] = ()
    schedule_changes: tuple[ScheduleChange, ...] = ()


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
    closed = {m.day for m in sy.no_school_days if m.whole}
    extra = {m.day for m in sy.extra_school_days}
    return [d for d in _days(sy.start, sy.end) if d in extra or (why_not(d, off) is None and d not in closed)]


def shifts_off(sy: SchoolYear) -> dict[date, frozenset[Shift]]:
    """The school days without school in some shifts only: day → those shifts."""
    return {m.day: frozenset(m.shifts) for m in sy.no_school_days if m.shifts is not None and not m.whole}


def schedule_changes(sy: SchoolYear) -> dict[tuple[date, Shift], ScheduleChange]:
    return {(c.day, c.shift): c for c in sy.schedule_changes}


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
    for n, m in enumerate(sy.no_school_days):
        if m.shifts is not None and (not m.shifts or len(set(m.shifts)) != len(m.shifts)):
            field = f"no_school_days[{n}].shifts"
            raise CalendarError(f"{field}: name each shift once (manha, tarde, noite), or leave it out for the whole "
                                "day", field)  # fmt: skip
    school = set(school_days(sy))
    partly = shifts_off(sy)
    changed: set[tuple[date, str]] = set()
    for n, c in enumerate(sy.schedule_changes):
        field = f"schedule_changes[{n}]"
        iso = c.day.isoformat()
        if not c.reason.strip():
            why = f"{field}.reason"
            raise CalendarError(f"{why}: say why the runs of {iso} were due at another time", why)
        if c.day not in school:
            raise CalendarError(f"{field}.date: {iso} is not a school day", f"{field}.date")
        if c.shift in partly.get(c.day, ()):
            raise CalendarError(f"{field}.shift: {iso} has no school in the {c.shift} shift", f"{field}.shift")
        if (c.day, c.shift) in changed:
            raise CalendarError(f"{field}.date: {iso} {c.shift} is already listed", f"{field}.date")
        changed.add((c.day, c.shift))


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
    closed = {m.day: m.reason or "" for m in sy.no_school_days if m.whole}
    out = []
    for d in _days(sy.start, sy.end):
        if d in extra or d.isoweekday() > 5:
            continue
        if d in off:
            out.append({"date": d.isoformat(), "kind": off[d].kind, "reason": off[d].name})
        elif d in closed:
            out.append({"date": d.isoformat(), "kind": "sem_aula", "reason": closed[d]})
    return out


def shifts_json(sy: SchoolYear) -> list[dict[str, object]]:
    """The school days without school in some shifts, with which and why: for pages."""
    return [m.as_json() for m in sy.no_school_days if m.shifts is not None and not m.whole]
