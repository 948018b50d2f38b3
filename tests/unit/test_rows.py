"""The pure steps of a flush: attribution at fix time, rejections, and crediting."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from telemetria.fix import Fix
from telemetria.ingest.rows import (
    NOT_INSTALLED,
    TRACKER_INACTIVE,
    Installation,
    Request,
    credit,
    credit_all,
    newest_stored,
    plan,
)

T = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def fixes(*minutes: int) -> list[Fix]:
    return [Fix(ts=T + timedelta(minutes=m), lat=-10.4, lon=-62.4) for m in minutes]


def test_fix_goes_to_the_vehicle_installed_at_its_own_time() -> None:
    move = T + timedelta(minutes=10)
    installs = {1: [Installation(100, None, move), Installation(200, move, None)]}
    p = plan([Request(1, [0, 1, 2, 3], fixes(0, 9, 10, 30))], {1: True}, installs)
    assert [row[0] for row in p.rows] == [100, 100, 200, 200]
    assert p.owners == [0, 0, 0, 0]


def test_fix_outside_every_installation_is_rejected_by_position() -> None:
    installs = {1: [Installation(100, T + timedelta(minutes=5), T + timedelta(minutes=8))]}
    p = plan([Request(1, [3, 7, 9], fixes(0, 6, 8))], {1: True}, installs)
    assert [row[0] for row in p.rows] == [100]
    assert [(r.index, r.error) for r in p.results[0].rejected] == [(3, NOT_INSTALLED), (9, NOT_INSTALLED)]


def test_inactive_or_unknown_tracker_rejects_its_whole_request_only() -> None:
    installs = {1: [Installation(100, None, None)], 2: [Installation(200, None, None)]}
    p = plan([Request(1, [0], fixes(0)), Request(2, [0, 1], fixes(0, 1))], {1: True, 2: False}, installs)
    assert len(p.rows) == 1 and p.owners == [0]
    assert p.results[1].tracker_inactive
    assert [r.error for r in p.results[1].rejected] == [TRACKER_INACTIVE, TRACKER_INACTIVE]


def test_credit_counts_first_occurrence_and_duplicates() -> None:
    installs = {1: [Installation(100, None, None)]}
    # Request 0 and request 1 both carry minute 0; minute 1 was already stored before the flush.
    p = plan([Request(1, [0, 1], fixes(0, 1)), Request(1, [0, 1], fixes(0, 2))], {1: True}, installs)
    inserted = {(100, T), (100, T + timedelta(minutes=2))}
    credit(p, inserted)
    assert (p.results[0].accepted, p.results[0].duplicates) == (1, 1)
    assert (p.results[1].accepted, p.results[1].duplicates) == (1, 1)
    assert sum(r.accepted for r in p.results) == 2


def test_credit_all() -> None:
    p = plan([Request(1, [0, 1, 2], fixes(0, 1, 2))], {1: True}, {1: [Installation(100, None, None)]})
    credit_all(p)
    assert p.results[0].accepted == 3 and p.results[0].duplicates == 0


def test_newest_stored_keeps_each_vehicles_newest_row_and_newest_valid_row_of_those_stored() -> None:
    def row(v: int, minute: int, valid: bool, lat: float) -> tuple[object, ...]:
        ts = T + timedelta(minutes=minute)
        return (v, 1, ts, lat, -62.4, 40.0, 90.0, None, None, None, None, True, None, "CARD1", valid, None)

    rows = [
        row(1, 5, True, -10.1),
        row(1, 9, False, -10.2),  # newest of vehicle 1, invalid
        row(1, 7, True, -10.3),  # its newest valid
        row(2, 3, True, -10.4),
        row(2, 3, True, -10.5),  # a second copy of the key: not the one stored
        row(2, 8, True, -10.6),  # sent, but not stored (a duplicate of an earlier flush)
    ]
    stored = {(1, T + timedelta(minutes=m)) for m in (5, 7, 9)} | {(2, T + timedelta(minutes=3))}
    v, ts, valid, received, lat, *_ = newest_stored(rows, stored)
    assert sorted(zip(v, [t.minute for t in ts], valid, lat, strict=True)) == [
        (1, 7, True, -10.3),
        (1, 9, False, -10.2),
        (2, 3, True, -10.4),
    ]
    assert received == [None] * 3  # the database's now(), as the fixes' received_at
    # Every row stored (the COPY path): vehicle 2's newest is the fix at minute 8, which is also valid.
    v, ts, *_ = newest_stored(rows)
    assert sorted(zip(v, [t.minute for t in ts], strict=True)) == [(1, 7), (1, 9), (2, 8)]


def test_one_unbounded_installation_gives_the_rows_a_search_gives() -> None:
    # plan() builds the rows of a tracker with one open-ended installation without searching per fix.
    batch = [*fixes(0, 1, 2), Fix(T, -10.4, -62.4, 40.0, 90.0, 150.0, 5.0, 0.9, 9, True, 1.5, "d", False, {"a": 1})]
    unbounded = plan([Request(1, [0, 1, 2, 3], batch)], {1: True}, {1: [Installation(100, None, None)]})
    searched = plan([Request(1, [0, 1, 2, 3], batch)], {1: True}, {1: [Installation(100, T - timedelta(days=1), None)]})
    assert unbounded.rows == searched.rows and unbounded.owners == searched.owners == [0, 0, 0, 0]
    assert unbounded.rows[3] == (
        100,
        1,
        T,
        -10.4,
        -62.4,
        40.0,
        90.0,
        150.0,
        5.0,
        0.9,
        9,
        True,
        1.5,
        "d",
        False,
        {"a": 1},
    )
