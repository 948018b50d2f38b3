"""Best and median of repeated timed calls, for the report benches."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Timing:
    runs_s: list[float]

    @property
    def best_ms(self) -> float:
        return min(self.runs_s) * 1000

    @property
    def median_ms(self) -> float:
        return statistics.median(self.runs_s) * 1000


async def timed(fn: Callable[[], Awaitable[Any]], reps: int, warmup: int = 1) -> tuple[Timing, Any]:
    """`reps` timed calls after `warmup` untimed ones; the last call's result."""
    result = None
    for _ in range(warmup):
        result = await fn()
    runs = []
    for _ in range(reps):
        t = time.perf_counter()
        result = await fn()
        runs.append(time.perf_counter() - t)
    return Timing(runs), result


async def round_robin(calls: Sequence[Callable[[], Awaitable[Any]]], reps: int, warmup: int = 1) -> list[Timing]:
    """Each call `reps` times, taking turns (a burst of load on the shared machine hits them all alike)."""
    runs: list[list[float]] = [[] for _ in calls]
    for rep in range(warmup + reps):
        for k, call in enumerate(calls):
            t = time.perf_counter_ns()
            await call()
            if rep >= warmup:
                runs[k].append((time.perf_counter_ns() - t) / 1e9)
    return [Timing(r) for r in runs]
