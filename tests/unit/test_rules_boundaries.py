"""The occurrence rules at their exact boundaries (issue 33, mutation pass): schedule_delays' tolerances to the
second, the window's ends, which instant of a stop is judged (the first point's departure, the others' arrival),
the facts a delay carries; due_spans' ends; boarding stops skipped on a run made; a speeding candidate's place,
facts and the fix that completes it. Each day is written by hand as a run's visits against a plan (epoch s) and a
tracker reporting every 30 s (the speeding days as test_occurrence_rules' scripts, through the reports' engine);
the expected values are worked out here from the rule's text, not by the code. No database."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from types import SimpleNamespace
from typing import Any, cast

import numpy as np
import pytest

from telemetria.measurement.model import RunPlan
from telemetria.occurrences.detection import rules
from telemetria.occurrences.model import Candidate, Kind
from telemetria.occurrences.params import DEFAULT
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.schedule import PASSED, SERVED, SKIPPED, Run, Visit
from telemetria.reports.model import Point, Route

DAY = date(2026, 3, 2)
T = 1_772_446_800.0  # 2026-03-02 10:20 UTC (06:20 in Jaru, UTC-4): the run's first scheduled time
TOL = 600.0  # DEFAULT.delay_tolerance_min = 10
EARLY = 900.0  # DEFAULT.early_tolerance_min = 15
GARAGE = Point("Garagem", "garage", -10.43, -62.47, 1, None, 1)
P1 = Point("Ponto 1", "boarding", -10.43, -62.45, 2, None, 1)
P2 = Point("Ponto 2", "boarding", -10.43, -62.43, 3, None, 1)
SCHOOL = Point("Escola", "school", -10.43, -62.41, 4, None, 1)
ROUTE = Route(1, "L1", "Linha 1", [-62.47, -62.40], [-10.43, -10.43], 60.0, 100.0, (GARAGE, P1, P2, SCHOOL))
SCHED = [T, T + 240.0, T + 480.0, T + 720.0]
PLAN = RunPlan(1, DAY, 1, T - 3600.0, T + 7200.0, 0.0, 6000.0, Decimal(1))


def analysis(t0: float = T - 3600.0, t1: float = T + 9000.0) -> Analysis:
    """The only parts of an analysis schedule_delays reads: a fix every 30 s, all kept, and the vehicle."""
    t = np.arange(t0, t1 + 1.0, 30.0)
    return cast(Analysis, SimpleNamespace(track=SimpleNamespace(t=t), keep=np.ones(len(t), bool), vehicle=VEH))


VEH = SimpleNamespace(id=7)


def visit(p: Point, arrival: float | None, departure: float | None, status: str = SERVED) -> Visit:
    return Visit(p, status, arrival, departure, 0.0)


def on_time() -> list[Visit]:
    """Leaves the garage at its time, a minute at each boarding stop, arrives at the school at its time."""
    return [visit(GARAGE, T - 600.0, T), visit(P1, T + 240.0, T + 300.0), visit(P2, T + 480.0, T + 540.0),
            visit(SCHOOL, T + 720.0, T + 1200.0)]  # fmt: skip


def delays(visits: list[Visit], a: Analysis | None = None, plans: list[RunPlan] | None = None) -> list[Candidate]:
    run = Run(DAY, visits, list[float | None](SCHED), T + 7200.0)
    found = rules.schedule_delays(a or analysis(), DAY, [(ROUTE, run)], {1: plans or [PLAN]}, DEFAULT)
    assert all(c.kind is Kind.SCHEDULE_DELAY for c in found)
    return found


def with_(visits: list[Visit], i: int, **change: Any) -> list[Visit]:
    v = visits[i]
    out = list(visits)
    out[i] = Visit(change.get("point", v.point), change.get("status", v.status), change.get("arrival", v.arrival),
                   change.get("departure", v.departure), v.distance_m)  # fmt: skip
    return out


def ts(x: float) -> datetime:
    return datetime.fromtimestamp(x, UTC)


def test_the_defaults_are_the_tolerances_these_days_are_written_for() -> None:
    assert DEFAULT.delay_tolerance_min * 60 == TOL and DEFAULT.early_tolerance_min * 60 == EARLY
    assert DEFAULT.report.gap_s == 60.0
    assert delays(on_time()) == []


def test_the_first_point_is_late_by_its_departure_more_than_the_tolerance_exactly_ten_minutes_is_not() -> None:
    # the garage: arrival long before, departure at 06:30:00 exactly (10 min late): no delay; a second more: late
    assert delays(with_(on_time(), 0, departure=T + TOL)) == []
    (c,) = delays(with_(on_time(), 0, departure=T + TOL + 1.0))
    assert c.start == ts(T + TOL + 1.0) and c.end == ts(T + TOL + 1.0)
    assert c.facts == {"stop": "Garagem", "scheduled": ts(T).isoformat(), "arrived": ts(T + 601.0).isoformat(),
                       "late_min": 10.0, "max_late_min": 10.0, "late_stops": 1}  # fmt: skip
    assert c.route_id == 1 and c.run_no == 1 and c.key == f"1:{DAY.isoformat()}:1"
    assert (c.lat, c.lon) == (GARAGE.lat, GARAGE.lon) and c.place == "Garagem (rota L1)" and c.vehicle_id == 7
    # completed by the first fix at or after its start: fixes every 30 s from T - 3600, so T + 630
    assert c.completed_ts == ts(T + 630.0)
    # its arrival does not count: arrived 20 min late but left on time is no delay
    assert delays(with_(on_time(), 0, arrival=T + 1200.0, departure=T + 1210.0)) != []
    assert delays(with_(on_time(), 0, arrival=T + 1200.0, departure=T)) == []


def test_the_other_points_are_late_by_their_arrival() -> None:
    assert delays(with_(on_time(), 1, arrival=T + 240.0 + TOL, departure=T + 240.0 + TOL + 60.0)) == []
    (c,) = delays(with_(on_time(), 1, arrival=T + 240.0 + TOL + 1.0, departure=T + 240.0 + TOL + 60.0))
    assert c.facts["stop"] == "Ponto 1" and c.facts["late_min"] == 10.0 and c.facts["late_stops"] == 1
    assert c.start == ts(T + 841.0) and c.place == "Ponto 1 (rota L1)" and (c.lat, c.lon) == (P1.lat, P1.lon)
    # a departure late by far after an arrival on time is no delay at a later point
    assert delays(with_(on_time(), 1, departure=T + 240.0 + 3 * TOL)) == []


def test_late_at_several_points_starts_at_the_first_ends_at_the_last_with_the_largest_lateness() -> None:
    late = [visit(GARAGE, T - 60.0, T + 660.0), visit(P1, T + 240.0 + 900.0, T + 1200.0),
            visit(P2, T + 480.0 + 1500.0, T + 2040.0), visit(SCHOOL, T + 720.0 + 630.0, T + 1500.0)]  # fmt: skip
    (c,) = delays(late)
    assert c.start == ts(T + 660.0) and c.end == ts(T + 1980.0)
    f = c.facts
    assert (f["stop"], f["late_min"], f["max_late_min"], f["late_stops"]) == ("Garagem", 11.0, 25.0, 4)
    assert f["arrived"] == ts(T + 660.0).isoformat() and f["scheduled"] == ts(T).isoformat()


def test_passed_points_count_skipped_ones_do_not() -> None:
    (c,) = delays(with_(on_time(), 3, status=PASSED, arrival=T + 720.0 + 700.0, departure=T + 720.0 + 700.0))
    assert c.facts["stop"] == "Escola" and c.facts["late_min"] == pytest.approx(700.0 / 60.0, abs=0.05)
    assert delays(with_(on_time(), 3, status=SKIPPED, arrival=T + 720.0 + 700.0, departure=None)) == []


def test_reached_at_the_windows_end_still_counts_a_second_after_it_does_not() -> None:
    end = PLAN.end  # T + 7200: the school reached exactly then is late; after it, the run was not made late
    (c,) = delays(with_(on_time(), 3, arrival=end, departure=end + 60.0))
    assert c.facts["stop"] == "Escola" and c.facts["late_min"] == 108.0  # (7200 - 720) / 60
    assert delays(with_(on_time(), 3, arrival=end + 1.0, departure=end + 60.0)) == []


def test_a_late_arrival_is_no_evidence_across_a_gap_in_the_fixes() -> None:
    """The fix before the arrival came more than gap_s (60 s) earlier: it may have been there on time."""
    arrival = T + 240.0 + 700.0  # Ponto 1, 700 s late
    t = np.concatenate([np.arange(T - 3600.0, arrival - 61.0, 30.0), np.arange(arrival + 30.0, T + 9000.0, 30.0)])
    gap = cast(Analysis, SimpleNamespace(track=SimpleNamespace(t=t), keep=np.ones(len(t), bool), vehicle=VEH))
    assert float(t[t < arrival].max()) < arrival - 60.0
    assert delays(with_(on_time(), 1, arrival=arrival, departure=arrival + 60.0), a=gap) == []
    assert delays(with_(on_time(), 1, arrival=arrival, departure=arrival + 60.0)) != []


def test_a_boarding_stop_left_more_than_fifteen_minutes_early() -> None:
    # Ponto 2 (06:28) left at 06:13 exactly (15 min early): nothing; a second earlier: pupils left behind
    assert delays(with_(on_time(), 2, arrival=T + 480.0 - EARLY - 60.0, departure=T + 480.0 - EARLY)) == []
    (c,) = delays(with_(on_time(), 2, arrival=T + 480.0 - EARLY - 60.0, departure=T + 480.0 - EARLY - 1.0))
    assert c.facts == {"early_stop": "Ponto 2", "early_scheduled": ts(T + 480.0).isoformat(),
                       "departed": ts(T - 421.0).isoformat(), "early_min": 15.0, "early_stops": 1}  # fmt: skip
    assert c.start == ts(T - 421.0) and c.end == ts(T - 421.0) and c.place == "Ponto 2 (rota L1)"
    assert c.completed_ts == ts(T - 420.0)  # a fix: T - 3600 + 106 × 30


def test_early_only_at_a_served_boarding_stop_not_the_first_point_and_inside_the_window() -> None:
    far = T + 480.0 - 2000.0  # Ponto 2 left 33 min early
    assert delays(with_(on_time(), 2, status=PASSED, arrival=far, departure=far)) == []
    assert delays(with_(on_time(), 3, arrival=T + 720.0 - 2000.0, departure=T + 720.0 - 2000.0)) == []  # a school
    # the first point of the run is judged by its departure for lateness only: a boarding stop first, left early
    first = Route(1, "L1", "Linha 1", ROUTE.lon, ROUTE.lat, 60.0, 100.0, (P1, P2, SCHOOL, GARAGE))
    visits = [visit(P1, T - 2100.0, T - 2000.0), visit(P2, T + 240.0, T + 300.0), visit(SCHOOL, T + 480.0, T + 540.0),
              visit(GARAGE, T + 720.0, T + 800.0)]  # fmt: skip
    run = Run(DAY, visits, list[float | None](SCHED), T + 7200.0)
    assert rules.schedule_delays(analysis(), DAY, [(first, run)], {1: [PLAN]}, DEFAULT) == []
    # left at the window's start exactly counts; a second before it does not (not this run's departure)
    plan = RunPlan(1, DAY, 1, T - 1200.0, T + 7200.0, 0.0, 6000.0, Decimal(1))
    (c,) = delays(with_(on_time(), 2, arrival=T - 1260.0, departure=T - 1200.0), plans=[plan])
    assert c.facts["early_stop"] == "Ponto 2" and c.facts["early_min"] == 28.0
    assert delays(with_(on_time(), 2, arrival=T - 1260.0, departure=T - 1201.0), plans=[plan]) == []


def test_late_and_early_in_one_run_are_one_candidate_from_the_earliest() -> None:
    visits = with_(with_(on_time(), 1, arrival=T + 240.0 - 1260.0, departure=T + 240.0 - 1200.0), 3,
                   arrival=T + 720.0 + 900.0, departure=T + 720.0 + 960.0)  # fmt: skip
    (c,) = delays(visits)
    assert c.start == ts(T - 960.0) and c.end == ts(T + 1620.0) and c.place == "Ponto 1 (rota L1)"
    f = c.facts
    assert f["stop"] == "Escola" and f["late_min"] == 15.0 and f["late_stops"] == 1
    assert f["early_stop"] == "Ponto 1" and f["early_min"] == 20.0 and f["early_stops"] == 1


def test_points_outside_every_plan_or_unscheduled_are_not_judged() -> None:
    plan = RunPlan(1, DAY, 1, T - 3600.0, T + 480.0, 0.0, 6000.0, Decimal(1))  # Ponto 2 and the school outside
    assert delays(with_(on_time(), 3, arrival=T + 720.0 + 3000.0, departure=None), plans=[plan]) == []
    run = Run(DAY, with_(on_time(), 1, arrival=T + 3000.0), [T, None, T + 480.0, T + 720.0], T + 7200.0)
    assert rules.schedule_delays(analysis(), DAY, [(ROUTE, run)], {1: [PLAN]}, DEFAULT) == []
    # a second plan: its own first point is judged by its departure, its own run_no and key
    two = [RunPlan(1, DAY, 1, T - 3600.0, T + 400.0, 0.0, 3000.0, Decimal("0.5")),
           RunPlan(1, DAY, 2, T + 400.0, T + 7200.0, 3000.0, 6000.0, Decimal("0.5"))]  # fmt: skip
    (c,) = delays(with_(on_time(), 2, arrival=T + 480.0 - 300.0, departure=T + 480.0 + 700.0), plans=two)
    assert c.run_no == 2 and c.key == f"1:{DAY.isoformat()}:2" and c.facts["stop"] == "Ponto 2"
    # with one plan the same visit is judged by its arrival, on time
    assert delays(with_(on_time(), 2, arrival=T + 480.0 - 300.0, departure=T + 480.0 + 700.0)) == []


# --- due_spans ---------------------------------------------------------------------------------------------------

TIMED = Route(1, "L1", "Linha 1", ROUTE.lon, ROUTE.lat, 60.0, 100.0,
              tuple(Point(p.name, p.kind, p.lat, p.lon, p.seq, h, 1) for p, h in
                    zip(ROUTE.points, ("06:20:00", "06:24:00", "06:28:00", "06:32:00"), strict=True)))  # fmt: skip


def test_the_schedule_written_in_local_time_is_the_one_these_tests_use() -> None:
    assert [rules.scheduled_at(p, DAY) for p in TIMED.points] == SCHED


def test_a_due_span_runs_from_the_first_scheduled_time_to_the_arrival_at_the_last_point() -> None:
    run = Run(DAY, with_(on_time(), 3, arrival=T + 900.0), list[float | None](SCHED), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, run) == [rules.DueSpan(1, 1, T - 3600.0, T + 7200.0, T, T + 900.0)]
    early = Run(DAY, with_(on_time(), 3, arrival=T + 600.0), list[float | None](SCHED), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, early)[0].end == T + 600.0  # early, not its scheduled T + 720
    # not arrived (or only passed nowhere): to the window's end
    missing = Run(DAY, with_(on_time(), 3, status=SKIPPED, arrival=None), list[float | None](SCHED), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, missing)[0].end == T + 7200.0
    passed = Run(DAY, with_(on_time(), 3, status=PASSED, arrival=T + 800.0), list[float | None](SCHED), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, passed)[0].end == T + 800.0
    assert rules.due_spans(TIMED, [PLAN], DAY)[0].end == T + 7200.0  # no run seen yet
    # a run whose visits do not match the points is ignored (its arrivals are not these points')
    short = Run(DAY, on_time()[:3], list[float | None](SCHED[:3]), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, short)[0].end == T + 7200.0


def test_a_run_not_arrived_yet_is_due_to_its_windows_end() -> None:
    plan = RunPlan(1, DAY, 1, T - 600.0, T + 721.0, 0.0, 6000.0, Decimal(1))
    assert rules.due_spans(TIMED, [plan], DAY)[0].end == T + 721.0
    # points scheduled at the window's end belong to the next window: the span ends at Ponto 2's plan end
    cut = RunPlan(1, DAY, 1, T, T + 720.0, 0.0, 6000.0, Decimal(1))
    (s,) = rules.due_spans(TIMED, [cut], DAY)
    assert (s.start, s.end) == (T, T + 720.0)
    # the first point exactly at the window's start belongs to it; a window starting after it leaves it out
    later = RunPlan(1, DAY, 1, T + 1.0, T + 7200.0, 0.0, 6000.0, Decimal(1))
    assert rules.due_spans(TIMED, [later], DAY)[0].start == T + 240.0


def test_a_run_arrived_at_its_first_scheduled_time_has_no_span() -> None:
    at_start = Run(DAY, with_(on_time(), 3, arrival=T), list[float | None](SCHED), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, at_start) == []  # end == start: nothing to be due
    just = Run(DAY, with_(on_time(), 3, arrival=T + 1.0), list[float | None](SCHED), T + 7200.0)
    assert [(s.start, s.end) for s in rules.due_spans(TIMED, [PLAN], DAY, just)] == [(T, T + 1.0)]


SCHOOL_ONLY = Route(1, "L1", "Linha 1", ROUTE.lon, ROUTE.lat, 60.0, 100.0,
                   tuple(Point(p.name, p.kind, p.lat, p.lon, p.seq, h, 1) for p, h in
                         zip(ROUTE.points, (None, None, None, "06:32:00"), strict=True)))  # fmt: skip


def test_a_run_with_only_its_schools_time_is_due_from_that_time_until_it_arrives() -> None:
    """A timetable may give one time only (the school's): the vehicle still serves that run (Art. 15 §1 XII), so its
    tracker is due from that time until it reaches the school, or to the window's end while it has not."""
    sched: list[float | None] = [None, None, None, T + 720.0]
    assert rules.due_spans(SCHOOL_ONLY, [PLAN], DAY) == [rules.DueSpan(1, 1, T - 3600.0, T + 7200.0, T + 720.0,
                                                                       T + 7200.0)]  # fmt: skip
    late = Run(DAY, with_(on_time(), 3, arrival=T + 900.0), sched, T + 7200.0)
    assert [(s.start, s.end) for s in rules.due_spans(SCHOOL_ONLY, [PLAN], DAY, late)] == [(T + 720.0, T + 900.0)]
    on_its_time = Run(DAY, on_time(), sched, T + 7200.0)  # arrives at 06:32 exactly: nothing left due
    assert rules.due_spans(SCHOOL_ONLY, [PLAN], DAY, on_its_time) == []
    missing = Run(DAY, with_(on_time(), 3, status=SKIPPED, arrival=None), sched, T + 7200.0)
    assert [(s.start, s.end) for s in rules.due_spans(SCHOOL_ONLY, [PLAN], DAY, missing)] == [(T + 720.0, T + 7200.0)]


def test_an_ended_run_with_nothing_reached_has_no_span_an_open_one_does() -> None:
    none = [with_(on_time(), i, status=SKIPPED, arrival=None, departure=None)[i] for i in range(4)]
    nothing = Run(DAY, none, list[float | None](SCHED), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, nothing, now=T + 7200.0) == []  # the window ended at now exactly
    assert len(rules.due_spans(TIMED, [PLAN], DAY, nothing, now=T + 7199.0)) == 1  # still open
    assert len(rules.due_spans(TIMED, [PLAN], DAY, nothing)) == 1  # no `now`: not judged as ended
    assert rules.due_spans(TIMED, [PLAN], DAY, None, now=T + 7200.0) == []  # no run seen at all
    one = [*none[:3], visit(SCHOOL, T + 700.0, None)]
    reached = Run(DAY, one, list[float | None](SCHED), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, reached, now=T + 9000.0)[0].end == T + 700.0
    first_only = Run(DAY, [visit(GARAGE, T - 60.0, T + 5.0), *none[1:]], list[float | None](SCHED), T + 7200.0)
    assert rules.due_spans(TIMED, [PLAN], DAY, first_only, now=T + 9000.0)[0].end == T + 7200.0


# --- silences ----------------------------------------------------------------------------------------------------

EQ_M = 6378137.0 * np.pi / 180.0 * 0.01  # 0.01° of longitude along the equator: 1,113.19 m on WGS84


class _Track:
    def __init__(self, t: np.ndarray, lon: np.ndarray) -> None:
        self.t, self.lon, self.lat = t, lon, np.zeros(len(t))

    def __len__(self) -> int:
        return len(self.t)


def quiet(times: list[float], lons: list[float] | None = None, start: float = 0.0, end: float = 86400.0,
          keep: list[bool] | None = None) -> Analysis:  # fmt: skip
    """A day [start, end) of fixes on the equator at these times (epoch s) and longitudes."""
    t = np.array(times, dtype=float)
    lon = np.array(lons if lons is not None else [0.0] * len(t), dtype=float)
    kept = np.array(keep if keep is not None else [True] * len(t))
    return cast(Analysis, SimpleNamespace(track=_Track(t, lon), keep=kept, vehicle=VEH, start=start, end=end))


def every(step: float, t0: float, t1: float) -> list[float]:
    return [float(x) for x in np.arange(t0, t1 + step / 2, step)]


SPAN = rules.DueSpan(1, 2, 0.0, 86400.0, 1000.0, 86400.0)  # due from the first fix of these days on


def silent(a: Analysis, spans: list[rules.DueSpan] | None = None, now: float | None = None,
           before: rules.Edge | None = None, after: rules.Edge | None = None) -> list[Candidate]:  # fmt: skip
    if now is None:  # just after the last fix: no live silence
        now = float(a.track.t[-1]) + 10.0
    found = rules.silences(a, before, after, [SPAN] if spans is None else spans, now, DEFAULT)
    assert all(c.kind is Kind.TRACKER_SILENT for c in found)
    return found


@pytest.fixture(autouse=True)
def _no_places(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(rules, "_place", lambda a, i: f"fix {i}")


def test_the_trackers_interval_is_the_median_of_its_intervals_that_are_no_gap() -> None:
    assert rules.fix_interval(np.array([0.0, 20.0, 40.0, 60.0, 200.0]), 60.0) == 20.0  # the 140 s gap left out
    assert rules.fix_interval(np.array([0.0, 10.0, 10.0, 30.0, 90.0]), 60.0) == 20.0  # of 10, 20, 60: no 0, 60 in
    assert rules.fix_interval(np.array([0.0, 61.0, 200.0]), 60.0) == rules.LEGAL_INTERVAL_S == 30.0  # all gaps
    assert rules.fix_interval(np.array([5.0]), 60.0) == 30.0
    assert rules.fix_interval(np.array([0.0, 1.0, 2.0, 3.0, 33.0]), 60.0) == 1.0  # a 1 s tracker: 1 s counts


def test_a_silence_is_one_whose_gap_less_one_interval_exceeds_silent_s() -> None:
    """A tracker every 20 s: a gap of 320 s is a silence of 300 s (not more than silent_s); 321 s is one."""
    head = every(20.0, 1000.0, 2000.0)
    assert silent(quiet([*head, 2320.0, 2340.0])) == []
    (c,) = silent(quiet([*head, 2321.0, 2341.0], lons=[0.0] * len(head) + [0.01, 0.01]))
    assert c.start == ts(2010.0) and c.end == ts(2311.0) and c.completed_ts == ts(2321.0)
    assert c.route_id == 1 and c.run_no == 2 and c.vehicle_id == 7 and (c.lat, c.lon) == (0.0, 0.0)
    assert c.place == f"fix {len(head) - 1}"
    f = dict(c.facts)
    assert f.pop("moved_m") == 1113.2  # EQ_M to a decimetre
    assert f == {"gap_s": 321, "end_min": ts(2301.0).isoformat(), "end_max": ts(2321.0).isoformat(),
                 "start_min": ts(2000.0).isoformat(), "start_max": ts(2020.0).isoformat()}  # fmt: skip


def test_a_silence_counts_only_with_more_than_silent_s_inside_a_due_span() -> None:
    a = quiet([*every(20.0, 1000.0, 2000.0), 2400.0, 2420.0])  # estimated 2010 → 2390
    assert silent(a, [rules.DueSpan(1, 1, 0.0, 9000.0, 1500.0, 2310.0)]) == []  # 300 s inside it
    (c,) = silent(a, [rules.DueSpan(1, 1, 0.0, 9000.0, 1500.0, 2311.0)])
    assert (c.start, c.end) == (ts(2010.0), ts(2390.0))  # the whole silence, not its due part
    assert silent(a, [rules.DueSpan(1, 1, 0.0, 9000.0, 2090.0, 5000.0)]) == []  # 2390 - 2090 = 300 inside it
    assert len(silent(a, [rules.DueSpan(1, 1, 0.0, 9000.0, 2089.0, 5000.0)])) == 1
    assert silent(a, []) == []


def test_a_live_silence_is_half_an_interval_plus_silent_s_after_the_last_fix() -> None:
    a = quiet(every(20.0, 1000.0, 2000.0))
    assert silent(a, now=2310.0) == []  # estimated from 2010: 300 s
    (c,) = silent(a, now=2311.0)
    assert c.start == ts(2010.0) and c.end is None and c.completed_ts is None
    assert c.facts == {"since": ts(2000.0).isoformat(), "start_min": ts(2000.0).isoformat(),
                       "start_max": ts(2020.0).isoformat()}  # fmt: skip
    # the last fix at the day's end exactly belongs to the next day's silence
    assert silent(quiet(every(20.0, 1000.0, 2000.0), end=2000.0), now=5000.0) == []
    assert len(silent(quiet(every(20.0, 1000.0, 2000.0), end=2000.5), now=5000.0)) == 1


def test_a_silence_since_the_day_before_counts_from_the_first_span_it_silences() -> None:
    before = rules.Edge(100.0, 0.0, -0.01)  # yesterday's last fix
    a = quiet(every(20.0, 3000.0, 3600.0), start=1000.0)
    (c,) = silent(a, [rules.DueSpan(1, 1, 0.0, 9000.0, 1500.0, 5000.0)], before=before)
    assert c.start == ts(1500.0) and c.end == ts(2990.0) and c.completed_ts == ts(3000.0)
    assert (c.lat, c.lon) == (0.0, 0.0) and c.place == "fix 0"  # where it reappeared
    f = dict(c.facts)
    assert f.pop("moved_m") == pytest.approx(EQ_M, abs=0.1)
    assert f == {"gap_s": 2900, "end_min": ts(2980.0).isoformat(), "end_max": ts(3000.0).isoformat()}
    assert silent(a, [], before=before) == []  # no span due: nothing
    # a gap that ended when the day began is yesterday's
    assert silent(quiet(every(20.0, 1000.0, 1600.0), start=1000.0), before=before) == []
    # with no fix ever before: no gap_s, no moved_m
    (d,) = silent(a, [rules.DueSpan(1, 1, 0.0, 9000.0, 1500.0, 5000.0)])
    assert d.start == ts(1500.0) and d.facts["gap_s"] is None and d.facts["moved_m"] is None


def test_where_a_silence_is_comes_from_kept_fixes_and_the_fix_after_it_from_after() -> None:
    head = every(20.0, 1000.0, 2000.0)
    # the last fix before the gap is an outlier, not kept: the one before it (0.003°) says where
    lons = [0.0] * (len(head) - 2) + [0.003, 0.5, 0.01]
    keep = [True] * (len(head) - 1) + [False, True]
    (c,) = silent(quiet([*head, 2400.0], lons=lons, keep=keep))
    assert (c.lat, c.lon) == (0.0, 0.003) and c.facts["moved_m"] == pytest.approx(0.7 * EQ_M, abs=0.1)
    # the first fix after it is an outlier: the next kept one (0.02°) says where it reappeared
    lons = [0.0] * len(head) + [0.5, 0.02, 0.03]
    (d,) = silent(quiet([*head, 2400.0, 2420.0, 2440.0], lons=lons, keep=[True] * len(head) + [False, True, True]))
    assert d.facts["moved_m"] == pytest.approx(2 * EQ_M, abs=0.2)
    assert c.start == ts(2010.0)  # from the last fix, kept or not: the tracker spoke
    # the first fix after the silence is tomorrow's (after): it ends the silence
    (d,) = silent(quiet(head), after=rules.Edge(2500.0, 0.0, 0.02), now=2510.0)
    assert d.end == ts(2490.0) and d.completed_ts == ts(2500.0)
    assert d.facts["moved_m"] == pytest.approx(2 * EQ_M, abs=0.2)


def holed(frm: float, to: float) -> Analysis:
    """Fixes every 30 s from T - 3600 with none in [frm, to)."""
    t = np.arange(T - 3600.0, T + 9000.0, 30.0)
    t = t[(t < frm) | (t >= to)]
    return cast(Analysis, SimpleNamespace(track=SimpleNamespace(t=t), keep=np.ones(len(t), bool), vehicle=VEH))


def test_a_departure_is_evidence_by_the_fix_after_it_not_the_one_before() -> None:
    """The garage left 11 min late at T + 660 (a fix at T + 660 + 30... none for 200 s before it): seen leaving,
    it is late; Ponto 2 left 20 min early, the same way."""
    dep = T + 665.0
    a = holed(dep - 200.0, dep)  # the fix before the departure 200 s earlier, the one after it 25 s later
    (c,) = delays(with_(on_time(), 0, departure=dep), a=a)
    assert c.facts["stop"] == "Garagem" and c.start == ts(dep)
    left = T + 480.0 - 1200.0 + 5.0  # Ponto 2, 06:28 left at 06:08:05
    (e,) = delays(with_(on_time(), 2, arrival=left - 60.0, departure=left), a=holed(left - 200.0, left))
    assert e.facts["early_stop"] == "Ponto 2" and e.facts["early_min"] == 19.9  # 1195 s
    assert delays(with_(on_time(), 2, arrival=left - 60.0, departure=left), a=holed(left, left + 100.0)) == []


def test_early_minutes_are_rounded_to_a_tenth() -> None:
    (c,) = delays(with_(on_time(), 2, arrival=T + 480.0 - 1002.0, departure=T + 480.0 - 942.0))
    assert c.facts["early_min"] == 15.7  # 942 s


def test_a_route_without_plans_that_day_has_no_delay_and_points_outside_plans_do_not_stop_the_others() -> None:
    late = with_(on_time(), 2, arrival=T + 480.0 + 700.0, departure=T + 480.0 + 760.0)
    run = Run(DAY, late, list[float | None](SCHED), T + 7200.0)
    assert rules.schedule_delays(analysis(), DAY, [(ROUTE, run)], {}, DEFAULT) == []
    # the garage before the window: not judged; Ponto 2 inside it still is (Ponto 1 is the run's first point)
    plan = RunPlan(1, DAY, 1, T + 1.0, T + 7200.0, 0.0, 6000.0, Decimal(1))
    (c,) = delays(late, plans=[plan])
    assert c.facts["stop"] == "Ponto 2" and c.facts["late_stops"] == 1


def test_a_silence_from_a_fix_at_the_days_start_is_the_days_from_that_fix() -> None:
    """The last fix exactly at the day's start (00:00): the silence starts half an interval after it, at that fix
    (not at the first span it silences), with its bounds."""
    a = quiet([1000.0, 2000.0, 2020.0], lons=[0.01, 0.02, 0.02], start=1000.0)
    (c,) = silent(a, [rules.DueSpan(1, 1, 0.0, 9000.0, 1200.0, 5000.0)])
    assert c.start == ts(1010.0) and c.end == ts(1990.0)
    assert (c.lat, c.lon) == (0.0, 0.01) and c.place == "fix 0"
    assert c.facts["start_min"] == ts(1000.0).isoformat() and c.facts["start_max"] == ts(1020.0).isoformat()


def test_a_silence_off_duty_does_not_hide_a_later_due_one() -> None:
    times = [*every(20.0, 1000.0, 2000.0), *every(20.0, 2500.0, 3000.0), 3500.0]
    (c,) = silent(quiet(times), [rules.DueSpan(1, 1, 0.0, 9000.0, 2900.0, 5000.0)])
    assert (c.start, c.end) == (ts(3010.0), ts(3490.0))


def test_a_tracker_never_heard_is_silent_from_its_first_due_span_live() -> None:
    (c,) = silent(quiet([]), [rules.DueSpan(1, 1, 0.0, 9000.0, 1000.0, 5000.0)], now=2000.0)
    assert c.start == ts(1000.0) and c.end is None and c.completed_ts is None
    assert c.facts == {"since": None} and (c.lat, c.lon, c.place) == (None, None, None)


def test_due_spans_points_at_the_windows_end_are_the_next_windows_and_every_plan_is_looked_at() -> None:
    run = Run(DAY, on_time(), list[float | None](SCHED), T + 7200.0)
    cut = RunPlan(1, DAY, 1, T, T + 720.0, 0.0, 6000.0, Decimal(1))  # the school (T + 720) is not in it
    assert [(s.start, s.end) for s in rules.due_spans(TIMED, [cut], DAY, run)] == [(T, T + 480.0)]  # Ponto 2
    empty = RunPlan(1, DAY, 1, T - 9000.0, T - 8000.0, 0.0, 0.0, Decimal(0))  # no scheduled point in it
    two = RunPlan(1, DAY, 2, T - 3600.0, T + 7200.0, 0.0, 6000.0, Decimal(1))
    assert [s.run_no for s in rules.due_spans(TIMED, [empty, two], DAY, run)] == [2]
    # an ended run with nothing reached before one that was reached: only the second is due
    hours = ("06:20:00", "06:24:00", "08:50:00", "08:55:00")  # run 1: garage, Ponto 1; run 2: Ponto 2, school
    pts = tuple(Point(p.name, p.kind, p.lat, p.lon, p.seq, h, 1) for p, h in zip(ROUTE.points, hours, strict=True))
    timed = Route(1, "L1", "Linha 1", ROUTE.lon, ROUTE.lat, 60.0, 100.0, pts)
    first = RunPlan(1, DAY, 1, T - 3600.0, T + 3600.0, 0.0, 3000.0, Decimal("0.5"))
    second = RunPlan(1, DAY, 2, T + 3600.0, T + 14400.0, 3000.0, 6000.0, Decimal("0.5"))
    visits = [visit(GARAGE, None, None, SKIPPED), visit(P1, None, None, SKIPPED), visit(P2, T + 9050.0, T + 9100.0),
              visit(SCHOOL, T + 9350.0, T + 9400.0)]  # fmt: skip
    run = Run(DAY, visits, [T, T + 240.0, T + 9000.0, T + 9300.0], T + 14400.0)
    found = rules.due_spans(timed, [first, second], DAY, run, now=T + 3600.0)
    assert [(s.run_no, s.start, s.end) for s in found] == [(2, T + 9000.0, T + 9350.0)]


# --- deviations --------------------------------------------------------------------------------------------------


def _detour() -> tuple[Any, int, int]:
    """The morning run with a detour 400 m north of the road between km 2.5 and 3.5 (fixes every 30 s): the index
    of the first fix off the route (200 m north) and of the last one (200 m north on the way back)."""
    from tests.unit.test_occurrence_rules import Script

    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(2500.0)
    first = len(s.fixes)  # the next fix, 200 m north: off the route (tolerance 100 m)
    s.drive(2500.0, north=400.0).drive(3500.0, north=400.0).drive(3500.0, north=0.0)
    last = len(s.fixes) - 2  # 200 m north on the way back; the fix after it is on the road again
    return s, first, last


def test_a_deviation_starts_and_ends_midway_to_the_fixes_around_it_and_is_complete_at_its_second_fix() -> None:
    from tests.unit.test_occurrence_rules import candidates

    s, first, last = _detour()
    s.drive(4000.0).park(60).drive(6000.0).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.ROUTE_DEVIATION]
    t = [f.ts for f in s.fixes]
    assert c.start == t[first] - timedelta(seconds=15) and c.end == t[last] + timedelta(seconds=15)
    # 2 fixes (deviation_min_fixes) and 30 s (deviation_min_s) since its start: the second fix off the route
    assert c.completed_ts == t[first + 1] and c.vehicle_id == 7 and c.route_id == 1
    far = {(f.lat, f.lon) for f in s.fixes[first + 1 : last]}  # the fixes 400 m north
    assert (c.lat, c.lon) in far
    assert c.facts["start_min"] == t[first - 1].isoformat() and c.facts["end_max"] == t[last + 1].isoformat()


def test_a_detour_before_the_first_boarding_neither_counts_nor_hides_one_with_pupils() -> None:
    """Art. 26: a detour on the way to the first stop (no pupils) is no deviation, and it does not stop the one
    after the boarding from counting, complete at its own second fix off the route."""
    from tests.unit.test_occurrence_rules import Script, candidates

    s = Script("05:50").until("06:00").drive(500.0).drive(500.0, north=400.0).drive(1500.0, north=400.0)
    s.drive(1500.0, north=0.0).drive(2000.0).park(60).drive(2500.0)
    first = len(s.fixes)
    s.drive(2500.0, north=400.0).drive(3500.0, north=400.0).drive(3500.0, north=0.0)
    s.drive(4000.0).park(60).drive(6000.0).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.ROUTE_DEVIATION]
    assert c.start == s.fixes[first].ts - timedelta(seconds=15) and c.completed_ts == s.fixes[first + 1].ts


