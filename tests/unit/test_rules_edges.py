"""The occurrence rules' small pure helpers at their boundaries, pinned where the mutation pass (docs/testing.md)
found them unwatched: when a late arrival or an early departure is evidence (not across a gap), which run plan
an instant belongs to, the fix that completes a candidate, the fix at which an episode qualifies, and the due
span a silence is charged to. Hand-written times (epoch s); no analysis, no database."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import numpy as np

from telemetria.measurement.model import RunPlan
from telemetria.occurrences.detection import rules

KEPT = np.array([0.0, 100.0, 200.0])


def test_an_arrival_is_evidence_only_with_a_fix_before_it_within_gap_s() -> None:
    """_observed(departure=False): the kept fix before `at` came at most gap_s earlier (the vehicle was seen
    approaching); with no fix before it the arrival happened somewhere in a gap."""
    assert rules._observed(KEPT, 160.0, False, 60.0)  # 160 - 100 = 60: exactly gap_s is seen
    assert not rules._observed(KEPT, 161.0, False, 60.0)
    assert rules._observed(KEPT, 10.0, False, 60.0)  # the first fix is the one before it
    assert not rules._observed(KEPT, 0.0, False, 60.0)  # at the first fix: nothing before it
    assert not rules._observed(KEPT, -5.0, False, 600.0)
    # at a fix, the fix before is the one strictly earlier (0, not 100 itself)
    assert rules._observed(KEPT, 100.0, False, 100.0) and not rules._observed(KEPT, 100.0, False, 99.0)


def test_a_departure_is_evidence_only_with_a_fix_after_it_within_gap_s() -> None:
    """_observed(departure=True): the kept fix after `at` (strictly later) came at most gap_s later."""
    assert rules._observed(KEPT, 100.0, True, 100.0)  # the next fix after 100 is 200: exactly gap_s
    assert not rules._observed(KEPT, 100.0, True, 50.0)  # not the fix at 100 itself
    assert rules._observed(KEPT, 150.0, True, 50.0)
    assert not rules._observed(KEPT, 200.0, True, 1e9)  # the last fix: nothing after it
    assert not rules._observed(KEPT, 250.0, True, 1e9)


def _plan(run_no: int, start: float, end: float) -> RunPlan:
    return RunPlan(1, date(2026, 3, 2), run_no, start, end, 0.0, 1000.0, Decimal("0.5"))


def test_an_instant_belongs_to_the_plan_whose_window_holds_it_start_included_end_excluded() -> None:
    plans = [_plan(1, 0.0, 100.0), _plan(2, 100.0, 200.0)]
    assert rules._plan_of(plans, 0.0) == plans[0]
    assert rules._plan_of(plans, 99.5) == plans[0]
    assert rules._plan_of(plans, 100.0) == plans[1]
    assert rules._plan_of(plans, 200.0) is None
    assert rules._plan_of([], 50.0) is None


def test_a_candidate_is_completed_by_the_first_fix_at_or_after_its_instant() -> None:
    t = np.array([0.0, 30.0, 60.0])
    assert rules.completing(t, 30.0) == 30.0
    assert rules.completing(t, 30.5) == 60.0
    assert rules.completing(t, 29.9999) == 30.0
    assert rules.completing(t, 60.0) == 60.0
    assert rules.completing(t, 60.5) is None


def test_an_episode_qualifies_at_the_fix_that_gives_it_both_its_fixes_and_its_seconds() -> None:
    t = np.array([1000.0, 1010.0, 1020.0, 1030.0, 1040.0, 1050.0])
    members = np.array([1, 2, 3, 4, 5])
    first = 1010.0  # seconds counted from its first fix
    assert rules._qualifying(t, members, 3, 20.0, first, None) == 1030.0  # 3 fixes (1010..1030) and 20 s, both exactly
    assert rules._qualifying(t, members, 4, 10.0, first, None) == 1040.0  # the fixes decide
    assert rules._qualifying(t, members, 2, 30.0, first, None) == 1040.0  # the seconds decide
    assert rules._qualifying(t, members, 1, 0.0, first, None) == 1010.0
    # seconds counted from the estimated start (issue 34: midway from the fix before, 1005): 25 s at 1030, not 1040
    assert rules._qualifying(t, members, 1, 25.0, 1005.0, None) == 1030.0
    assert rules._qualifying(t, members, 1, 25.0, first, None) == 1040.0
    # never both: the fix after the run, which gave its estimated end, else its last member
    assert rules._qualifying(t, np.array([1, 3, 4]), 9, 0.0, first, None) == 1040.0
    assert rules._qualifying(t, np.array([1, 3, 4]), 9, 0.0, first, 1050.0) == 1050.0


def test_a_silence_is_charged_to_the_first_due_span_it_covers_for_more_than_silent_s() -> None:
    early = rules.DueSpan(1, 1, 0.0, 4000.0, 1000.0, 2000.0)
    late = rules.DueSpan(2, 1, 0.0, 9000.0, 3000.0, 8000.0)
    assert rules._due([late, early], 0.0, 9000.0, 300.0) == early  # by start, not by the order given
    assert rules._due([late, early], 1700.0, 9000.0, 300.0) == late  # 300 s inside `early` is not more than 300
    assert rules._due([late, early], 1699.0, 9000.0, 300.0) == early
    assert rules._due([late, early], 2100.0, 2900.0, 300.0) is None  # between them


def test_a_skipped_boarding_stop_counts_on_a_run_with_half_its_boarding_stops_served_and_no_school() -> None:
    """_skipped: a run is made (so a skipped stop is pupils left behind, not a run not made) when its school was
    served or at least half its boarding stops were: Ponto 1 driven past far off, Ponto 2 served (1 of 2: half),
    then the bus turns away before the school."""
    from tests.unit.test_occurrence_rules import Script, candidates

    s = Script("05:50").until("06:00").drive(1500.0).drive(1500.0, north=600.0).drive(2500.0, north=600.0)
    s.drive(2500.0, north=0.0).drive(4000.0).park(60).drive(4000.0, north=3000.0).park(600)
    skipped = [c.facts["skipped_stops"] for c in candidates(s.fixes) if "skipped_stops" in c.facts]
    assert skipped == [["Ponto 1"]]
