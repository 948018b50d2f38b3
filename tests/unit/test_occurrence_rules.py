"""The occurrence rules on hand-made days: a school bus on a straight road east of Jaru, driven by a script of
fixes every 30 s, analysed by the reports' engine exactly as a day's rollup is; no database."""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from datetime import UTC, date, datetime, time, timedelta

import pytest

from telemetria.fix import Fix
from telemetria.geo.geodesic import GEOD
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement.plans import plan_runs
from telemetria.occurrences.detection import rules
from telemetria.occurrences.model import Candidate, Kind
from telemetria.occurrences.params import DEFAULT, DetectParams
from telemetria.reports.analysis import engine
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.schedule import runs_of
from telemetria.reports.analysis.track import Track
from telemetria.reports.model import Point, Route, Vehicle

DAY = date(2026, 3, 2)  # a Monday
LON0, LAT0 = -62.47, -10.43
VEHICLE = Vehicle(7, "OCC1A23", None, None, None, None)
SCHOOL_M = 6000.0
# Garage → Ponto 1 → Ponto 2 → school along the road, one morning run.
# At 40 km/h with a minute at each boarding stop the bus keeps this schedule to the minute.
PLAN = [("Garagem", "garage", 0.0, "06:00:00"), ("Ponto 1", "boarding", 2000.0, "06:04:00"),
        ("Ponto 2", "boarding", 4000.0, "06:08:00"), ("Escola", "school", SCHOOL_M, "06:12:00")]  # fmt: skip


def at(east_m: float, north_m: float = 0.0) -> tuple[float, float]:
    """lat, lon east_m metres east of the garage along its parallel, then north_m north."""
    lon, lat, _ = GEOD.fwd(LON0, LAT0, 90.0 if east_m >= 0 else 270.0, abs(east_m))
    lon, lat, _ = GEOD.fwd(lon, lat, 0.0 if north_m >= 0 else 180.0, abs(north_m))
    return float(lat), float(lon)


def local(hhmm: str) -> datetime:
    return datetime.combine(DAY, time.fromisoformat(hhmm), LOCAL_TZ).astimezone(UTC)


def route(scheduled: bool = True, limit_kmh: float = 60.0) -> Route:
    points = []
    for seq, (name, kind, x, when) in enumerate(PLAN, 1):
        lat, lon = at(x, 4.0)
        points.append(Point(name, kind, lat, lon, seq, when if scheduled else None, 1))
    ends = [at(0.0), at(SCHOOL_M + 500.0)]
    return Route(1, "L1", "Linha 1", [p[1] for p in ends], [p[0] for p in ends], limit_kmh, 100.0, tuple(points))


class Script:
    """A vehicle's fixes, written as what it does: park, drive, fall silent. One fix every `step` seconds."""

    def __init__(self, start: str, east: float = 0.0, step: float = 30.0) -> None:
        self.t = local(start)
        self.x, self.y = east, 0.0
        self.step = step
        self.fixes: list[Fix] = [self._fix(0.0)]

    def _fix(self, kmh: float) -> Fix:
        lat, lon = at(self.x, self.y)
        return Fix(self.t, lat, lon, speed_kmh=kmh)

    def park(self, seconds: float) -> Script:
        for _ in range(round(seconds / self.step)):
            self.t += timedelta(seconds=self.step)
            self.fixes.append(self._fix(0.0))
        return self

    def drive(self, east: float, kmh: float = 40.0, north: float | None = None) -> Script:
        y1 = self.y if north is None else north
        dist = math.hypot(east - self.x, y1 - self.y)
        n = max(1, math.ceil(dist / (kmh / 3.6 * self.step)))
        x0, y0 = self.x, self.y
        for k in range(1, n + 1):
            self.t += timedelta(seconds=self.step)
            self.x, self.y = x0 + (east - x0) * k / n, y0 + (y1 - y0) * k / n
            self.fixes.append(self._fix(kmh))
        return self

    def silent(self, seconds: float) -> Script:
        self.t += timedelta(seconds=seconds)
        return self

    def until(self, hhmm: str) -> Script:
        """Park until the local time hhmm."""
        return self.park((local(hhmm) - self.t).total_seconds())


def on_time(late_min: float = 0.0) -> Script:
    """The morning run: leaves the garage at 06:00 + late, 1 min at each boarding stop, arrives at the school."""
    s = Script("05:50").until((local("06:00") + timedelta(minutes=late_min)).astimezone(LOCAL_TZ).strftime("%H:%M"))
    return s.drive(2000.0).park(60).drive(4000.0).park(60).drive(SCHOOL_M).park(600)