# --- the facts a stop and an on-board leg carry ------------------------------------------------------------------


def test_an_unauthorized_stop_carries_the_vehicle_its_place_and_the_nearest_point() -> None:
    """Boards at Ponto 1 (2,000 m), stops 5 min at 3,000 m with pupils on board: 1,000 m from Ponto 1 and from
    Ponto 2 (4,000 m), where every fix of the stop lies."""
    from tests.unit.test_occurrence_rules import Script, at, candidates

    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(3000.0)
    arrived = len(s.fixes)  # the stop's first fix, the first at 0 km/h: its place ("fix i": _place stubbed above)
    s.park(300).drive(6000.0).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.UNAUTHORIZED_STOP]
    assert c.vehicle_id == 7 and c.route_id == 1 and (c.lat, c.lon) == at(3000.0)
    assert c.place == f"fix {arrived}"
    assert c.facts["nearest_stop"] in ("Ponto 1", "Ponto 2") and c.facts["ignition_off"] is False  # no fix said off
    assert set(c.facts) >= {"duration_s", "nearest_stop", "nearest_m", "ignition_off"}


def test_over_two_hours_on_board_carries_the_vehicle_the_route_and_the_boarding_stop() -> None:
    from tests.unit.test_occurrence_rules import Script, at, candidates

    s = Script("05:50").until("06:00").drive(2000.0)
    boarded = len(s.fixes)  # the first fix standing at Ponto 1: where a leg to school is placed
    s.park(60).drive(4000.0).park(60).drive(4000.0, north=2000.0)
    s.park(2 * 3600).drive(4000.0, north=0.0).drive(6000.0).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.OVER_2H_ON_BOARD]
    assert c.vehicle_id == 7 and c.route_id == 1 and (c.lat, c.lon) == at(2000.0)  # Ponto 1, the first boarding
    assert c.place == f"fix {boarded}" and c.facts["leg"] == "to_school"


