"""reporting.in_service: the union of the links in service and the due run windows, and how much of it lies
within one reporting interval after a fix (pure)."""

from __future__ import annotations

from itertools import pairwise

import pytest

from telemetria.reports.kinds.reporting import in_service, merged


def test_links_alone_give_the_sum_of_min_gap_and_limit() -> None:
    fixes = [0.0, 30.0, 60.0, 150.0, 160.0]
    links = list(pairwise(fixes))
    spent, covered = in_service(links, fixes, 31.0)
    assert spent == 160.0
    assert covered == pytest.approx(sum(min(b - a, 31.0) for a, b in links))


def test_a_silent_due_window_is_in_service_and_uncovered() -> None:
    assert in_service([(1000.0, 4600.0)], [], 31.0) == (3600.0, 0.0)
    # one fix inside the window covers its interval only; a link overlapping the window is not counted twice
    spent, covered = in_service([(1000.0, 4600.0), (900.0, 1100.0)], [900.0, 1100.0, 2000.0], 31.0)
    assert spent == 3700.0 and covered == pytest.approx(31.0 * 3)


def test_merged() -> None:
    assert merged([(5.0, 6.0), (0.0, 2.0), (1.0, 3.0), (3.0, 4.0)]) == [(0.0, 4.0), (5.0, 6.0)]
