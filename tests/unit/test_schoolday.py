"""The school day as it was (measurement/schoolday.py, contracts/calendar.py shifts): pure."""

from __future__ import annotations

from datetime import date, datetime, time
from decimal import Decimal as D

from telemetria.contracts import calendar
from telemetria.contracts.calendar import ScheduleChange, Shift, shift_of
from telemetria.localtime import LOCAL_TZ, day_bounds
from telemetria.measurement.due import DueRun
from telemetria.measurement.model import RunPlan
from telemetria.measurement.schoolday import follow, run_shift, widened

DAY = date(2026, 3, 9)


def at(hh: int, mm: int = 0) -> float:
    return datetime.combine(DAY, time(hh, mm), LOCAL_TZ).timestamp()


def run(no: int, start: float, end: float, due: float | None) -> DueRun:
    p = RunPlan(5, DAY, no, start, end, 0.0, 1000.0, D("0.5"), due)
    return DueRun(p, "L05", D("5.5"), (1,), D("2.75"))


MORNING = run(1, at(5, 30), at(9), at(6, 30))
AFTERNOON = run(2, at(11, 30), at(15), at(12, 30))


def test_a_runs_shift_is_its_timetables() -> None:
    assert [shift_of(time(h)) for h in (0, 11, 12, 17, 18, 23)] == ["manha", "manha", "tarde", "tarde", "noite",
                                                                     "noite"]  # fmt: skip
    assert (run_shift(MORNING.plan), run_shift(AFTERNOON.plan)) == ("manha", "tarde")
    d0, d1 = (b.timestamp() for b in day_bounds(DAY))
    assert run_shift(run(1, d0, d1, None).plan) is None


def test_a_morning_only_day_drops_the_afternoon_run_only() -> None:
    off: dict[date, frozenset[Shift]] = {DAY: frozenset({"tarde", "noite"})}
    assert follow([MORNING, AFTERNOON], off, {}) == [MORNING]
    d0, d1 = (b.timestamp() for b in day_bounds(DAY))
    whole = run(1, d0, d1, None)
    assert follow([whole], off, {}) == [whole]  # no timetable: due while the day has school in some shift


def test_an_early_dismissal_moves_the_shifts_runs() -> None:
    change = ScheduleChange(DAY, "tarde", time(9, 30), "saída antecipada")
    morning, afternoon = follow([MORNING, AFTERNOON], {}, {(DAY, "tarde"): change})
    assert morning == MORNING
    p = afternoon.plan
    assert p.due_at == at(9, 30) and p.end == at(12)  # moved by 3 h, its stretch and length of day kept
    assert p.start == at(9)  # never back over the morning run's window (it would open at 08:30)
    assert (p.m_from, p.m_to, afternoon.contracted_km) == (0.0, 1000.0, D("2.75"))


def test_an_early_dismissal_is_the_default_kind_and_leaves_the_runs_due_before_it() -> None:
    change = ScheduleChange(DAY, "manha", time(9), "saída antecipada")
    assert change.kind == "saida_antecipada"
    assert follow([MORNING, AFTERNOON], {}, {(DAY, "manha"): change}) == [MORNING, AFTERNOON]  # 06:30 < 09:00


def test_a_late_start_moves_the_runs_due_before_it_and_keeps_the_return() -> None:
    """Entrada atrasada at 09:00 in the morning: the ida due 06:30 is due from 09:00 (its window with it, never
    over the return's window); the return due 12:30 (after 09:00) keeps its time. Before the `kind`, a late start
    was read as an early dismissal: nothing moved, and an ida made at 09:00 fell outside its window."""
    change = ScheduleChange(DAY, "manha", time(9), "entrada atrasada: ônibus da prefeitura", "entrada_atrasada")
    morning, afternoon = follow([MORNING, AFTERNOON], {}, {(DAY, "manha"): change})
    assert afternoon == AFTERNOON
    p = morning.plan
    assert (p.due_at, p.start) == (at(9), at(8))  # moved by 2 h 30, its length before the timetable kept
    assert p.end == at(11, 30)  # 11:30 (not 11:30 + 0): clipped at the return run's window, which opens 11:30
    assert (p.m_from, p.m_to, morning.contracted_km) == (0.0, 1000.0, D("2.75"))


def test_a_late_start_moves_a_return_of_the_same_shift_only_when_it_would_fall_before() -> None:
    ida, volta = run(1, at(6), at(8), at(6, 30)), run(2, at(10, 30), at(12, 30), at(11, 30))  # both manhã
    late: dict[tuple[date, Shift], ScheduleChange] = {
        (DAY, "manha"): ScheduleChange(DAY, "manha", time(9, 30), "chuva", "entrada_atrasada")
    }
    a, b = follow([ida, volta], {}, late)
    assert (a.plan.due_at, a.plan.start, a.plan.end) == (at(9, 30), at(9), at(10, 30))  # clipped at the return
    assert b == volta  # due 11:30, after 09:30: its time kept
    later: dict[tuple[date, Shift], ScheduleChange] = {
        (DAY, "manha"): ScheduleChange(DAY, "manha", time(12), "chuva", "entrada_atrasada")
    }
    a, b = follow([ida, volta], {}, later)
    assert (a.plan.due_at, b.plan.due_at) == (at(12), at(12))  # the return would fall before: due from 12:00 too
    assert (b.plan.start, b.plan.end) == (at(11), at(13))


def test_widened_spans_the_gap_between_the_routes_runs() -> None:
    d0, d1 = (b.timestamp() for b in day_bounds(DAY))
    got = widened([MORNING, AFTERNOON], [0, 1])
    assert (got[0].start, got[0].end) == (d0, at(11, 30))
    assert (got[1].start, got[1].end) == (at(9), d1)
    assert widened([run(1, d0, d1, None)], [0]) == {}  # a whole-day window has nothing to widen


def test_a_day_off_in_some_shifts_stays_a_school_day() -> None:
    sy = calendar.SchoolYear(2026, date(2026, 2, 2), date(2026, 12, 18),
                             (calendar.MarkedDay(DAY, "conselho", ("tarde",)),
                              calendar.MarkedDay(date(2026, 3, 10), "chuva", ("manha", "tarde", "noite"))))  # fmt: skip
    days = calendar.school_days(sy)
    assert DAY in days and date(2026, 3, 10) not in days
    assert calendar.shifts_off(sy) == {DAY: frozenset({"tarde"})}
    assert [d["date"] for d in calendar.days_off(sy) if d["date"].startswith("2026-03-1")] == ["2026-03-10"]