# --- boarding stops skipped on a run made (_skipped, through schedule_delays) ---------------------------------------

P3 = Point("Ponto 3", "boarding", -10.43, -62.42, 4, None, 1)
SCHOOL5 = Point("Escola", "school", -10.43, -62.41, 5, None, 1)


def skips(
    visits: list[Visit], sched: list[float], plans: list[RunPlan] | None = None, times: list[float] | None = None
) -> list[Candidate]:
    """The schedule_delay candidates of a run's visits (any number of points), fixes at `times` (default: every
    30 s from T - 3600 to T + 9000), each naming the boarding stops it found skipped."""
    t = np.arange(T - 3600.0, T + 9001.0, 30.0) if times is None else np.array(times)
    a = cast(Analysis, SimpleNamespace(track=SimpleNamespace(t=t), keep=np.ones(len(t), bool), vehicle=VEH))
    run = Run(DAY, visits, list[float | None](sched), T + 7200.0)
    return rules.schedule_delays(a, DAY, [(ROUTE, run)], {1: plans or [PLAN]}, DEFAULT)


def skipped_stops(found: list[Candidate]) -> list[tuple[int | None, list[str]]]:
    return [(c.run_no, list(c.facts["skipped_stops"])) for c in found if "skipped_stops" in c.facts]


