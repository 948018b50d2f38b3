"""The simulated week's scorer (pure) and the week itself: its truth, its margins, its determinism."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from functools import cache

from telemetria.occurrences.model import Kind
from telemetria.sim.week import FLEET, INACTIVE, RESERVE, SILENT_S, Week, margins, simulate_week
from telemetria.sim.week_score import Item, markdown, score

T0 = datetime(2026, 3, 9, 10, 0, tzinfo=UTC)


def at(s: float) -> datetime:
    return T0 + timedelta(seconds=s)


def test_a_perfect_detection_scores_all_found_and_nothing_else() -> None:
    truth = [Item("speeding", 1, at(0)), Item("speeding", 1, at(600)), Item("route_deviation", 2, at(0))]
    got = [Item("speeding", 1, at(12)), Item("speeding", 1, at(590)), Item("route_deviation", 2, at(-29))]
    s = score(truth, got)
    assert s.perfect
    assert (s.kinds["speeding"].tp, s.kinds["speeding"].max_start_err_s) == (2, 12.0)
    assert s.kinds["route_deviation"].max_start_err_s == 29.0


def test_misses_false_detections_and_duplicates_are_told_apart() -> None:
    truth = [Item("speeding", 1, at(0)), Item("unauthorized_stop", 1, at(0))]
    got = [
        Item("speeding", 1, at(5)),
        Item("speeding", 1, at(20)),  # the same event again: a duplicate
        Item("speeding", 2, at(0)),  # another vehicle: false
        Item("unauthorized_stop", 1, at(31)),  # too far from the true start: false, and the truth missed
        Item("tracker_silent", 1, at(0)),  # nothing of that kind happened
    ]
    s = score(truth, got, kinds=["schedule_delay"])
    sp, st, ts = s.kinds["speeding"], s.kinds["unauthorized_stop"], s.kinds["tracker_silent"]
    assert (sp.truth, sp.tp, sp.fn, sp.fp, sp.dup) == (1, 1, 0, 1, 1)
    assert (st.truth, st.tp, st.fn, st.fp, st.dup) == (1, 0, 1, 1, 0)
    assert (ts.truth, ts.tp, ts.fp) == (0, 0, 1)
    assert s.kinds["schedule_delay"].truth == 0 and not s.perfect
    assert [x.kind for x in s.missed] == ["unauthorized_stop"]
    assert len(s.duplicates) == 1 and len(s.false) == 3


def test_each_truth_takes_its_nearest_detection() -> None:
    # Two events 40 s apart and two detections between them: each event gets one, none is a duplicate.
    truth = [Item("speeding", 1, at(0)), Item("speeding", 1, at(40))]
    s = score(truth, [Item("speeding", 1, at(25)), Item("speeding", 1, at(15))])
    assert s.perfect and s.kinds["speeding"].max_start_err_s == 15.0


def test_the_markdown_table_has_a_row_per_kind_and_totals() -> None:
    s = score([Item("speeding", 1, at(0))], [Item("speeding", 1, at(3)), Item("speeding", 1, at(900))])
    table = markdown(s).splitlines()
    assert table[0].startswith("| kind | planted |")
    assert table[2] == "| `speeding` | 1 | 1 | 0 | 1 | 0 | 3 |"
    assert table[-1] == "| **total** | 1 | 1 | 0 | 1 | 0 | 3 |"


@cache
def week() -> Week:
    return simulate_week()


def test_the_week_plants_every_kind_and_is_the_same_every_time() -> None:
    w = week()
    assert {e.kind for e in w.events} == set(Kind), "every kind of occurrence is planted at least once"
    again = simulate_week()
    assert [(a.at, a.vehicle, a.fix) for a in again.arrivals] == [(a.at, a.vehicle, a.fix) for a in w.arrivals]
    assert again.events == w.events and again.silences == w.silences
    assert {a.vehicle for a in w.arrivals} == set(range(FLEET))


def test_the_substitutions_give_only_the_unauthorised_vehicle() -> None:
    w = week()
    assert not [e for e in w.events if e.vehicle == RESERVE], "the reserve vehicle is an authorised substitute"
    assert [e.kind for e in w.events if e.vehicle == INACTIVE] == ["unauthorized_vehicle"]
    assert any(x.vehicle == RESERVE for x in w.drives) and any(x.vehicle == INACTIVE for x in w.drives)


def test_normal_driving_keeps_clear_of_every_threshold() -> None:
    m = margins(week())
    assert m.normal_max_kmh < 60 - 5, m
    assert m.shortest_speeding_s >= 20 + 20, m  # planted episodes are far longer than speeding_min_s
    assert m.normal_max_off_m < 100 / 4, m
    assert m.longest_unplanned_halt_s < 60 - 30, m  # each end of a stop may read half a 30 s interval long
    assert m.normal_max_late_s < 600 - 240, m
    assert m.min_planted_late_s > 600 + 300, m
    assert m.normal_longest_leg_s < 7200 / 2, m


def test_silences_are_real_holes_and_the_fixes_have_no_gap_but_the_planted_one() -> None:
    w = week()
    assert sorted(s.note for s in w.silences) == ["filled", "filled_late", "late_batch"]
    for s in w.silences:
        assert (s.end - s.start).total_seconds() > 3 * SILENT_S, s
        # Live, the hole stays open far longer than the silence threshold before the data filling it arrives.
        held = [a for a in w.arrivals if a.vehicle == s.vehicle and s.start < a.fix.ts < s.end]
        assert held and (min(a.at for a in held) - s.start).total_seconds() > 3 * SILENT_S, s
    silent = [e for e in w.events if e.kind == "tracker_silent"]
    assert len(silent) == 1 and (silent[0].end - silent[0].start).total_seconds() > 1000  # type: ignore[operator]
    # Live, a normal fix arrives within seconds of its time; held ones hours late.
    lags = sorted((a.at - a.fix.ts).total_seconds() for a in w.arrivals)
    assert lags[0] > 0 and lags[len(lags) // 2] < 5 and lags[-1] > 3 * 3600
