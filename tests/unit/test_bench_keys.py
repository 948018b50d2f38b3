"""bench.keys: every fix a load run sent is accounted for by its key, never by totals."""

from __future__ import annotations

from bench.keys import NOT_SENT, UNANSWERED, Accounting, Run, Stored, account, runs


def test_a_clean_run_acknowledges_and_stores_every_fix_once() -> None:
    answers = [Run(0, 1000, 200), Run(1000, 32, UNANSWERED)]
    stored = [Stored(0, 1032, 1, 1)]
    a = account(answers, stored, per=1)
    assert (a.sent, a.acked, a.stored, a.stored_acked, a.lost) == (1032, 1000, 1032, 1000, 0)
    assert (a.cut_requests, a.cut, a.cut_stored) == (32, 32, 32)
    assert a.problems() == []


def test_a_lost_fix_is_found_even_when_cut_off_requests_landed_in_its_place() -> None:
    # By totals: 1,000 acked, 1,000 stored, nothing lost. By key: request 500 is missing and the
    # 1 stored beyond the acknowledged came from a request cut off at the stop.
    answers = [Run(0, 1000, 200), Run(1000, 1, UNANSWERED)]
    stored = [Stored(0, 500, 1, 1), Stored(501, 500, 1, 1)]
    a = account(answers, stored, per=1)
    assert a.stored == a.acked == 1000
    assert a.lost == 1 and a.cut_stored == 1
    assert a.problems() == ["1 acknowledged fixes not stored"]


def test_every_thousandth_fix_of_batches_dropped_is_lost_per_key() -> None:
    # 20 batches of 1,000: each stored with 999 of its fixes.
    a = account([Run(0, 20, 200)], [Stored(0, 20, 999, 999)], per=1000)
    assert (a.acked, a.stored, a.lost) == (20_000, 19_980, 20)


def test_a_key_stored_twice_is_doubled_and_does_not_hide_a_loss() -> None:
    # Request 3 has its row twice, request 4 none: by totals they cancel out.
    answers = [Run(0, 6, 200)]
    stored = [Stored(0, 3, 1, 1), Stored(3, 1, 2, 1), Stored(5, 1, 1, 1)]
    a = account(answers, stored, per=1)
    assert a.stored == a.acked == 6
    assert (a.lost, a.doubled) == (1, 1)
    assert len(a.problems()) == 2


def test_rows_of_requests_never_built_or_off_the_grid_are_unsent() -> None:
    answers = [Run(0, 10, 200)]
    stored = [Stored(0, 12, 1, 1)]  # requests 10 and 11 were never built
    a = account(answers, stored, per=1, off_grid_rows=3)
    assert a.unsent == 5 and a.stored == 15 and a.lost == 0
    assert a.problems() == ["5 stored rows no request carried"]


def test_a_gap_in_the_answers_is_not_sent() -> None:
    # Several wrk threads: a number one thread never reached is -1 between others' answers.
    answers = [Run(0, 2, 200), Run(2, 1, NOT_SENT), Run(3, 2, 200)]
    a = account(answers, [Stored(0, 5, 1, 1)], per=1)
    assert (a.sent, a.acked, a.unsent, a.lost) == (4, 4, 1, 0)


def test_non_2xx_answers_are_not_acknowledged_and_their_stored_fixes_are_reported() -> None:
    answers = [Run(0, 3, 200), Run(3, 2, 503), Run(5, 1, 200)]
    stored = [Stored(0, 4, 1, 1), Stored(5, 1, 1, 1)]
    a = account(answers, stored, per=1)
    assert (a.acked, a.non_2xx_requests, a.stored_without_2xx, a.lost) == (4, 2, 1, 0)
    assert a.problems() == []


def test_unidentified_and_miscounted_answers_fail_integrity() -> None:
    a = account([Run(0, 1, 200)], [Stored(0, 1, 1, 1)], per=1, unidentified=2, miscounted=1)
    assert len(a.problems()) == 2


def test_accountings_add_up_field_by_field() -> None:
    one = account([Run(0, 2, 200)], [Stored(0, 1, 1, 1)], per=1)
    two = account([Run(0, 3, 200)], [Stored(0, 3, 1, 1)], per=1)
    total = one + two
    assert (total.acked, total.stored, total.lost) == (5, 4, 1)
    assert Accounting() + total == total


def test_runs_encode_consecutive_outcomes() -> None:
    assert runs([200, 200, 503, 200, 0, 0]) == [Run(0, 2, 200), Run(2, 1, 503), Run(3, 1, 200), Run(4, 2, 0)]
    assert runs([], 5) == []
