"""Segments' per-window sums, pinned where the mutation pass (docs/testing.md) found the window ignored: the
metres over a gap and per method inside a mask are those of the masked fixes only. Hand-made arrays; no track."""

from __future__ import annotations

import numpy as np

from telemetria.reports.analysis.distance import CHORD, NONE, ROUTE, Segments


def segments() -> Segments:
    """Four fixes: nothing ends at the first; 100 m along the route, 250 m of chord over a gap, 40 m of route."""
    n = 4
    nan = np.full(n, np.nan)
    return Segments(
        t=np.array([0.0, 30.0, 900.0, 930.0]),
        length_m=np.array([0.0, 100.0, 250.0, 40.0]),
        dt_s=np.array([np.nan, 30.0, 870.0, 30.0]),
        method=np.array([NONE, ROUTE, CHORD, ROUTE], dtype=np.int8),
        route=np.array([-1, 0, -1, 0], dtype=np.int16),
        gap=np.array([False, False, True, False]),
        stationary_jitter=np.zeros(n, dtype=bool),
        m_start=nan,
        m_end=nan,
        paved_m=np.zeros(n),
        unpaved_m=np.zeros(n),
        way=np.full(n, -1, dtype=np.int64),
    )


def test_the_metres_over_a_gap_are_those_of_the_window_asked() -> None:
    s = segments()
    assert s.gap_m() == 250.0
    assert s.gap_m(np.array([False, True, True, False])) == 250.0
    assert s.gap_m(np.array([False, True, False, True])) == 0.0  # the gap's segment is outside the window


def test_metres_per_method_are_those_of_the_window_asked() -> None:
    s = segments()
    assert s.by_method_m() == {"route": 140.0, "chord": 250.0, "road": 0.0}
    assert s.by_method_m(np.array([False, False, False, True])) == {"route": 40.0, "chord": 0.0, "road": 0.0}
