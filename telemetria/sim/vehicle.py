"""One simulated vehicle run without any I/O: its ground truth and the uploads its tracker makes (pure)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import NamedTuple

import numpy as np

from telemetria.sim.motion import MotionParams, drive
from telemetria.sim.roads import Grid, Route, make_grid, make_route
from telemetria.sim.tracker import TrackerLog, TrackerParams, Upload, track
from telemetria.sim.truth import Truth

DEFAULT_MOTION = MotionParams()
DEFAULT_TRACKER = TrackerParams()


class SimRun(NamedTuple):
    """Everything one run produced: what happened, what was posted, and what the tracker's link did."""

    truth: Truth
    uploads: list[Upload]
    log: TrackerLog


def vehicle_route(seed: int, vehicle: int = 0, grid: Grid | None = None) -> Route:
    """The route that vehicle number `vehicle` of the fleet made from `seed` runs every time."""
    return make_route(grid or make_grid(seed), np.random.default_rng([seed, vehicle, 0]))


def simulate_vehicle(
    seed: int,
    start: datetime,
    interval_s: int = 30,
    *,
    vehicle: int = 0,
    run: int = 0,
    route: Route | None = None,
    motion: MotionParams = DEFAULT_MOTION,
    tracker: TrackerParams = DEFAULT_TRACKER,
) -> SimRun:
    """Run number `run` of a vehicle from `start` (aware; cut to whole seconds): same arguments, same output.

    Seeds must be ≥ 0. The truth depends on (seed, vehicle, run, motion) only, so varying the tracker's
    interval or link leaves the ground truth unchanged.
    """
    if start.tzinfo is None:
        raise ValueError("start must be timezone-aware")
    start = start.astimezone(UTC).replace(microsecond=0)
    route = route or vehicle_route(seed, vehicle)
    truth = drive(route, start, np.random.default_rng([seed, vehicle, run, 1]), motion)
    uploads, log = track(truth, np.random.default_rng([seed, vehicle, run, 2]), interval_s, tracker)
    return SimRun(truth, uploads, log)