def gone(p: Point) -> Visit:
    return visit(p, None, None, SKIPPED)


def test_a_run_is_made_by_its_school_served_or_by_half_its_boarding_stops_served_not_by_its_garage() -> None:
    """A skipped boarding stop is pupils left behind only on a run otherwise made (its school served, or at least
    half its boarding stops served); on a run not made it is run_not_made's (judged once, as a run)."""
    garage, school = visit(GARAGE, T - 600.0, T), visit(SCHOOL, T + 720.0, T + 1200.0)
    # the school served, no boarding stop served: made, both stops left behind (seen at the school)
    found = skips([garage, gone(P1), gone(P2), school], SCHED)
    assert skipped_stops(found) == [(1, ["Ponto 1", "Ponto 2"])] and found[0].start == ts(T + 720.0)
    # the school only passed (not stopped at), no boarding stop served, the garage left: not made
    passed = visit(SCHOOL, T + 720.0, T + 720.0, PASSED)
    assert skipped_stops(skips([garage, gone(P1), gone(P2), passed], SCHED)) == []
    # one of three boarding stops served is less than half: not made; two of four would be half
    sched5 = [T, T + 240.0, T + 480.0, T + 600.0, T + 720.0]
    one_of_three = [
        garage,
        gone(P1),
        visit(P2, T + 480.0, T + 540.0),
        gone(P3),
        visit(SCHOOL5, T + 720.0, None, PASSED),
    ]
    assert skipped_stops(skips(one_of_three, sched5)) == []
    two_of_three = [*one_of_three[:3], visit(P3, T + 600.0, T + 630.0), one_of_three[4]]
    assert skipped_stops(skips(two_of_three, sched5)) == [(1, ["Ponto 1"])]