def candidates(
    fixes: Sequence[Fix], routes: Sequence[Route] | None = None, now: datetime | None = None,
    after: rules.Edge | None = None, params: DetectParams = DEFAULT, before: rules.Edge | None = None,
) -> list[Candidate]:  # fmt: skip
    """The day's candidates as derive.py computes them (every assigned route due)."""
    routes = [route()] if routes is None else list(routes)
    d0, d1 = (b.timestamp() for b in day_bounds(DAY))
    a = engine.analyze(Track.of(fixes), VEHICLE, routes, [engine.line(r) for r in routes], [], d0, d1, params.report)
    plans = {r.id: plan_runs(r, engine.line(r), DAY) for r in routes}
    runs = runs_of(a, DAY, params.report)
    by_route = {r.id: run for r, run in runs}
    t_now = (now or local("23:00")).timestamp()
    spans = [s for r in routes for s in rules.due_spans(r, plans[r.id], DAY, by_route.get(r.id), t_now)]
    return rules.day_candidates(a, DAY, runs, plans, spans, before, after, t_now, params)


def kinds(found: Sequence[Candidate]) -> list[Kind]:
    return [c.kind for c in found]


def test_an_ordinary_run_has_no_occurrence() -> None:
    assert candidates(on_time().fixes) == []
    assert candidates(on_time(late_min=8).fixes) == []  # 8 min late: within the tolerance


def test_speeding_is_the_engines_episode_with_its_facts() -> None:
    s = Script("05:50").until("06:00").drive(2000.0).drive(5000.0, kmh=80.0).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.SPEEDING]
    f = c.facts
    assert (f["max_kmh"], f["limit_kmh"], f["over_kmh"]) == (80.0, 60.0, 20.0)
    assert f["duration_s"] == pytest.approx(3000.0 / (80.0 / 3.6), abs=30.0)
    assert f["km"] == pytest.approx(3.0, abs=0.7) and c.route_id == 1
    # It began between the last fix under the limit and the first above (issue 34: the midpoint, with both as
    # bounds), and was an episode at its second fix above (speeding_min_fixes), 30 s after the first.
    first = datetime.fromisoformat(f["start_max"])
    assert c.start == first - timedelta(seconds=15) and datetime.fromisoformat(f["start_min"]) == first - timedelta(
        seconds=30
    )
    assert c.end is not None and c.end == datetime.fromisoformat(f["end_min"]) + timedelta(seconds=15)
    assert c.completed_ts == first + timedelta(seconds=30)
    assert c.place is not None and "rota L1, km" in c.place


def test_speeding_still_going_on_at_the_newest_fix_has_no_end() -> None:
    s = Script("05:50").until("06:00").drive(2000.0).drive(4000.0, kmh=80.0)
    last = s.fixes[-1].ts
    (live,) = candidates(s.fixes, now=last + timedelta(seconds=20))
    assert live.kind is Kind.SPEEDING and live.end is None
    # Once the tracker has been quiet for longer than silent_s, the episode ends at its last fix (and the
    # tracker is silent, mid-run).
    # (Issue 34: the silence is estimated from half an interval after the last fix, 15 s at these 30 s fixes.)
    assert len(candidates(s.fixes, now=last + timedelta(seconds=DEFAULT.silent_s + 14))) == 1
    ended, silent = candidates(s.fixes, now=last + timedelta(seconds=DEFAULT.silent_s + 16))
    assert silent.kind is Kind.TRACKER_SILENT and silent.start == last + timedelta(seconds=15) and silent.end is None
    assert ended.end == last and ended.start == live.start


def test_route_deviation_names_the_route_it_left() -> None:
    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(2500.0).drive(2500.0, north=400.0)
    s.drive(3500.0, north=400.0).drive(3500.0, north=0.0).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.ROUTE_DEVIATION]
    assert c.route_id == 1 and c.facts["tolerance_m"] == 100.0
    assert c.facts["max_off_m"] == pytest.approx(400.0, abs=10.0)
    assert c.facts["km"] == pytest.approx(1.6, abs=0.4) and c.facts["duration_s"] > 60
    assert c.place is not None and "rota L1, km 2," in c.place  # where it left: about km 2.5


