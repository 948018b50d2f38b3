"""fetch._batches: a detector chunk's read-ahead cut into statements of bounded fixes, stopped at its budget."""

from __future__ import annotations

from telemetria.reports.store.fetch import _batches


def test_items_go_together_up_to_a_statements_share_and_a_large_one_alone() -> None:
    counts = [("a", 40), ("b", 50), ("c", 300), ("d", 10), ("e", 0)]
    assert _batches(counts, 100, 10_000) == [["a", "b"], ["c"], ["d", "e"]]
    assert _batches([("a", 40), ("b", 60), ("c", 1)], 100, 10_000) == [["a", "b"], ["c"]]  # exactly a share: together


def test_no_statement_starts_once_the_budget_is_spent() -> None:
    counts = [("a", 40), ("b", 50), ("c", 300), ("d", 10)]
    assert _batches(counts, 100, 90) == [["a", "b"]]  # 90 taken: c and d left to their readers
    assert _batches(counts, 100, 91) == [["a", "b"], ["c"]]  # the statement that passes the budget is the last
    assert _batches(counts, 100, 0) == []
    assert _batches([], 100, 1_000) == []