def test_a_run_not_made_does_not_stop_the_next_run_being_judged() -> None:
    """Two runs in the day: the first not made (nothing skipped is charged to it), the second made with a boarding
    stop skipped: the candidate is the second run's."""
    first = RunPlan(1, DAY, 1, T - 3600.0, T + 360.0, 0.0, 3000.0, Decimal("0.5"))
    second = RunPlan(1, DAY, 2, T + 360.0, T + 7200.0, 3000.0, 6000.0, Decimal("0.5"))
    visits = [visit(GARAGE, T - 600.0, T), gone(P1), gone(P2), visit(SCHOOL, T + 720.0, T + 1200.0)]
    # run 1: the garage and Ponto 1 (none of its one boarding stop served, no school); run 2: Ponto 2 and the school
    found = skips(visits, SCHED, [first, second])
    assert skipped_stops(found) == [(2, ["Ponto 2"])]
    assert found[0].key == f"1:{DAY.isoformat()}:2"


def test_a_point_scheduled_at_its_windows_start_is_the_runs_one_at_its_end_the_next_runs() -> None:
    # Ponto 1 at 06:24 exactly where the window starts: its run's first point, skipped, seen at Ponto 2
    from_p1 = RunPlan(1, DAY, 1, T + 240.0, T + 7200.0, 2000.0, 6000.0, Decimal(1))
    visits = [visit(GARAGE, T - 600.0, T), gone(P1), visit(P2, T + 480.0, T + 540.0), visit(SCHOOL, T + 720.0, None)]
    found = skips(visits, SCHED, [from_p1])
    assert skipped_stops(found) == [(1, ["Ponto 1"])] and found[0].start == ts(T + 480.0)
    # the school at 06:32 exactly where the first window ends belongs to the second run: the first, with its two
    # boarding stops skipped, is not made (nothing charged); the second has no boarding stop
    ends_at_school = RunPlan(1, DAY, 1, T - 3600.0, T + 720.0, 0.0, 6000.0, Decimal("0.5"))
    after = RunPlan(1, DAY, 2, T + 720.0, T + 7200.0, 6000.0, 6000.0, Decimal("0.5"))
    visits = [visit(GARAGE, T - 600.0, T), gone(P1), gone(P2), visit(SCHOOL, T + 720.0, T + 1200.0)]
    assert skipped_stops(skips(visits, SCHED, [ends_at_school, after])) == []


