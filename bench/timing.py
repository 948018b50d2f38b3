"""Best and median of repeated timed calls, for the report benches."""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable
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
