"""The detector's gate: it pauses while the service that started it is busy
(telemetria/occurrences/detection/yielding.py)."""

from __future__ import annotations

import os
import time

import pytest

from telemetria.occurrences.detection import yielding
from telemetria.occurrences.detection.yielding import Gate, cpu_seconds, parse_stat

# A /proc/<pid>/stat line whose command holds a space and a parenthesis; utime 250, stime 50 ticks.
STAT = "4242 (uvicorn (w) 1) S 1 4242 4242 0 -1 4194304 100 0 0 0 250 50 0 0 20 0 3 0 100 1000 10"


def test_parse_stat_counts_fields_after_the_command_whatever_it_holds() -> None:
    assert parse_stat(STAT, 100) == pytest.approx(3.0)
    assert parse_stat("1 (x) S 1", 100) is None


def test_cpu_seconds_of_this_process_agree_with_its_process_time() -> None:
    t = time.process_time() + 0.05
    while time.process_time() < t:  # some CPU, so that the figure is not just zero
        pass
    used = cpu_seconds(os.getpid())
    assert used is not None and used == pytest.approx(time.process_time(), abs=0.05)
    assert cpu_seconds(2**22 + 1) is None  # above the kernel's pid_max: no such process


class Fake:
    """A process whose CPU seconds and a clock the test moves."""

    def __init__(self) -> None:
        self.cpu: float | None = 0.0
        self.wall = 100.0

    def run(self, seconds: float, share: float) -> None:
        self.wall += seconds
        assert self.cpu is not None
        self.cpu += seconds * share


def test_busy_once_the_share_over_a_span_passes_the_limit() -> None:
    p = Fake()
    gate = Gate(50.0, lambda: p.cpu, lambda: p.wall)
    assert not gate.busy()  # a first sample: nothing to compare with yet
    p.run(1.0, 0.9)
    assert gate.busy() and gate.share_pct == pytest.approx(90.0)
    p.run(0.1, 0.0)
    assert gate.busy()  # within STEP_S: the last share still holds
    p.run(1.0, 0.2)
    assert not gate.busy() and gate.share_pct == pytest.approx(100.0 * 0.2 / 1.1)


def test_never_busy_with_limit_zero_or_an_unreadable_process() -> None:
    p = Fake()
    off = Gate(0.0, lambda: p.cpu, lambda: p.wall)
    unreadable = Gate(50.0, lambda: None, lambda: p.wall)
    for _ in range(3):
        p.run(1.0, 1.0)
        assert not off.busy() and not unreadable.busy()


async def test_wait_pauses_while_busy_and_never_longer_than_max_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    p = Fake()
    share = [1.0]

    async def sleep(s: float) -> None:  # the service keeps working while the detector sleeps
        p.run(s, share[0])

    monkeypatch.setattr(yielding.asyncio, "sleep", sleep)
    gate = Gate(50.0, lambda: p.cpu, lambda: p.wall)
    assert await gate.wait() == 0.0  # first sample
    p.run(0.5, 1.0)
    assert await gate.wait() == yielding.MAX_PAUSE_S  # busy throughout: it goes on after MAX_PAUSE_S
    share[0] = 0.75
    p.run(0.5, 0.75)
    share[0] = 0.1  # the burst ends while it waits

    assert await gate.wait() == yielding.STEP_S
    assert gate.paused_s == yielding.MAX_PAUSE_S + yielding.STEP_S
    assert await gate.wait() == 0.0