def test_a_skip_is_seen_when_the_way_from_the_point_before_to_the_point_after_has_no_gap_over_gap_s() -> None:
    """The way is judged from the departure from the last point reached before the skipped stop (not from the
    window's start) to the arrival at the next point reached after it (not beyond)."""
    visits = [visit(GARAGE, T - 600.0, T), gone(P1), visit(P2, T + 60.0, T + 120.0), visit(SCHOOL, T + 720.0, None)]
    # two fixes exactly gap_s (60 s) apart: leaving the garage at T and arriving at Ponto 2 at T + 60
    assert skipped_stops(skips(visits, SCHED, times=[T - 600.0, T, T + 60.0, T + 720.0])) == [(1, ["Ponto 1"])]
    # a second more between them: a gap, no evidence of a skip
    late = with_(visits, 2, arrival=T + 61.0)
    assert skipped_stops(skips(late, SCHED, times=[T - 600.0, T, T + 61.0, T + 720.0])) == []
    # the tracker silent before the garage was left (in the window, before the point reached before) or after the
    # arrival at Ponto 2 hides nothing of that way
    quiet = [T - 3000.0, *np.arange(T - 60.0, T + 301.0, 30.0), T + 7000.0]
    assert skipped_stops(skips(visits, SCHED, times=quiet)) == [(1, ["Ponto 1"])]


