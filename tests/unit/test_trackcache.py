"""The detector's kept days (telemetria/occurrences/detection/trackcache.py): valid only under their stamp, bounded."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import numpy as np

from telemetria.occurrences.detection.trackcache import TrackCache, extend
from telemetria.reports.analysis.track import Track

D0 = datetime(2026, 3, 2, 4, tzinfo=UTC)
D1 = datetime(2026, 3, 3, 4, tzinfo=UTC)


def track(*t: float) -> Track:
    n = len(t)
    nan = np.full(n, np.nan)
    return Track(np.array(t, dtype=float), np.arange(n, dtype=float), np.arange(n, dtype=float), nan, nan, nan,
                 np.zeros(n, dtype=np.int8), nan, np.ones(n, dtype=bool), np.array(t, dtype=float))  # fmt: skip


def test_a_day_is_given_back_only_under_the_stamp_it_was_kept_with() -> None:
    cache = TrackCache()
    a, b = uuid.uuid4(), uuid.uuid4()
    cache.put(1, D0, track(1, 2, 3), a)
    found = cache.get(1, D0, a)
    assert found is not None and found.t.tolist() == [1, 2, 3]
    assert cache.get(1, D0, b) is None  # another process cleared the mark: stale
    assert cache.get(1, D0, None) is None  # no row
    assert cache.get(1, D1, a) is None and cache.get(2, D0, a) is None
    cache.restamp(1, b)  # this process's own clear
    assert cache.get(1, D0, a) is None and cache.get(1, D0, b) is not None


def test_drop_and_the_bound_on_fixes_earlier_dates_first_then_the_newcomer() -> None:
    cache = TrackCache(max_fixes=5)
    s = uuid.uuid4()
    cache.put(1, D0, track(1, 2), s)
    cache.put(2, D1, track(1), s)
    cache.put(3, D1, track(1, 2), s)
    assert len(cache) == 3 and cache.fixes == 5
    cache.put(4, D1, track(1, 2), s)  # 7 fixes > 5: the earlier date's day goes
    assert cache.get(1, D0, s) is None and cache.fixes == 5
    assert all(cache.get(v, D1, s) is not None for v in (2, 3, 4))
    cache.put(5, D1, track(1), s)  # full of today's: the newcomer is not kept
    assert cache.get(5, D1, s) is None and cache.fixes == 5
    cache.put(3, D1, track(1, 2), s)  # replaced, not added
    assert cache.fixes == 5
    cache.drop(3)
    assert cache.get(3, D1, s) is None and cache.fixes == 3
    cache.restamp(3, uuid.uuid4())  # nothing kept of it: nothing to do
    cache.put(6, D1, track(*range(9)), s)  # larger than the bound on its own: not kept
    assert cache.get(6, D1, s) is None and cache.fixes == 3


def test_the_analysis_values_go_with_their_track() -> None:
    from telemetria.occurrences.detection.trackcache import Computed
    from telemetria.reports.analysis import perfix
    from telemetria.reports.knobs import DEFAULT
    from telemetria.reports.model import Vehicle

    cache = TrackCache()
    s = uuid.uuid4()
    tr = track(1, 2, 3)
    values = perfix.compute(tr, Vehicle(1, "AAA1A11", None, None, None, None), [], [], [], DEFAULT)
    cache.keep_computed(1, D0, Computed(values, "basis", None))  # no track kept: nothing
    assert cache.computed(1, D0, s) is None
    cache.put(1, D0, tr, s)
    assert cache.computed(1, D0, s) is None
    cache.keep_computed(1, D0, Computed(values, "basis", None))
    found = cache.computed(1, D0, s)
    assert found is not None and found.per_fix is values and found.basis == "basis"
    assert cache.computed(1, D0, uuid.uuid4()) is None
    cache.put(1, D0, track(1, 2, 3, 4), s)  # a new track: its values are not those
    assert cache.computed(1, D0, s) is None


def test_extend_keeps_what_came_before_the_mark_and_takes_the_rest_as_read() -> None:
    kept = track(10, 20, 30, 40)
    new = track(30, 35, 40, 50)  # read from the mark (30) on: 35 arrived late, 50 is new
    both = extend(kept, 30.0, new)
    assert both.t.tolist() == [10, 20, 30, 35, 40, 50]
    assert both.lat.tolist() == [0, 1, 0, 1, 2, 3]
    assert all(len(getattr(both, f)) == 6 for f in Track.__slots__)
