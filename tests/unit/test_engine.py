"""The whole pipeline over a simulated run: windows add up, fix order does not matter, speed can be implied."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, datetime
from functools import cache

import numpy as np
import pytest

from telemetria.fix import Fix
from telemetria.reports.analysis import engine
from telemetria.reports.analysis.engine import line
from telemetria.reports.analysis.facts import Facts, facts
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Point, Route, SpeedZone, Vehicle
from telemetria.sim import MotionParams, SimRun, TrackerParams, simulate_vehicle

START = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
VEHICLE = Vehicle(1, "AAA1A11", None, None, None, None)


@cache
def run() -> SimRun:
    return simulate_vehicle(5, START, motion=MotionParams(detour=True), tracker=TrackerParams(outlier=True))


def fixes() -> list[Fix]:
    return [f for u in run().uploads for f in u.fixes]


def route() -> Route:
    r = run().truth.route
    points = tuple(Point(f"P{i}", s.kind, s.lat, s.lon, i, None, 1) for i, s in enumerate(r.stops, 1))
    return Route(1, "R1", "Linha 1", list(r.line.lon), list(r.line.lat), 60.0, 100.0, points)


def analyze(track: Track, start: float, end: float, with_route: bool = True) -> engine.Analysis:
    routes = [route()] if with_route else []
    return engine.analyze(track, VEHICLE, routes, [line(r) for r in routes], [], start, end, DEFAULT)


def window(track: Track, start: float, end: float) -> Track:
    """The fixes in [start, end) and 2 h of context on each side, as a report fetches them."""
    return track.take((track.t >= start - 7200) & (track.t < end + 7200))


def test_pieces_of_a_run_add_up_to_the_whole_run() -> None:
    track = Track.of(fixes())
    t0, t1 = float(track.t[0]), float(track.t[-1]) + 1
    whole = facts(analyze(track, t0, t1))
    cuts = sorted(random.Random(7).uniform(t0, t1) for _ in range(5))
    total = Facts()
    for a, b in zip([t0, *cuts], [*cuts, t1], strict=True):
        total.add(facts(analyze(window(track, a, b), a, b)))
    assert total.route_m == pytest.approx(whole.route_m, abs=1e-6)
    assert total.chord_m == pytest.approx(whole.chord_m, abs=1e-6)
    assert (total.fixes, total.kept, total.max_kmh) == (whole.fixes, whole.kept, whole.max_kmh)
    # Events belong to the piece they start in: with the context, none is lost or counted twice.
    counted = ("trips", "stops", "unauthorized_stops", "speeding", "deviations")
    assert [getattr(total, c) for c in counted] == [getattr(whole, c) for c in counted]
    assert total.km == pytest.approx(run().truth.distance_m / 1000, rel=0.01)


def test_fix_order_changes_nothing() -> None:
    shuffled = fixes()
    random.Random(3).shuffle(shuffled)
    a, b = Track.of(fixes()), Track.of(shuffled)
    t0, t1 = float(a.t[0]), float(a.t[-1]) + 1
    fa, fb = facts(analyze(a, t0, t1)), facts(analyze(b, t0, t1))
    assert fa == fb


def test_without_reported_speeds_speeding_comes_from_the_positions() -> None:
    bare = [replace(f, speed_kmh=None, heading_deg=None) for f in fixes()]
    track = Track.of(bare)
    t0, t1 = float(track.t[0]), float(track.t[-1]) + 1
    a = analyze(track, t0, t1, with_route=False)
    assert np.isfinite(a.speed_kmh[a.keep][1:]).mean() > 0.9
    truth = run().truth
    long_ones = [e for e in truth.speeding if e.t_end_s - e.t_start_s >= 90]
    assert long_ones
    for e in long_ones:  # a mean over 30 s still shows a minute and a half above the limit
        assert any(s.start - t0 <= e.t_end_s and s.end - t0 >= e.t_start_s for s in a.speeding), e
    assert facts(a).km == pytest.approx(truth.distance_m / 1000, rel=0.02)


def test_a_zone_limit_wins_over_the_route() -> None:
    track = Track.of(fixes())
    t0, t1 = float(track.t[0]), float(track.t[-1]) + 1
    everywhere = {"type": "Polygon", "coordinates": [[[-64, -12], [-61, -12], [-61, -9], [-64, -9], [-64, -12]]]}
    a = engine.analyze(track, VEHICLE, [route()], [line(route())], [SpeedZone(40.0, everywhere)], t0, t1, DEFAULT)
    assert set(np.unique(a.limit_kmh)) == {40.0}
    assert len(a.speeding) >= len(analyze(track, t0, t1).speeding)
