"""A seal version's changes against the one before, and undoing them: pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from telemetria.seals import canonical, changes

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def lines(*minutes: int) -> list[str]:
    return [canonical.line(T0 + timedelta(minutes=m), -10.4 - m / 1000, -62.4, 30.0 + m) for m in minutes]


def test_diff_names_every_added_and_removed_line_in_line_order() -> None:
    before, after = lines(0, 1, 2, 4), lines(0, 2, 3, 4, 5)
    assert changes.diff(before, after) == [
        {"op": "-", "line": lines(1)[0], "at": 1},
        {"op": "+", "line": lines(3)[0]},
        {"op": "+", "line": lines(5)[0]},
    ]
    assert changes.counts(changes.diff(before, after)) == (2, 1)
    assert changes.diff(before, before) == []


def test_undo_gives_back_the_version_before_in_fix_time_order() -> None:
    for before, after in [
        (lines(0, 1, 2, 4), lines(0, 2, 3, 4, 5)),
        (lines(), lines(1, 2)),
        (lines(1, 2), lines()),
        (lines(5, 6, 7), lines(0, 1)),
    ]:
        assert changes.undo(after, changes.diff(before, after)) == before


def test_repeated_lines_count_as_many_times_as_they_occur() -> None:
    twice = lines(1) * 2
    assert changes.diff(twice, lines(1)) == [{"op": "-", "line": lines(1)[0], "at": 0}]
    assert changes.undo(lines(1), changes.diff(twice, lines(1))) == twice


def test_packed_lines_come_back_unchanged() -> None:
    text = [*lines(0, 1, 2), canonical.line(T0, 0.5, -0.5, None)]
    assert changes.unpack(changes.pack(text)) == text
    assert changes.unpack(changes.pack([])) == []


def test_removed_lines_of_one_second_come_back_in_their_order() -> None:
    # Two fixes of the same UTC second whose text sorts the other way round (-10.5... after -10.4...).
    same = [canonical.line(T0 + timedelta(milliseconds=100), -10.5, -62.4, 30.0),
            canonical.line(T0 + timedelta(milliseconds=900), -10.4, -62.4, 30.0)]  # fmt: skip
    assert sorted(same) != same
    for before, after in [([*same, *lines(1)], lines(1)), ([*lines(0), *same], [same[1]]), (same, [])]:
        assert changes.undo(after, changes.diff(before, after)) == before


def test_changes_stored_without_indexes_are_undone_by_second() -> None:
    before, after = lines(0, 1, 2, 4), lines(0, 2, 3, 4, 5)
    old = [{k: v for k, v in c.items() if k != "at"} for c in changes.diff(before, after)]
    assert changes.undo(after, old) == before
