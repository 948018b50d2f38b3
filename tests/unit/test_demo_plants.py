"""What the demo plants in its runs (sim/demo.py demo_run) really gives the occurrence pages something to show."""

from __future__ import annotations

from datetime import UTC, datetime

from telemetria.sim.demo import demo_run
from telemetria.sim.vehicle import DEFAULT_MOTION, DEFAULT_TRACKER, simulate_vehicle

START = datetime(2026, 3, 9, 10, 0, tzinfo=UTC)


def test_every_vehicle_gets_long_halts_and_signal_losses_within_a_few_runs() -> None:
    for vehicle in range(3):
        plans = [demo_run(vehicle, run) for run in range(12)]
        assert sum(m is not DEFAULT_MOTION for m, _ in plans) == 4
        assert sum(t is not None for _, t in plans) == 3
        assert all(m.speeding for m, _ in plans), "every run may still speed, as before"


def test_a_long_halt_run_stops_over_three_minutes_and_a_loss_run_goes_silent_over_five() -> None:
    halts, losses = [], []
    for vehicle in range(3):
        for run in range(8):
            motion, tracker = demo_run(vehicle, run)
            sim = simulate_vehicle(
                5, START, vehicle=vehicle, run=run, motion=motion, tracker=tracker or DEFAULT_TRACKER
            )
            if motion is not DEFAULT_MOTION:
                halts += [s.duration_s for s in sim.truth.stops if s.kind == "halt"]
            if tracker is not None:
                losses += [b - a for a, b in sim.log.loss]
    assert halts and min(halts) >= 240
    assert losses and max(losses) >= 600
