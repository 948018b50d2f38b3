"""perfix.compute_after (the live detector's analysis of a day's changed end) gives exactly perfix.compute's
values of the whole track, whatever arrived: the next fixes, a late batch inside the kept stretch, outliers,
fixes without speed, invalid fixes, gaps."""

from __future__ import annotations

import random
from dataclasses import fields, replace
from datetime import UTC, datetime
from functools import cache

import numpy as np
import pytest

from telemetria.fix import Fix
from telemetria.reports.analysis import distance, perfix
from telemetria.reports.analysis.engine import analyze, line
from telemetria.reports.analysis.perfix import PerFix
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Point, Route, SpeedZone, Vehicle
from telemetria.sim import MotionParams, SimRun, TrackerParams, simulate_vehicle

START = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)
VEHICLE = Vehicle(1, "AAA1A11", None, None, None, None)


@cache
def run(seed: int) -> SimRun:
    tracker = TrackerParams(outlier=True, silent_gap=seed % 2 == 0)
    return simulate_vehicle(seed, START, motion=MotionParams(detour=True), tracker=tracker)


def fixes(seed: int) -> list[Fix]:
    """The run's fixes, some without speed, some invalid, some far off alone or two in a row (seeded), in fix time
    order."""
    rng = random.Random(seed)
    out: list[Fix] = []
    for f in sorted({f.ts: f for u in run(seed).uploads for f in u.fixes}.values(), key=lambda f: f.ts):
        r = rng.random()
        if r < 0.1:
            f = replace(f, speed_kmh=None)
        elif r < 0.13:
            f = replace(f, valid=False)
        elif r < 0.2 or (r < 0.6 and out and f.lat - out[-1].lat > 0.01):
            f = replace(f, lat=f.lat - 0.02)  # ~2 km south: a spike (sometimes two)
        out.append(f)
    return out


def route(seed: int) -> Route:
    r = run(seed).truth.route
    points = tuple(Point(f"P{i}", s.kind, s.lat, s.lon, i, None, 1) for i, s in enumerate(r.stops, 1))
    return Route(1, "R1", "Linha 1", list(r.line.lon), list(r.line.lat), 60.0, 100.0, points)


def zone(seed: int) -> SpeedZone:
    """A 40 km/h zone around the middle of the run's line."""
    r = route(seed)
    k = len(r.lon) // 2
    lon, lat = r.lon[k], r.lat[k]
    ring = [[lon - 0.004, lat - 0.004], [lon + 0.004, lat - 0.004], [lon + 0.004, lat + 0.004],
            [lon - 0.004, lat + 0.004], [lon - 0.004, lat - 0.004]]  # fmt: skip
    return SpeedZone(40.0, {"type": "Polygon", "coordinates": [ring]}, name="Escola")


def same(a: PerFix, b: PerFix) -> list[str]:
    """The names of the values that differ."""
    out = [f.name for f in fields(PerFix) if f.name != "seg"
           and not np.array_equal(getattr(a, f.name), getattr(b, f.name), equal_nan=True)]  # fmt: skip
    out += [f"seg.{f.name}" for f in fields(distance.Segments)
            if not np.array_equal(getattr(a.seg, f.name), getattr(b.seg, f.name), equal_nan=True)]  # fmt: skip
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4])
def test_the_changed_end_computed_again_equals_the_whole(seed: int) -> None:
    all_fixes = fixes(seed)
    routes = [route(seed)]
    args = (VEHICLE, routes, [line(r) for r in routes], [zone(seed)], DEFAULT)
    rng = random.Random(seed)
    n = len(all_fixes)
    whole = Track.of(all_fixes)
    # Live: after every fix, the next one to three arrive.
    for c in range(1, n):
        prior = perfix.compute(whole.take(np.arange(c)), *args)
        new = whole.take(np.arange(min(n, c + rng.randrange(1, 4))))
        assert same(perfix.compute_after(prior, c, new, *args), perfix.compute(new, *args)) == [], (seed, c)
    # Late batches: what a round had is a third of the fixes; then the next ones and fixes from inside it arrive.
    have = set(sorted(rng.sample(range(n), n // 3)))
    for _ in range(20):
        old = Track.of([all_fixes[i] for i in sorted(have)])
        prior = perfix.compute(old, *args)
        top = max(have)
        gone = sorted(set(range(top)) - have)
        more = set(range(top + 1, min(n, top + 1 + rng.randrange(0, 12))))
        more |= set(rng.sample(gone, min(len(gone), rng.randrange(1, 30))))
        if not more:
            break
        have |= more
        new = Track.of([all_fixes[i] for i in sorted(have)])
        changed = int(np.searchsorted(new.t, min(all_fixes[i].ts.timestamp() for i in more)))
        assert np.array_equal(new.t[:changed], old.t[:changed])
        assert same(perfix.compute_after(prior, changed, new, *args), perfix.compute(new, *args)) == [], (seed, changed)


def test_an_analysis_with_the_values_given_is_the_analysis() -> None:
    track = Track.of(fixes(1))
    routes = [route(1)]
    lines, zones = [line(r) for r in routes], [zone(1)]
    t0, t1 = float(track.t[0]), float(track.t[-1]) + 1
    whole = analyze(track, VEHICLE, routes, lines, zones, t0, t1, DEFAULT)
    given = perfix.compute(track, VEHICLE, routes, lines, zones, DEFAULT)
    again = analyze(track, VEHICLE, routes, lines, zones, t0, t1, DEFAULT, per_fix=given)
    assert (whole.stops, whole.trips, whole.legs, whole.speeding, whole.deviations) == (
        again.stops, again.trips, again.legs, again.speeding, again.deviations)  # fmt: skip
    assert len(whole.speeding) + len(whole.stops) > 0