def test_a_deviation_counts_only_while_carrying_pupils() -> None:
    """Art. 26: no other itineraries *conduzindo passageiros*. The same detour before the first boarding (the bus
    going to its first stop) is no route_deviation."""
    s = Script("05:50").until("06:00").drive(500.0).drive(500.0, north=400.0).drive(1500.0, north=400.0)
    s.drive(1500.0, north=0.0).drive(2000.0).park(60).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    assert Kind.ROUTE_DEVIATION not in kinds(candidates(s.fixes))


def test_unauthorized_stop_only_when_long_away_from_every_point_and_on_a_route_day() -> None:
    def stopping(at_m: float, seconds: float, step: float = 30.0) -> Script:
        """Boards at Ponto 1, stops `seconds` at `at_m` (pupils on board), then the school."""
        s = Script("05:50", step=step).until("06:00").drive(2000.0).park(60)
        return s.drive(at_m).park(seconds).drive(SCHOOL_M).park(600)

    (c,) = [c for c in candidates(stopping(3000.0, 300).fixes) if c.kind is Kind.UNAUTHORIZED_STOP]
    assert c.facts["duration_s"] == 300 and c.facts["nearest_m"] == pytest.approx(1000.0, abs=5.0)
    assert c.facts["nearest_stop"] in ("Ponto 1", "Ponto 2") and c.end is not None
    # Completed by the first fix at or after its estimated start (stops.py: the midpoint) plus the minimum.
    due = c.start + timedelta(seconds=DEFAULT.unauthorized_stop_min_s)
    assert c.completed_ts is not None and due <= c.completed_ts < due + timedelta(seconds=30)
    # Under unauthorized_stop_min_s (~ what a boarding takes): a halt, not a stop for boarding.
    assert Kind.UNAUTHORIZED_STOP not in kinds(candidates(stopping(3000.0, 30, step=15).fixes))
    # Five minutes at a boarding stop: authorized.
    assert Kind.UNAUTHORIZED_STOP not in kinds(candidates(stopping(2000.0, 300).fixes))
    # A day with no route assigned: nothing to be authorized against, so no such occurrence.
    assert candidates(stopping(3000.0, 300).fixes, routes=[]) == []


def test_a_boarding_length_stop_during_the_run_is_unauthorized_but_not_the_empty_bus_parked_after_it() -> None:
    """Art. 38 IX: stopping *for boarding or alighting* off the authorized places. A 75 s stop (what a boarding
    takes) between the first boarding and the school is one; the empty bus parked far from every point after its
    run (nobody on board) is not, however long."""
    boarding_length = Script("05:50", step=15).until("06:00").drive(2000.0).park(60).drive(3000.0).park(75)
    boarding_length.drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(boarding_length.fixes) if c.kind is Kind.UNAUTHORIZED_STOP]
    assert c.facts["duration_s"] >= 60 and c.facts["nearest_m"] == pytest.approx(1000.0, abs=5.0)
    parked_after = on_time().drive(SCHOOL_M + 3000.0).park(3600)
    assert Kind.UNAUTHORIZED_STOP not in kinds(candidates(parked_after.fixes))
    # The same long stop before anyone boarded: no pupils on board, no Art. 38 IX.
    before_boarding = Script("05:50").until("06:00").drive(1000.0, north=1000.0).park(600).drive(2000.0).park(60)
    before_boarding.drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    assert Kind.UNAUTHORIZED_STOP not in kinds(candidates(before_boarding.fixes))


def test_an_early_departure_leaves_pupils_behind() -> None:
    """Art. 37 XI: the schedule binds both ways. A bus that leaves its boarding stops 20 min before their times
    (early_tolerance_min: 15) is off schedule; one a few minutes early is not."""
    s = Script("05:30").until("05:40").drive(2000.0).park(60).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.SCHEDULE_DELAY]
    assert c.facts["early_stop"] == "Ponto 1" and c.facts["early_stops"] == 2 and "late_min" not in c.facts
    assert c.facts["early_min"] == pytest.approx(20.0, abs=1.5) and c.start == datetime.fromisoformat(
        c.facts["departed"]
    )
    assert c.key == f"1:{DAY.isoformat()}:1"
    assert Kind.SCHEDULE_DELAY not in kinds(candidates(on_time(late_min=-5).fixes))


