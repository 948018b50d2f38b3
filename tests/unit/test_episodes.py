"""Episodes: runs of a condition, speeding tiers and route deviations, by hand and against the simulator's truth."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime
from functools import cache

import numpy as np
import pytest
import shapely
from pyproj import Transformer

from telemetria.reports.analysis.episodes import condition_runs, deviations, speeding, tier
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.sim import MotionParams, SimRun, TrackerParams, off_route_runs, simulate_vehicle

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
LIMIT = 60.0
INTERVAL = 30


def every(n: int, step: float = 30.0) -> np.ndarray:
    """n fix times step seconds apart, epoch s."""
    return 1.8e9 + step * np.arange(n, dtype=float)


def spans(runs: list) -> list[tuple[int, int]]:
    return [(r.first, r.last) for r in runs]


# --- condition_runs ---------------------------------------------------------------------------


def test_runs_of_nothing_and_of_one_fix() -> None:
    assert condition_runs(every(0), np.zeros(0, dtype=bool)) == []
    assert spans(condition_runs(every(1), np.array([True]))) == [(0, 0)]
    assert condition_runs(every(1), np.array([True]), min_fixes=2) == []
    assert condition_runs(every(3), np.ones(3, dtype=bool), np.zeros(3, dtype=bool)) == []


def test_runs_need_both_enough_fixes_and_enough_time() -> None:
    cond = np.array([0, 1, 1, 0, 0, 1, 1, 1, 0], dtype=bool)
    t = every(len(cond))
    assert spans(condition_runs(t, cond, min_fixes=2)) == [(1, 2), (5, 7)]
    assert spans(condition_runs(t, cond, min_fixes=3)) == [(5, 7)]
    # Durations are estimated from midpoint to midpoint (module text): 2 fixes 30 s apart read 60 s, 3 read 90 s.
    assert spans(condition_runs(t, cond, min_s=90.0)) == [(5, 7)]  # 60 s estimated is not 90
    assert spans(condition_runs(t, cond, min_s=60.0, min_fixes=2)) == [(1, 2), (5, 7)]
    # At 1 s reporting a 2-fix blip lasts 2 s: the time rule rejects what the count alone would keep.
    assert condition_runs(every(len(cond), 1.0), cond, min_s=20.0, min_fixes=2) == []


def test_one_dip_merges_two_do_not_and_merging_chains() -> None:
    t = every(12)
    one = np.array([1, 1, 0, 1, 1, 0, 0, 1, 1, 0, 1, 0], dtype=bool)
    runs = condition_runs(t, one)
    assert spans(runs) == [(0, 4), (7, 11 - 1)]
    assert runs[0].members.tolist() == [0, 1, 3, 4]  # the dip fix is not a member
    chained = np.array([1, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 0], dtype=bool)
    assert spans(condition_runs(t, chained)) == [(0, 4)]
    # A single fix, a dip, a single fix: two fixes above, 60 s apart, is an episode.
    assert spans(condition_runs(t[:3], chained[:3], min_fixes=2, min_s=20.0)) == [(0, 2)]
    with pytest.raises(ValueError, match="length"):
        condition_runs(t, chained[:3])


def test_dip_ok_gaps_and_unkept_fixes() -> None:
    t = every(5)
    cond = np.array([1, 1, 0, 1, 1], dtype=bool)
    assert spans(condition_runs(t, cond, dip_ok=np.array([1, 1, 0, 1, 1], dtype=bool))) == [(0, 1), (3, 4)]
    # An unkept fix is skipped: it neither breaks a run nor counts as a dip.
    keep = np.array([1, 1, 0, 1, 1], dtype=bool)
    runs = condition_runs(t, np.array([1, 1, 1, 1, 1], dtype=bool), keep)
    assert spans(runs) == [(0, 4)] and runs[0].members.tolist() == [0, 1, 3, 4]
    assert spans(condition_runs(t, np.array([1, 0, 0, 0, 1], dtype=bool), keep)) == [(0, 0), (4, 4)]
    # A gap longer than max_gap_s ends a run and cannot be merged across.
    t_gap = np.array([0.0, 30.0, 60.0, 900.0, 930.0])
    assert spans(condition_runs(t_gap, np.ones(5, dtype=bool), max_gap_s=60.0)) == [(0, 2), (3, 4)]
    assert spans(condition_runs(t_gap, cond, max_gap_s=60.0)) == [(0, 1), (3, 4)]


# --- speeding ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("excess", "name"),
    [(0.1, "media"), (20.0, "media"), (20.01, "grave"), (50.0, "grave"), (50.01, "gravissima"), (300.0, "gravissima")],
)
def test_ctb_art_218_tiers(excess: float, name: str) -> None:
    assert tier(excess) == name


def test_a_single_fix_spike_is_no_episode_two_fixes_are() -> None:
    speed = np.array([50, 50, 95, 50, 50, 61, 62, 50], dtype=float)
    found = speeding(every(len(speed)), speed, np.full(len(speed), LIMIT))
    assert len(found) == 1
    e = found[0]
    # Seen above 30 s; it began between fixes 4 and 5 and ended between 6 and 7: 60 s estimated, 30 to 90 s.
    assert (e.first, e.last, e.n_fixes, e.duration_s) == (5, 6, 2, 60.0)
    t = every(len(speed))
    assert (e.start, e.end) == (t[4] + 15, t[6] + 15)
    assert (e.start_min, e.start_max, e.end_min, e.end_max) == (t[4], t[5], t[6], t[7])
    assert (e.i_max, e.max_kmh, e.limit_kmh, e.tier) == (6, 62.0, 60.0, "media")
    assert e.excess_pct == pytest.approx(100 * 2 / 60, abs=1e-9)


def test_speeding_fields_merge_and_limit_at_the_max() -> None:
    speed = np.array([50, 70, 74, 58, 91, 80, 40, 72.0, 72.0, 40])
    limit = np.array([60, 60, 60, 60, 60, 80, 80, 60, 60, 60], dtype=float)
    found = speeding(every(len(speed)), speed, limit)
    assert [(e.first, e.last) for e in found] == [(1, 4), (7, 8)]  # 80 at a limit of 80 is not above it
    a, b = found
    assert (a.n_fixes, a.duration_s, a.i_max, a.max_kmh, a.limit_kmh) == (3, 120.0, 4, 91.0, 60.0)
    assert a.excess_pct == pytest.approx(51.6667, abs=1e-3) and a.tier == "gravissima"
    assert b.excess_pct == pytest.approx(20.0, abs=1e-9) and b.tier == "media"  # exactly 20 %: still média
    assert b.i_max == 7  # ties: the first fix at the top speed


def test_speeding_skips_unknown_speed_and_unkept_fixes_and_respects_gaps() -> None:
    speed = np.array([70, np.nan, 70, 70, 200, 70], dtype=float)
    keep = np.array([1, 1, 1, 1, 0, 1], dtype=bool)
    found = speeding(every(6), speed, np.full(6, LIMIT), keep)
    assert [(e.first, e.last, e.n_fixes, e.max_kmh) for e in found] == [(0, 5, 4, 70.0)]
    t = np.array([0.0, 30.0, 1000.0, 1030.0])  # a silent gap longer than gap_s between two pairs above
    assert len(speeding(t, np.full(4, 70.0), np.full(4, LIMIT))) == 2
    assert speeding(every(0), np.zeros(0), np.zeros(0)) == []


def test_speeding_rule_at_dense_reporting() -> None:
    t = every(40, 1.0)
    for above, expect in [(10, 0), (19, 0), (20, 1)]:  # 20 fixes at 1 s span 19 s: 20 s estimated
        speed = np.full(40, 50.0)
        speed[5 : 5 + above] = 70.0
        assert len(speeding(t, speed, np.full(40, LIMIT))) == expect, above
    many = replace(DEFAULT, speeding_min_s=0.0, speeding_min_fixes=1)
    assert len(speeding(every(3), np.array([50, 95, 50.0]), np.full(3, LIMIT), params=many)) == 1


@cache
def sim(seed: int, detour: bool = False) -> SimRun:
    return simulate_vehicle(seed, T0, INTERVAL, motion=MotionParams(detour=detour), tracker=TrackerParams())


def sim_track(run: SimRun) -> Track:
    return Track.of([f for u in run.uploads for f in u.fixes])


@pytest.mark.parametrize("seed", range(8))
def test_speeding_against_the_simulators_truth(seed: int) -> None:
    run = sim(seed)
    tr = sim_track(run)
    t0 = run.truth.start.timestamp()
    found = speeding(tr.t, tr.speed_kmh, np.full(len(tr), LIMIT))
    true_at_fix = np.interp(tr.t - t0, run.truth.t_s, run.truth.speed_kmh)
    assert run.truth.speed_limit_kmh == LIMIT
    # No false episodes: each one found lies within a true one, give or take one reporting interval.
    for e in found:
        assert any(ep.t_start_s - INTERVAL <= e.start - t0 and e.end - t0 <= ep.t_end_s + INTERVAL
                   for ep in run.truth.speeding), e  # fmt: skip
    # Every true episode seen clearly (2 fixes over 62 km/h, 2σ of speed noise) is found, starting within 30 s.
    for ep in run.truth.speeding:
        inside = (tr.t - t0 >= ep.t_start_s) & (tr.t - t0 <= ep.t_end_s) & (true_at_fix > LIMIT + 2.0)
        if inside.sum() < 2:
            continue
        match = [e for e in found if e.start - t0 <= ep.t_end_s and e.end - t0 >= ep.t_start_s]
        assert len(match) == 1, ep
        e = match[0]
        assert abs(e.start - t0 - ep.t_start_s) <= INTERVAL and abs(e.end - t0 - ep.t_end_s) <= INTERVAL
        # The top speed is the top of the sampled fixes: true speed there plus ~1 km/h of noise.
        assert e.max_kmh == pytest.approx(true_at_fix[e.first : e.last + 1].max(), abs=4.0)
        assert e.max_kmh <= ep.max_kmh + 4.0
        assert e.limit_kmh == LIMIT and e.tier == tier(100 * (e.max_kmh - LIMIT) / LIMIT)
    assert len({(e.first, e.last) for e in found}) == len(found)


# --- route deviation --------------------------------------------------------------------------


def test_deviation_by_hand() -> None:
    off = np.array([0, 10, 150, 200, 180, 20, 0, 150, 160, 0], dtype=float)
    strict = replace(DEFAULT, deviation_min_s=90.0)
    found = deviations(every(len(off)), off, 100.0, params=strict)
    assert len(found) == 1  # 7..8 is 2 fixes over 30 s: 60 s estimated, under 90 s
    d = found[0]
    assert (d.first, d.last, d.n_fixes, d.duration_s, d.i_max, d.max_distance_m) == (2, 4, 3, 90.0, 3, 200.0)
    t = every(len(off))
    assert (d.start_min, d.start, d.start_max, d.end_min, d.end, d.end_max) == (
        t[1],
        t[1] + 15,
        t[2],
        t[4],
        t[4] + 15,
        t[5],
    )
    assert (d.left, d.rejoined) == (1, 5)
    # The default: 2 consecutive fixes at 30 s reporting are an episode.
    assert [(x.first, x.last) for x in deviations(every(len(off)), off, 100.0)] == [(2, 4), (7, 8)]


def test_deviation_edges_nan_dips_and_per_fix_tolerance() -> None:
    t = every(6)
    at_start = np.array([300, 300, 300, 0, 0, 0], dtype=float)
    [d] = deviations(t, at_start, 100.0)
    assert (d.left, d.rejoined) == (None, 3)
    no_route = np.array([0, 300, 300, np.nan, 300, 300, 300], dtype=float)
    found = deviations(every(7), no_route, 100.0, params=replace(DEFAULT, deviation_min_s=30.0))
    assert [(x.first, x.last, x.left, x.rejoined) for x in found] == [(1, 2, 0, None), (4, 6, None, None)]
    dip = np.array([300, 300, 50, 300, 300, 0], dtype=float)
    assert [(x.first, x.last) for x in deviations(t, dip, 100.0)] == [(0, 4)]
    tol = np.array([100, 100, 100, 400, 400, 400], dtype=float)
    assert [(x.first, x.last) for x in deviations(t, np.full(6, 300.0), tol)] == [(0, 2)]
    assert deviations(every(0), np.zeros(0), 100.0) == []


_UTM = Transformer.from_crs("EPSG:4326", "EPSG:32720", always_xy=True)


def route_offsets_m(run: SimRun, tr: Track) -> np.ndarray:
    """Distance from each fix to the planned route line, metres (UTM 20S), computed here with shapely."""
    line = run.truth.route.line
    rx, ry = _UTM.transform(line.lon, line.lat)
    px, py = _UTM.transform(tr.lon, tr.lat)
    return np.asarray(shapely.distance(shapely.linestrings(np.column_stack([rx, ry])), shapely.points(px, py)))


@pytest.mark.parametrize("seed", range(6))
def test_deviation_against_the_simulators_detour(seed: int) -> None:
    run = sim(seed, detour=True)
    tr = sim_track(run)
    t0 = run.truth.start.timestamp()
    detour = run.truth.detour
    assert detour is not None
    [(a, b)] = off_route_runs(run.truth, 100.0)
    [d] = deviations(tr.t, route_offsets_m(run, tr), 100.0)
    assert abs(d.start - t0 - a) <= INTERVAL and abs(d.end - t0 - b) <= INTERVAL
    assert d.max_distance_m == pytest.approx(detour.reach_m, abs=50.0)
    assert d.left is not None and d.rejoined is not None
    assert tr.t[d.left] < d.start and tr.t[d.rejoined] > d.end
    assert d.start - tr.t[d.left] <= INTERVAL and tr.t[d.rejoined] - d.end <= INTERVAL


@pytest.mark.parametrize("seed", range(4))
def test_no_deviation_when_the_route_is_driven(seed: int) -> None:
    run = sim(seed)
    tr = sim_track(run)
    assert deviations(tr.t, route_offsets_m(run, tr), 100.0) == []


# --- instants without the one-interval bias (issue 34) ------------------------------------------


def test_the_fixes_around_an_episode_bound_it_only_when_near_and_known() -> None:
    # A gap over gap_s before it, the track's end after it: both sides keep the observed instant, unbounded.
    t = np.array([0.0, 600.0, 630.0, 660.0])
    [e] = speeding(t, np.array([50, 70, 70, 70.0]), np.full(4, LIMIT))
    assert (e.start_min, e.start, e.end, e.end_max, e.duration_s) == (None, 600.0, 660.0, None, 60.0)
    # A deviation next to a fix with no route (offset unknown): that fix is no bound, the on-route one is.
    off = np.array([np.nan, 300, 300, 0], dtype=float)
    [d] = deviations(every(4), off, 100.0)
    assert (d.start_min, d.start, d.end, d.end_max) == (None, every(4)[1], every(4)[2] + 15, every(4)[3])


@pytest.mark.parametrize("interval", [30.0, 60.0])
def test_episode_durations_are_unbiased_at_sparse_reporting(interval: float) -> None:
    """A true 120 s speeding episode sampled every `interval` s at every phase: first to last fix above read one
    interval short on average; the midpoints read it with a mean bias under 5 s, each within ± one interval."""
    true_s, rng = 120.0, np.random.default_rng(34)
    est, seen = [], []
    for phase in rng.uniform(0, interval, 200):
        t = 1.8e9 + phase + interval * np.arange(int(900 / interval))
        begin = 1.8e9 + 300.0
        speed = np.where((t >= begin) & (t < begin + true_s), 80.0, 40.0)
        [e] = speeding(t, speed, np.full(len(t), LIMIT))
        assert e.start_min is not None and e.end_max is not None
        assert e.start_min <= begin <= e.start_max and e.end_min <= begin + true_s <= e.end_max  # type: ignore[operator]
        est.append(e.duration_s - true_s)
        seen.append(e.end_min - e.start_max - true_s)  # type: ignore[operator]
    assert abs(np.mean(est)) < 5.0 and np.max(np.abs(est)) <= interval
    assert np.mean(seen) < -interval + 5.0  # the old rule: one interval short
