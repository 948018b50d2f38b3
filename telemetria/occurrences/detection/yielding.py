"""The detector gives way to a busy service: between two windows it pauses while the process that started it
(the service, answering trackers and people) uses more than a set share of a core.

A lower nice value (detector._lower_priority) is not enough on its own: the detector's queries run in database
backends at the normal priority, and they take the CPU the ingest's flushes need (measured: saturated ingest lost
a third of its throughput with the detector at nice 19). Pausing the detector itself leaves both to ingest; the
detector's lag grows instead while the service is saturated, and it catches up once the burst is over.

The service's CPU is read from /proc/<pid>/stat (Linux); where it cannot be read the detector never pauses.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from pathlib import Path

STEP_S = 0.25  # how often a paused detector looks again (and the shortest span a share is measured over)
MAX_PAUSE_S = 2.0  # at most this long in a row before the next window: the detector never stops altogether


def cpu_seconds(pid: int) -> float | None:
    """The user + system CPU seconds process `pid` has used so far; None when /proc cannot tell."""
    try:
        return parse_stat(Path(f"/proc/{pid}/stat").read_text(), os.sysconf("SC_CLK_TCK"))
    except OSError:
        return None


def parse_stat(stat: str, ticks_per_s: int) -> float | None:
    """utime + stime (fields 14 and 15, in clock ticks) of a /proc/<pid>/stat line, in seconds."""
    # "pid (comm) state ppid ...": comm may hold spaces and parentheses, so fields are counted after the last ")".
    fields = stat[stat.rfind(")") + 2 :].split()
    try:
        return (int(fields[11]) + int(fields[12])) / ticks_per_s
    except (IndexError, ValueError):
        return None


class Gate:
    """Whether a process is busy: its CPU share (of one core) over the last STEP_S or more above `limit_pct`.

    `cpu` reads the process's CPU seconds so far and `clock` the wall clock (both injectable for tests)."""

    def __init__(
        self, limit_pct: float, cpu: Callable[[], float | None], clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit_pct = limit_pct
        self._cpu = cpu
        self._clock = clock
        self._last: tuple[float, float] | None = None  # (wall, cpu) of the last sample
        self.share_pct: float | None = None  # the last share measured
        self.paused_s = 0.0  # in all, since started

    @classmethod
    def of_parent(cls, limit_pct: float) -> Gate:
        parent = os.getppid()
        return cls(limit_pct, lambda: cpu_seconds(parent))

    def busy(self) -> bool:
        """The share measured over the span since the last sample (a new one once STEP_S has passed) is above the
        limit. Never busy with limit 0 or when the CPU cannot be read."""
        if self.limit_pct <= 0:
            return False
        now = self._clock()
        if self._last is None or now - self._last[0] >= STEP_S:
            used = self._cpu()
            if used is None:
                self._last, self.share_pct = None, None
                return False
            if self._last is not None:
                self.share_pct = 100.0 * (used - self._last[1]) / (now - self._last[0])
            self._last = (now, used)
        return self.share_pct is not None and self.share_pct > self.limit_pct

    async def wait(self) -> float:
        """Pause while busy, MAX_PAUSE_S at most; the seconds paused."""
        paused = 0.0
        while paused < MAX_PAUSE_S and self.busy():
            await asyncio.sleep(STEP_S)
            paused += STEP_S
        self.paused_s += paused
        return paused