def test_a_boarding_stop_skipped_on_a_run_made() -> None:
    """A run that serves Ponto 2 and the school but drives past Ponto 1 far off (never within its radius) is made
    (no run_not_made) and leaves pupils behind: a schedule_delay naming the skipped stop, seen at the next stop."""
    s = Script("05:50").until("06:00").drive(1500.0).drive(1500.0, north=600.0).drive(2500.0, north=600.0)
    s.drive(2500.0, north=0.0).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.SCHEDULE_DELAY]
    assert c.facts["skipped_stops"] == ["Ponto 1"] and "late_min" not in c.facts
    assert c.start.astimezone(LOCAL_TZ).strftime("%H:%M") < "06:12"  # at Ponto 2, on time
    # The tracker silent across Ponto 1: no evidence it was skipped (the silence is the tracker's own finding).
    quiet = Script("05:50").until("06:00").drive(1000.0).silent(400)
    quiet.x = 3000.0
    quiet.drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    assert not [c for c in candidates(quiet.fixes) if "skipped_stops" in c.facts]


def test_a_late_run_is_one_schedule_delay_from_its_first_late_stop() -> None:
    found = candidates(on_time(late_min=15).fixes)
    (c,) = found
    assert c.kind is Kind.SCHEDULE_DELAY and c.key == f"1:{DAY.isoformat()}:1" and c.run_no == 1
    f = c.facts
    assert f["stop"] == "Garagem" and f["scheduled"] == local("06:00").isoformat()
    assert f["late_min"] == pytest.approx(15.0, abs=0.6) and f["late_stops"] == 4
    assert f["max_late_min"] >= f["late_min"] and c.start == datetime.fromisoformat(f["arrived"])
    assert c.end is not None and c.end > c.start
    # Late only from Ponto 2 on (a long halt after Ponto 1): the occurrence starts there.
    s = Script("05:50").until("06:00").drive(2000.0).park(15 * 60).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    (c2,) = candidates(s.fixes)
    assert c2.facts["stop"] == "Ponto 2" and c2.facts["late_stops"] == 2
    # Without scheduled times there is nothing to be late for.
    assert candidates(on_time(late_min=15).fixes, routes=[route(scheduled=False)]) == []
    # The run's window ends at 08:12: a vehicle that left the garage at 08:20 did not make the run late, it did not
    # make it (no schedule delay; issue 33: dropping `reached <= plan.end` survived every test); one that left at
    # 08:05 is late.
    assert kinds(candidates(on_time(late_min=140).fixes)) == []
    (c3,) = candidates(on_time(late_min=125).fixes)
    assert c3.kind is Kind.SCHEDULE_DELAY and c3.facts["late_min"] == pytest.approx(125.0, abs=0.6)


def test_over_two_hours_on_board() -> None:
    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(4000.0).park(60).drive(4000.0, north=2000.0)
    s.park(2 * 3600).drive(4000.0, north=0.0).drive(SCHOOL_M).park(600)
    (c,) = [c for c in candidates(s.fixes) if c.kind is Kind.OVER_2H_ON_BOARD]
    assert c.facts["from"] == "Ponto 1" and c.facts["to"] == "Escola" and c.facts["minutes"] > 120
    assert c.end is not None and (c.end - c.start).total_seconds() / 60 == pytest.approx(c.facts["minutes"], abs=0.1)
    assert c.completed_ts is not None and c.completed_ts >= c.start + timedelta(hours=2)


def test_silence_inside_a_due_run() -> None:
    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(3000.0)
    before = s.fixes[-1].ts
    s.silent(600).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    found = [c for c in candidates(s.fixes) if c.kind is Kind.TRACKER_SILENT]
    (c,) = found
    # Issue 34: the tracker (every 30 s) stopped between its last fix and the next it would have sent, and
    # resumed between the send before its first fix after and that fix: the midpoints, 600 s, with the bounds.
    assert c.start == before + timedelta(seconds=15) and c.end == before + timedelta(seconds=615)
    assert c.route_id == 1 and c.run_no == 1
    assert c.facts["gap_s"] == 630  # the silence and the first step after it
    bounds = [before + timedelta(seconds=x) for x in (0, 30, 600, 630)]
    assert [datetime.fromisoformat(c.facts[k]) for k in ("start_min", "start_max", "end_min", "end_max")] == bounds
    assert c.facts["moved_m"] == pytest.approx(1000.0 / 3, abs=5.0)  # one 30 s step's worth: under silent_moved_m
    assert c.completed_ts == c.end + timedelta(seconds=15)  # the first fix after it
    # Four minutes is not a silence; nor 320 s between two fixes 30 s apart: the tracker was silent 290 s (the
    # gap read it one interval long, and made it a silence).
    short = Script("05:50").until("06:00").drive(3000.0).silent(210).drive(SCHOOL_M).park(600)
    assert Kind.TRACKER_SILENT not in kinds(candidates(short.fixes))
    short = Script("05:50").until("06:00").drive(3000.0).silent(290).drive(SCHOOL_M).park(600)
    assert Kind.TRACKER_SILENT not in kinds(candidates(short.fixes))
    longer = Script("05:50").until("06:00").drive(3000.0).silent(301).drive(SCHOOL_M).park(600)
    assert Kind.TRACKER_SILENT in kinds(candidates(longer.fixes))


