"""Reconciling stored occurrences with a window's candidates (pure): insert, update, withdraw, note, restore."""

from __future__ import annotations

import itertools
from dataclasses import replace
from datetime import UTC, datetime, timedelta

from telemetria.occurrences.detection.reconcile import (
    NOT_SUPPORTED,
    SILENCE_FILLED,
    Plan,
    Stored,
    reconcile,
    signature,
)
from telemetria.occurrences.model import Candidate, Kind, Status

T0 = datetime(2026, 3, 9, 11, 0, tzinfo=UTC)
WINDOW = (T0 - timedelta(hours=3), T0 + timedelta(hours=3))


def at(minutes: float) -> datetime:
    return T0 + timedelta(minutes=minutes)


def cand(kind: Kind = Kind.SPEEDING, start: float = 0, end: float | None = 2, **kw: object) -> Candidate:
    return Candidate(kind=kind, vehicle_id=7, start=at(start), end=None if end is None else at(end), **kw)  # type: ignore[arg-type]


def stored_as(c: Candidate, id: int, status: Status = Status.DETECTED, **kw: object) -> Stored:
    """What the store holds after inserting `c`."""
    return Stored(
        id=id, kind=c.kind, vehicle_id=c.vehicle_id, start=c.start, end=c.end, status=status, key=c.key,
        route_id=c.route_id, run_no=c.run_no, lat=c.lat, lon=c.lon, place=c.place, facts=dict(c.facts), **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def apply(stored: list[Stored], plan: Plan) -> list[Stored]:
    """A model of store.apply, to check that reconciling what was applied gives nothing more to do."""
    out = {s.id: s for s in stored}
    next_id = max(out, default=0) + 1
    for c in plan.inserts:
        out[next_id] = stored_as(c, next_id)
        next_id += 1
    for u in plan.updates:
        s = out[u.id]
        out[u.id] = replace(stored_as(u.candidate, u.id), last_note=s.last_note)
    for w in plan.withdrawals:
        out[w.id] = replace(out[w.id], status=Status.WITHDRAWN)
    for n in plan.notes:
        out[n.id] = replace(out[n.id], last_note=n.data)
    return list(out.values())


def test_new_candidates_are_inserted() -> None:
    c = cand(facts={"max_kmh": 78.0, "limit_kmh": 60.0})
    plan = reconcile([], [c], WINDOW)
    assert plan.inserts == [c] and not plan.updates and not plan.withdrawals and not plan.notes


def test_same_candidate_again_changes_nothing() -> None:
    c = cand(facts={"max_kmh": 78.0})
    assert not reconcile([stored_as(c, 1)], [c], WINDOW)


def test_an_episode_that_grew_is_updated_in_place() -> None:
    live = cand(end=None, facts={"max_kmh": 70.0})
    grown = cand(end=3, facts={"max_kmh": 81.0})
    plan = reconcile([stored_as(live, 1)], [grown], WINDOW)
    assert [(u.id, u.candidate) for u in plan.updates] == [(1, grown)] and not plan.inserts


def test_overlap_matches_even_when_the_start_moved() -> None:
    first = cand(start=0, end=5)
    later = cand(start=-1, end=6)  # a late batch showed it began a minute earlier
    plan = reconcile([stored_as(first, 1)], [later], WINDOW)
    assert [u.id for u in plan.updates] == [1] and not plan.inserts and not plan.withdrawals


def test_no_overlap_is_a_new_occurrence_and_the_old_one_is_withdrawn() -> None:
    old = cand(start=0, end=2)
    new = cand(start=10, end=12)
    plan = reconcile([stored_as(old, 1)], [new], WINDOW)
    assert plan.inserts == [new]
    assert [(w.id, w.reason) for w in plan.withdrawals] == [(1, NOT_SUPPORTED)]


def test_a_filled_silence_is_withdrawn_with_the_reason() -> None:
    live = cand(Kind.TRACKER_SILENT, start=0, end=None, facts={"since": at(0).isoformat()})
    plan = reconcile([stored_as(live, 4)], [], WINDOW)
    assert [(w.id, w.reason) for w in plan.withdrawals] == [(4, SILENCE_FILLED)]


def test_a_silence_still_there_when_data_resumes_keeps_its_row_with_an_end() -> None:
    live = cand(Kind.TRACKER_SILENT, start=0, end=None, facts={"since": at(0).isoformat()})
    gap = cand(Kind.TRACKER_SILENT, start=0, end=12, facts={"gap_s": 720.0, "moved_m": 40.0})
    plan = reconcile([stored_as(live, 4)], [gap], WINDOW)
    assert [(u.id, u.candidate.end) for u in plan.updates] == [(4, at(12))] and not plan.withdrawals


def test_stored_outside_the_window_is_never_withdrawn() -> None:
    early = cand(start=-300, end=-298)  # 5 h before: not recomputed this time
    assert not reconcile([stored_as(early, 1)], [], WINDOW)
    assert [w.id for w in reconcile([stored_as(early, 1)], [], None).withdrawals] == [1]


def test_keyed_candidates_match_by_key_not_by_time() -> None:
    a = cand(Kind.SCHEDULE_DELAY, start=0, end=1, key="3:2026-03-09:1", facts={"max_late_min": 12})
    b = cand(Kind.SCHEDULE_DELAY, start=30, end=31, key="3:2026-03-09:1", facts={"max_late_min": 15})
    other = cand(Kind.SCHEDULE_DELAY, start=0, end=1, key="3:2026-03-09:2")
    plan = reconcile([stored_as(a, 1)], [b, other], WINDOW)
    assert [u.id for u in plan.updates] == [1] and plan.inserts == [other]


def test_kinds_and_vehicles_never_mix() -> None:
    c = cand(Kind.ROUTE_DEVIATION)
    s = stored_as(cand(Kind.SPEEDING), 1)
    plan = reconcile([s], [c, replace(c, kind=Kind.SPEEDING, vehicle_id=8)], WINDOW)
    assert len(plan.inserts) == 2 and [w.id for w in plan.withdrawals] == [1]


def test_a_confirmed_one_gets_a_note_once_and_its_data_is_not_touched() -> None:
    c = cand(facts={"max_kmh": 78.0})
    changed = cand(facts={"max_kmh": 84.0})
    s = stored_as(c, 1, Status.CONFIRMED)
    plan = reconcile([s], [changed], WINDOW)
    assert not plan.updates and [(n.id, n.data) for n in plan.notes] == [(1, signature(changed))]
    noted = replace(s, last_note=plan.notes[0].data)
    assert not reconcile([noted], [changed], WINDOW)  # the same news is not noted twice
    assert not reconcile([noted], [c], WINDOW)  # back to what was frozen: nothing to say


def test_a_confirmed_one_that_vanished_is_noted_not_withdrawn() -> None:
    s = stored_as(cand(), 1, Status.NOTIFIED)
    plan = reconcile([s], [], WINDOW)
    assert not plan.withdrawals and [n.data for n in plan.notes] == [{"vanished": True}]
    assert not reconcile([replace(s, last_note={"vanished": True})], [], WINDOW)


def test_dismissed_ones_stay_as_the_servidor_left_them() -> None:
    s = stored_as(cand(facts={"max_kmh": 78.0}), 1, Status.DISMISSED)
    assert not reconcile([s], [cand(facts={"max_kmh": 90.0})], WINDOW)
    assert not reconcile([s], [], WINDOW)


def test_a_withdrawn_one_supported_again_is_restored() -> None:
    c = cand()
    plan = reconcile([stored_as(c, 1, Status.WITHDRAWN)], [c], WINDOW)
    assert [(u.id, u.restore) for u in plan.updates] == [(1, True)] and not plan.inserts


def test_any_order_of_either_list_gives_the_same_plan() -> None:
    stored = [
        stored_as(cand(start=0, end=2), 1),
        stored_as(cand(start=1, end=3), 2),  # two stored overlapping one candidate: the closest start wins
        stored_as(cand(Kind.TRACKER_SILENT, start=20, end=None), 3),
        stored_as(cand(Kind.SCHEDULE_DELAY, start=5, end=6, key="k1"), 4),
    ]
    cands = [
        cand(start=0.5, end=2.5, facts={"max_kmh": 70.0}),
        cand(Kind.TRACKER_SILENT, start=20, end=31, facts={"gap_s": 660.0}),
        cand(Kind.SCHEDULE_DELAY, start=5, end=7, key="k1"),
        cand(Kind.UNAUTHORIZED_STOP, start=40, end=45),
    ]
    expected = reconcile(stored, cands, WINDOW)
    assert [u.id for u in expected.updates] == [1, 3, 4] and [w.id for w in expected.withdrawals] == [2]
    for s_order in itertools.permutations(stored):
        for c_order in itertools.permutations(cands):
            assert reconcile(list(s_order), list(c_order), WINDOW) == expected


def test_reconciling_what_was_applied_is_idempotent() -> None:
    stored = [stored_as(cand(start=0, end=2), 1), stored_as(cand(Kind.TRACKER_SILENT, start=20, end=None), 2)]
    cands = [cand(start=0, end=4), cand(Kind.OVER_2H_ON_BOARD, start=-100, end=30, facts={"minutes": 130})]
    after = apply(stored, reconcile(stored, cands, WINDOW))
    assert not reconcile(after, cands, WINDOW)
