"""Which fixes are used and which stand still: known answers on hand-built tracks and simulated outliers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from telemetria.fix import Fix
from telemetria.geo.geodesic import GEOD
from telemetria.reports.analysis.clean import keep_mask, stationary_mask, usable_mask
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.sim import MotionParams, TrackerParams, simulate_vehicle

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
LON0, LAT0 = -62.47, -10.43


def east_fixes(n: int, step_m: float = 400.0, every_s: float = 30.0, speed: float | None = 48.0) -> list[Fix]:
    """A vehicle going east at step_m per fix."""
    lon, lat, _ = GEOD.fwd(np.full(n, LON0), np.full(n, LAT0), np.full(n, 90.0), np.arange(n) * step_m)
    return [
        Fix(ts=T0 + timedelta(seconds=k * every_s), lat=float(lat[k]), lon=float(lon[k]), speed_kmh=speed)
        for k in range(n)
    ]


def moved(fix: Fix, az: float, dist_m: float) -> Fix:
    lon, lat, _ = GEOD.fwd(fix.lon, fix.lat, az, dist_m)
    return Fix(ts=fix.ts, lat=lat, lon=lon, speed_kmh=fix.speed_kmh)


def test_invalid_out_of_range_and_null_island_fixes_are_not_usable() -> None:
    fixes = east_fixes(6)
    fixes[1].valid = False
    fixes[2].lat = float("nan")
    fixes[3].lat, fixes[3].lon = 0.0, 0.0
    fixes[4].lon = 181.0
    assert usable_mask(Track.of(fixes)).tolist() == [True, False, False, False, False, True]


@pytest.mark.parametrize("jump_m", [5000.0, 1000.0])
def test_a_spike_is_removed_and_its_neighbours_kept(jump_m: float) -> None:
    # 5 km in 30 s is over max_jump_kmh; 1 km is not, but the reported 48 km/h say it cannot be driven.
    fixes = east_fixes(12)
    fixes[6] = moved(fixes[6], 0.0, jump_m)
    keep = keep_mask(Track.of(fixes), DEFAULT)
    assert np.flatnonzero(~keep).tolist() == [6]


def test_two_spikes_in_a_row_are_removed() -> None:
    fixes = east_fixes(12)
    fixes[5], fixes[6] = moved(fixes[5], 0.0, 6000.0), moved(fixes[6], 5.0, 6000.0)
    assert np.flatnonzero(~keep_mask(Track.of(fixes), DEFAULT)).tolist() == [5, 6]


def test_a_real_u_turn_between_fixes_is_not_a_spike() -> None:
    # Out 400 m, stop at the far end, back 400 m: the middle fix sticks out but the speeds allow it.
    fixes = east_fixes(3)
    fixes[1].speed_kmh = 0.0
    fixes[2] = Fix(ts=fixes[2].ts, lat=fixes[0].lat, lon=fixes[0].lon, speed_kmh=48.0)
    assert keep_mask(Track.of(fixes), DEFAULT).all()


def test_a_spike_decision_only_looks_at_nearby_fixes() -> None:
    fixes = east_fixes(40)
    fixes[30] = moved(fixes[30], 90.0, 5000.0)
    whole = keep_mask(Track.of(fixes), DEFAULT)
    tail = keep_mask(Track.of(fixes[25:]), DEFAULT)  # five fixes of context are enough
    assert tail[3:].tolist() == whole[28:].tolist()


@pytest.mark.parametrize("seed", range(12))
def test_the_simulated_outlier_and_only_it_is_dropped(seed: int) -> None:
    sim = simulate_vehicle(seed, T0, motion=MotionParams(detour=True), tracker=TrackerParams(outlier=True))
    track = Track.of([f for u in sim.uploads for f in u.fixes])
    dropped = track.t[~keep_mask(track, DEFAULT)] - sim.truth.start.timestamp()
    assert dropped.tolist() == [sim.log.outlier_t_s]


def test_stationary_by_speed_or_by_displacement_when_speed_is_unknown() -> None:
    fixes = east_fixes(6, step_m=0.0, speed=None)
    fixes[2] = moved(fixes[2], 0.0, 10.0)  # within the 15 m jitter floor of fix 1
    fixes[3] = moved(fixes[3], 0.0, 200.0)  # moved
    fixes[4].speed_kmh = 2.5
    fixes[5].speed_kmh = 20.0
    still = stationary_mask(Track.of(fixes), DEFAULT)
    # The first fix without speed has nothing to compare with: not known to stand still.
    assert still.tolist() == [False, True, True, False, True, False]