def test_no_silence_while_no_run_is_due() -> None:
    """Issue 32: a silent tracker is an infraction (Art. 37 X, duty Art. 15) only while a run is due."""
    # Parked in the garage after the run, tracker asleep for an hour: nothing.
    s = on_time().drive(0.0).park(60).silent(3600).park(60)
    assert Kind.TRACKER_SILENT not in kinds(candidates(s.fixes))
    # The same hour, and the vehicle reappears 3 km away: it moved untracked, but off duty.
    s = on_time().drive(0.0).park(60)
    s.silent(3600)
    s.x = 3000.0
    s.park(60)
    assert Kind.TRACKER_SILENT not in kinds(candidates(s.fixes))


def test_no_silence_beside_a_run_not_made() -> None:
    """A due run with no point reached is judged as a run (run_not_made, or justified): once its window ended, no
    tracker_silent beside it (one event, one charge). While it is still open, the live silence stands."""
    evening = rules.Edge((local("06:00") - timedelta(hours=12)).timestamp(), *at(0.0))
    assert [c.kind for c in candidates([], before=evening, now=local("23:00"))] == []
    (live,) = candidates([], before=evening, now=local("06:30"))
    assert live.kind is Kind.TRACKER_SILENT and live.end is None


def test_a_tracker_quiet_since_the_day_before_is_silent_from_the_run_on() -> None:
    # Quiet since the evening before; it wakes at 06:25, 25 min into the run: silent from 06:00 (the run's
    # first scheduled time), as the day sees it.
    s = Script("06:25").drive(2000.0).park(60).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    evening = rules.Edge((local("06:25") - timedelta(hours=12)).timestamp(), *at(0.0))
    for before in (None, evening):
        silent = [c for c in candidates(s.fixes, before=before) if c.kind is Kind.TRACKER_SILENT]
        # It resumed between the send before its first fix and that fix (issue 34): 06:24:45 estimated.
        assert [(c.start, c.end) for c in silent] == [(local("06:00"), local("06:25") - timedelta(seconds=15))], before
        assert "start_min" not in silent[0].facts  # from the run's start: exact, no bounds
        assert silent[0].facts["gap_s"] == (None if before is None else 12 * 3600)
    # Awake at 06:03, when the bus leaves: 3 min is no silence.
    s = Script("06:03").drive(2000.0).park(60).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    assert Kind.TRACKER_SILENT not in kinds(candidates(s.fixes, before=evening))
    # Nothing at all on a due day: live from the run's start, since the last fix.
    (live,) = candidates([], before=evening, now=local("06:30"))
    assert (live.kind, live.start, live.end, live.facts) == (
        Kind.TRACKER_SILENT,
        local("06:00"),
        None,
        {"since": evening.t and rules.iso(evening.t)},
    )
    assert candidates([], before=evening, now=local("06:04")) == []