# --- speeding: the engine's episode as a candidate ------------------------------------------------------------------


def _speeding(fixes: list[Any], limit_kmh: float = 60.0, params: Any = DEFAULT) -> list[Candidate]:
    from tests.unit.test_occurrence_rules import candidates, route

    return [c for c in candidates(fixes, [route(limit_kmh=limit_kmh)], params=params) if c.kind is Kind.SPEEDING]


def test_a_speeding_candidate_is_placed_at_its_top_speed_with_its_facts_to_a_tenth_and_its_km_to_the_metre() -> None:
    """Above 52.34 km/h from Ponto 1 on: 80, then exactly the limit (a dip the episode is merged across, not a fix
    above it), 85.67 (the top), 80; back to 40. The candidate is the vehicle's, at the top speed's fix; speeds to
    0.1 km/h and km to the metre (as the Termo shows them); known at the second fix ABOVE the limit (the dip at
    the limit does not count as one), 60 s after the first."""
    from tests.unit.test_occurrence_rules import SCHOOL_M, Script

    s = Script("05:50").until("06:00").drive(2000.0).drive(2600.0, kmh=80.0).drive(2900.0, kmh=52.34)
    s.drive(3500.0, kmh=85.67).drive(4100.37, kmh=80.0).drive(SCHOOL_M).park(600)
    first, top = next(f for f in s.fixes if f.speed_kmh == 80.0), next(f for f in s.fixes if f.speed_kmh == 85.67)
    (c,) = _speeding(s.fixes, limit_kmh=52.34)
    assert c.vehicle_id == 7 and c.route_id == 1 and (c.lat, c.lon) == (top.lat, top.lon)
    f = c.facts
    assert (f["max_kmh"], f["limit_kmh"], f["over_kmh"]) == (85.7, 52.3, 33.3)
    assert f["km"] == 1.5  # from the first fix above (2,600 m) to the last (4,100.37 m): 1,500.37 m
    assert c.completed_ts == top.ts == first.ts + timedelta(seconds=60)


def test_an_episode_long_enough_only_by_its_estimated_end_is_known_at_the_fix_after_it() -> None:
    """speeding_min_s = 50: two fixes above, 30 s apart, from the midpoint before the first (15 s) to the midpoint
    after the last last 60 s, but the last fix above is only 45 s after the start: the fix after the episode (the
    first under the limit again) is the one that showed it lasted 50 s."""
    from tests.unit.test_occurrence_rules import SCHOOL_M, Script

    params = replace(DEFAULT, report=replace(DEFAULT.report, speeding_min_s=50.0))
    s = Script("05:50").until("06:00").drive(2000.0).drive(3200.0, kmh=80.0).drive(SCHOOL_M).park(600)
    above = [f for f in s.fixes if f.speed_kmh == 80.0]
    assert len(above) == 2
    (c,) = _speeding(s.fixes, params=params)
    assert c.completed_ts == above[-1].ts + timedelta(seconds=30)


def test_the_fixes_an_episode_needs_are_counted_inside_it_not_over_the_day() -> None:
    """speeding_min_s = 10, speeding_min_fixes = 2: the day's second episode is known at its own second fix above,
    however many fixes above the first episode had."""
    from tests.unit.test_occurrence_rules import SCHOOL_M, Script

    params = replace(DEFAULT, report=replace(DEFAULT.report, speeding_min_s=10.0))
    s = Script("05:50").until("06:00").drive(1200.0, kmh=80.0).drive(2400.0).drive(3600.0, kmh=80.0)
    s.drive(SCHOOL_M).park(600)
    above = [f for f in s.fixes if f.speed_kmh == 80.0]
    assert len(above) == 4
    one, two = _speeding(s.fixes, params=params)
    assert one.completed_ts == above[1].ts and two.completed_ts == above[3].ts


# --- deviations: the facts the Termo shows and the route it names ----------------------------------------------------


def test_a_deviations_facts_are_shown_to_a_tenth_of_a_metre_and_its_km_to_the_metre() -> None:
    """A tolerance of 123.456 m and a detour 400.37 m north of the road from 2,500 m to 3,512.345 m: the Termo
    shows the tolerance as 123.5 m, the farthest offset as 400.2 m (400.37 m on the ground is 400.2 m on the UTM
    plane the engine measures in, scale ≈ 0.9996) and the km from the first fix off the route to the last one to
    the metre: 1.413 (the geodesic length along those fixes is 1,412.73 m)."""
    from tests.unit.test_occurrence_rules import GEOD, SCHOOL_M, Script, candidates, route

    r = replace(route(), tolerance_m=123.456)
    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(2500.0)
    first = len(s.fixes)
    s.drive(2500.0, north=400.37).drive(3512.345, north=400.37).drive(3512.345, north=0.0)
    last = len(s.fixes) - 2
    s.drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(s.fixes, [r]) if c.kind is Kind.ROUTE_DEVIATION]
    way = s.fixes[first : last + 1]
    assert round(GEOD.line_length([f.lon for f in way], [f.lat for f in way]) / 1000.0, 3) == 1.413
    assert (c.facts["tolerance_m"], c.facts["max_off_m"], c.facts["km"]) == (123.5, 400.2, 1.413)


def test_a_deviation_names_the_route_it_left_not_the_one_nearest_its_farthest_fix() -> None:
    """Two routes: Linha 1 on the road, Linha 2 1 km north of it (parallel, no points). The bus leaves Linha 1 with
    pupils on board and goes 1.6 km north, 600 m beyond Linha 2 (off both, nearer Linha 2 there): the deviation is
    from Linha 1, the route it left (Art. 26), and the farthest offset is measured from the nearest route."""
    from tests.unit.test_occurrence_rules import SCHOOL_M, Script, at, candidates, route

    ends = [at(0.0, 1000.0), at(SCHOOL_M + 500.0, 1000.0)]
    north = Route(2, "L2", "Linha 2", [p[1] for p in ends], [p[0] for p in ends], 60.0, 100.0, ())
    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(2500.0)
    # 50 km/h: fixes 417 m apart, at 400, 800, 1,200 and 1,600 m north: none inside Linha 2's 100 m corridor
    s.drive(2500.0, kmh=50.0, north=1600.0).drive(3500.0, north=1600.0).drive(3500.0, kmh=50.0, north=0.0)
    s.drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    for routes in ([route(), north], [north, route()]):
        (c,) = [c for c in candidates(s.fixes, routes) if c.kind is Kind.ROUTE_DEVIATION]
        assert c.route_id == 1 and c.facts["tolerance_m"] == 100.0
        assert c.facts["max_off_m"] == pytest.approx(600.0, abs=1.0)


