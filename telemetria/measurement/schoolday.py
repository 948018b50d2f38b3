"""The runs of a day as the school day really was: shifts without school, early dismissals, runs made off their
timetable; pure.

The calendar (contracts/calendar.py) may say that a school day had no school in some shifts (manhã, tarde,
noite), and that a shift's runs were due at another time (a schedule change: an early dismissal). Here:

- a run's shift is its timetable's (calendar.shift_of of its first scheduled time, RunPlan.due_at); a run with
  no timetable (its window is the whole day) has none and is due whenever the day has school in some shift;
- `follow` drops the runs of a shift without school that day, and moves the windows of the runs of a shift with
  a schedule change. An early dismissal (`saida_antecipada`): those due after `runs_due_from` are due from then
  (the window moves with the timetable, never back over the route's previous run's window, and keeps the
  stretch of the route it covers), so the dismissal run made at 09:30 instead of 12:30 is judged at 09:30. A
  late start (`entrada_atrasada`): those due before `runs_due_from` are due from then (the window moves forward
  with the timetable, never over the route's next run's window), and the runs due after it (the return) keep
  their times, so the ida made at 09:00 instead of 06:30 is judged at 09:00;
- `widened` gives, for a run its assigned vehicles did not make in its window, the same run over the part of its
  own day between the route's previous and next runs' windows: a run made there, earlier or later than its
  timetable, is made (boletim.py flags it `early` or `late` for fiscalização), never `not_made`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date, datetime, time

from telemetria.contracts.calendar import ScheduleChange, Shift, shift_of
from telemetria.localtime import LOCAL_TZ, day_bounds
from telemetria.measurement.due import DueRun
from telemetria.measurement.model import RunPlan


def run_shift(p: RunPlan) -> Shift | None:
    """The shift of a run by its timetable (its first scheduled time); None for a run with none."""
    return None if p.due_at is None else shift_of(datetime.fromtimestamp(p.due_at, LOCAL_TZ).time())


def follow(
    runs: Sequence[DueRun], off: Mapping[date, frozenset[Shift]],
    changes: Mapping[tuple[date, Shift], ScheduleChange],
) -> list[DueRun]:  # fmt: skip
    """The runs due as the day was: without the runs of a shift that had no school, windows moved by a schedule
    change (see the module); in the order given."""
    ends: dict[tuple[int, date], list[float]] = {}
    starts: dict[tuple[int, date], list[float]] = {}
    for r in runs:
        ends.setdefault((r.plan.route_id, r.plan.day), []).append(r.plan.end)
        starts.setdefault((r.plan.route_id, r.plan.day), []).append(r.plan.start)
    out = []
    for r in runs:
        p = r.plan
        shift = run_shift(p)
        if shift is not None and shift in off.get(p.day, ()):
            continue
        c = changes.get((p.day, shift)) if shift is not None else None
        if c is not None and p.due_at is not None:
            due = datetime.combine(p.day, c.runs_due_from, LOCAL_TZ).timestamp()
            delta = due - p.due_at
            if c.kind == "saida_antecipada" and delta < 0:
                # an early dismissal: the timetable moves back by the difference, the window with it (its length
                # and its stretch of the route kept), never opening before the route's previous run's window closes
                start = max([p.start + delta, *(e for e in ends[(p.route_id, p.day)] if e <= p.start)])
                r = replace(r, plan=replace(p, start=start, end=p.end + delta, due_at=due))
            elif c.kind == "entrada_atrasada" and delta > 0:
                # a late start: the runs due before runs_due_from move forward to it, the window with them, never
                # closing after the route's next run's window opens (unless that would close it before it is due)
                nxt = [s for s in starts[(p.route_id, p.day)] if s >= p.end and s > due]
                end = min([p.end + delta, *nxt])
                r = replace(r, plan=replace(p, start=p.start + delta, end=end, due_at=due))
        out.append(r)
    return out


def widened(runs: Sequence[DueRun], which: Sequence[int]) -> dict[int, RunPlan]:
    """Run index → its plan over its own day between the end of the route's previous run's window and the start
    of its next one's (the day's bounds when there is none), for the runs `which` whose window that widens."""
    by_day: dict[tuple[int, date], list[RunPlan]] = {}
    for r in runs:
        by_day.setdefault((r.plan.route_id, r.plan.day), []).append(r.plan)
    out: dict[int, RunPlan] = {}
    for i in which:
        p = runs[i].plan
        d0, d1 = (b.timestamp() for b in day_bounds(p.day))
        others = [q for q in by_day[(p.route_id, p.day)] if q.run_no != p.run_no]
        lo = max([q.end for q in others if q.end <= p.start], default=d0)
        hi = min([q.start for q in others if q.start >= p.end], default=d1)
        if lo < p.start or hi > p.end:
            out[i] = replace(p, start=lo, end=hi)
    return out


def claimed(runs: Sequence[DueRun], made_at: Mapping[tuple[int, date, int], time]) -> dict[int, RunPlan]:
    """Run index → its plan moved so that its timetable is due at the local time a `feito_fora_do_horario`
    justification gives ((route, day, run_no) → made_at), its window with it and kept inside its own day; a run
    with no timetable (its window is already the whole day) has none."""
    out: dict[int, RunPlan] = {}
    for i, r in enumerate(runs):
        p = r.plan
        t = made_at.get((p.route_id, p.day, p.run_no))
        if t is None or p.due_at is None:
            continue
        d0, d1 = (b.timestamp() for b in day_bounds(p.day))
        delta = datetime.combine(p.day, t, LOCAL_TZ).timestamp() - p.due_at
        out[i] = replace(p, start=max(d0, p.start + delta), end=min(d1, p.end + delta), due_at=p.due_at + delta)
    return out