def test_live_silence_then_resumed_or_filled() -> None:
    def upto() -> Script:
        return Script("05:50").until("06:00").drive(2000.0).park(60).drive(3000.0)

    s = upto()
    last = s.fixes[-1].ts
    # 4 min after the last fix: not yet; 6 min: a live silence, with no end.
    assert candidates(s.fixes, now=last + timedelta(minutes=4)) == []
    (live,) = candidates(s.fixes, now=last + timedelta(minutes=6))
    assert live.kind is Kind.TRACKER_SILENT and live.end is None and live.start == last + timedelta(seconds=15)
    assert live.facts == {"since": last.isoformat(), "start_min": last.isoformat(),
                          "start_max": (last + timedelta(seconds=30)).isoformat()}  # fmt: skip
    assert live.completed_ts is None and live.route_id == 1
    # Still silent after the scheduled times have passed, the school not reached: still the same live silence.
    (later,) = candidates(s.fixes, now=local("09:00"))
    assert later.start == live.start and later.end is None
    # Data resumes 20 min later (the gap stays): the same start, now with its end.
    resumed = upto().silent(20 * 60 - 30).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    silent = [c for c in candidates(resumed.fixes, now=local("09:00")) if c.kind is Kind.TRACKER_SILENT]
    (done,) = silent
    assert done.start == live.start and done.end == last + timedelta(minutes=20, seconds=-15)
    assert done.facts["gap_s"] == 1200
    # Not a fix more that day: where and when the vehicle reappears (the next morning) comes from `after`.
    edge = rules.Edge((last + timedelta(days=1)).timestamp(), *at(0.0))
    (ended,) = candidates(s.fixes, now=local("09:00") + timedelta(days=2), after=edge)
    assert (ended.start, ended.end, ended.facts["gap_s"]) == (live.start, last + timedelta(days=1, seconds=-15), 86400)
    # A store-and-forward batch fills the gap: no silence at all.
    s.drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    assert candidates(s.fixes, now=local("09:00")) == []


def test_a_silence_outside_due_runs_is_never_live() -> None:
    s = on_time().drive(0.0).park(60)
    assert candidates(s.fixes, now=local("10:00")) == []


def test_arrival_order_changes_nothing() -> None:
    s = Script("05:50").until("06:12").drive(2000.0).park(60).drive(3000.0, kmh=80.0).park(300).silent(400)
    s.drive(3000.0, north=400.0).drive(3500.0, north=0.0).drive(SCHOOL_M).park(600)
    fixes = list(s.fixes)
    whole = candidates(fixes)
    assert set(kinds(whole)) == {Kind.SPEEDING, Kind.UNAUTHORIZED_STOP, Kind.SCHEDULE_DELAY, Kind.TRACKER_SILENT,
                                 Kind.ROUTE_DEVIATION}  # fmt: skip
    random.Random(4).shuffle(fixes)
    assert candidates(fixes) == whole


def test_facts_are_json_and_rounded() -> None:
    import orjson

    s = Script("05:50").until("06:10").drive(2000.0).park(60).drive(3000.0, kmh=80.0).park(300).silent(400)
    s.drive(SCHOOL_M).park(600)
    for c in candidates(s.fixes):
        orjson.loads(orjson.dumps(dict(c.facts)))
        for k, v in c.facts.items():
            if isinstance(v, float):
                assert v == round(v, 3), (c.kind, k, v)


def test_only_candidates_starting_inside_the_day(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fixes of the evening before (context) and their silence belong to that day, not to this one.
    s = Script("05:50").until("06:00").drive(2000.0).park(60).drive(4000.0).park(60).drive(SCHOOL_M).park(600)
    early = [Fix(f.ts - timedelta(hours=7), f.lat, f.lon, speed_kmh=80.0) for f in s.fixes[:40]]
    assert candidates(early + s.fixes) == []
    # A rule that finds episodes in the context on both sides (the analysis reaches CONTEXT beyond the day): only
    # the one starting inside the day is the day's; the day's end is not (issue 33: this test passed on an empty
    # list, and removing the filter left every test green).
    d0, d1 = day_bounds(DAY)
    found_by_rule = [
        Candidate(Kind.SPEEDING, VEHICLE.id, at, at + timedelta(minutes=1))
        for at in (d0 - timedelta(seconds=1), d0, d1 - timedelta(seconds=1), d1)
    ]
    monkeypatch.setattr(rules, "speeding", lambda *a: found_by_rule)
    assert [c.start for c in candidates(early + s.fixes)] == [d0, d1 - timedelta(seconds=1)]


def test_an_outlier_after_a_gap_is_no_movement() -> None:
    # Parked after the run, the tracker asleep for 10 min; its first fix back jumps 3 km and the next is home again:
    # the cleaning drops the odd fix out, and the silence is measured from the kept ones: it did not move.
    s = on_time().drive(0.0).park(60).silent(600)
    s.x = 3000.0
    s.fixes.append(s._fix(0.0))  # the odd fix out, 10 min after the last
    s.x = 0.0
    s.park(120)
    assert Kind.TRACKER_SILENT not in kinds(candidates(s.fixes))