# --- unauthorized stops and on-board legs: their boundary and the facts the Termo shows -----------------------------


def test_a_stop_of_exactly_unauthorized_stop_min_s_counts_a_second_shorter_minimum_does_not() -> None:
    """Art. 38 IX: a stop lasting unauthorized_stop_min_s or more where no point is registered. A 5-minute stop
    (300 s between its estimated instants) counts with a minimum of 300 s, not with 301 s; its distance to the
    nearest point (Ponto 1, 876.54 m west on the ground) is shown to a tenth of a metre."""
    from tests.unit.test_occurrence_rules import Script, candidates

    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(2876.54).park(300).drive(6000.0).park(600)

    def stops(min_s: float) -> list[Candidate]:
        params = replace(DEFAULT, unauthorized_stop_min_s=min_s)
        return [c for c in candidates(s.fixes, params=params) if c.kind is Kind.UNAUTHORIZED_STOP]

    (c,) = stops(300.0)
    assert c.facts["duration_s"] == 300 and c.facts["nearest_stop"] == "Ponto 1"
    assert c.facts["nearest_m"] == 876.5  # 876.54 m on the ground, less the UTM plane's scale: a tenth of a metre
    assert stops(301.0) == []


def test_a_leg_from_school_is_placed_where_the_bus_left_the_school_with_its_minutes_to_a_tenth() -> None:
    """Art. 9 §1: the leg from the school to the last drop-off (Ponto 2) lasts over 2 h (the bus parks 2 h away on
    the way). It is placed at the school stop's last fix (where the pupils' time on board starts), not its first,
    and its minutes are shown to a tenth (fixes every 20 s: the leg's instants fall on 10 s, a sixth of a minute)."""
    from tests.unit.test_occurrence_rules import SCHOOL_M, Script, at, candidates

    s = Script("05:50", step=20.0).until("06:00").drive(2000.0).park(60).drive(4000.0).park(60).drive(SCHOOL_M)
    s.park(600)
    left_school = len(s.fixes) - 1  # the school stop's last fix, standing
    s.drive(4000.0, north=2000.0).park(2 * 3600 + 20 * 7).drive(4000.0, north=0.0).park(60).drive(0.0).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.OVER_2H_ON_BOARD]
    assert c.facts["leg"] == "from_school" and c.facts["from"] == "Escola" and c.facts["to"] == "Ponto 2"
    assert c.place == f"fix {left_school}" and (c.lat, c.lon) == at(SCHOOL_M)
    assert c.end is not None
    # Midway between the school's last standing fix and the first moving one (20 s later), and midway between the
    # last moving fix before Ponto 2 and its first standing one: 10:21:10 to 12:30:50 UTC, 129 min 40 s.
    assert c.start == s.fixes[left_school].ts + timedelta(seconds=10) == datetime(2026, 3, 2, 10, 21, 10, tzinfo=UTC)
    assert c.end == datetime(2026, 3, 2, 12, 30, 50, tzinfo=UTC)
    assert any(f.ts == c.end + timedelta(seconds=10) and f.speed_kmh == 0.0 for f in s.fixes)
    assert c.facts["minutes"] == 129.7  # 129.67: the day is written so that the tenth matters
    # known at the first fix 2 h (onboard_max_s) after the leg started, before the drop-off ends it
    two_h = c.start + timedelta(seconds=DEFAULT.report.onboard_max_s)
    assert c.completed_ts == next(f.ts for f in s.fixes if f.ts >= two_h) < c.end


def test_a_speeding_episode_at_the_last_fix_is_live_until_silent_s_after_half_an_interval_past_it() -> None:
    """The tracker's last fix is above the limit: the episode may still be going on, so it has no end, until the
    tracker has been silent silent_s past the estimated end of that fix (half an interval, 15 s at 30 s fixes):
    exactly then it is still live, a second later it ends."""
    from tests.unit.test_occurrence_rules import Script, candidates

    s = Script("05:50").until("06:00").drive(2000.0).drive(4000.0, kmh=80.0)
    last = s.fixes[-1].ts

    def speeding(after_s: float) -> Candidate:
        now = last + timedelta(seconds=15.0 + DEFAULT.silent_s + after_s)
        (c,) = [c for c in candidates(s.fixes, now=now) if c.kind is Kind.SPEEDING]
        return c

    assert speeding(0.0).end is None
    assert speeding(1.0).end is not None


def test_a_speeding_episode_off_every_route_names_no_route() -> None:
    """Speeding on a detour 400 m north of the road (outside its 100 m corridor): the episode's top-speed fix
    follows no route, so the candidate names none; on the road it names Linha 1."""
    from tests.unit.test_occurrence_rules import SCHOOL_M, Script, candidates

    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(2500.0).drive(2500.0, north=400.0)
    s.drive(3500.0, kmh=80.0, north=400.0).drive(3500.0, north=0.0).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.SPEEDING]
    assert c.route_id is None
    road = Script("05:50").until("06:00").drive(2000.0).drive(3000.0, kmh=80.0).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(road.fixes) if c.kind is Kind.SPEEDING]
    assert c.route_id == 1


def test_a_silence_between_outliers_is_placed_by_the_days_first_fix_and_reappears_at_the_raw_fix_after() -> None:
    """Before the silence only the day's first fix is kept (the two after it are outliers): it says where the
    tracker fell silent. After it, no fix is kept: the raw fix after the silence is all there is, so it says
    where the tracker reappeared (0.003° east of the first fix)."""
    lons = [0.001, 0.5, 0.6, 0.004]
    (c,) = silent(quiet([1000.0, 1020.0, 1040.0, 2400.0], lons=lons, keep=[True, False, False, False]))
    assert (c.lat, c.lon) == (0.0, 0.001)
    assert c.facts["moved_m"] == pytest.approx(0.3 * EQ_M, abs=0.1)


def test_a_deviation_needing_all_its_fixes_is_known_at_its_last_fix_off_the_route() -> None:
    """deviation_min_s = 100: a detour of four fixes off the route (30 s apart, from 15 s before the first) lasts
    100 s only at its fourth and last fix off the route: that fix, not the one after it, makes it known."""
    from tests.unit.test_occurrence_rules import SCHOOL_M, Script, candidates

    params = replace(DEFAULT, report=replace(DEFAULT.report, deviation_min_s=100.0))
    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(2500.0)
    first = len(s.fixes)
    s.drive(2500.0, north=300.0).drive(3500.0, north=300.0).drive(3500.0, north=0.0)
    assert len(s.fixes) - 1 - first == 4  # four fixes 300 m north, then back on the road
    s.drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(s.fixes, params=params) if c.kind is Kind.ROUTE_DEVIATION]
    assert c.start == s.fixes[first].ts - timedelta(seconds=15) and c.completed_ts == s.fixes[first + 3].ts
