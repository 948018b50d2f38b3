"""The raw COPY ceiling: asyncpg copy_records_to_table of fix rows into the same hypertable."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from bench.benchdb import BenchDb, Vehicle
from telemetria.ingest.queries import FIX_COLUMNS

# The columns the service writes, in its order.
COLUMNS = tuple(FIX_COLUMNS)
ROWS_PER_COPY = 10_000  # one statement = one transaction, like one writer flush (which takes up to 5,000)
MAX_ROWS_PER_CONN = 3_000_000  # pre-built rows cost memory (~200 B each)
_MS = timedelta(milliseconds=1)

Row = tuple[Any, ...]


@dataclass(slots=True)
class CopyResult:
    connections: int
    rows_sent: int  # rows in COPY statements started, the calibration one included
    rows_committed: int  # rows in COPY statements that returned, the calibration one included
    timed_rows: int  # rows committed while the clock ran
    duration_s: float
    p50_ms: float
    p99_ms: float
    calibration_rows: int = 0  # the first rows of build_chunks(fleet, base, ...), committed before the clock
    committed_per_conn: tuple[int, ...] = ()  # connection c committed the first rows of its own window


def build_chunks(fleet: list[Vehicle], base: datetime, rows: int) -> list[list[Row]]:
    """`rows` distinct fixes (vehicle i % n at base + i // n ms), the values fixes.lua sends."""
    n = len(fleet)
    rows_out: list[Row] = []
    for k in range(-(-rows // n)):
        # One instant for the whole fleet: its values are built once and shared by n rows (memory).
        ts = base + k * _MS
        lat, lon = -10.43 + (k % 1000) * 1e-5, -62.47 + (k % 7) * 1e-5
        speed, heading = float(30 + k % 50), float((k * 7) % 360)
        for v in fleet[: rows - k * n]:
            # altitude 152 m, no accuracy, hdop 0.9, 9 satellites, ignition on, no odometer/driver/attributes
            row = (v.vehicle_id, v.tracker_id, ts, lat, lon, speed, heading, 152.0, None, 0.9, 9, True)
            rows_out.append((*row, None, None, True, None))
    return [rows_out[i : i + ROWS_PER_COPY] for i in range(0, rows, ROWS_PER_COPY)]


class CopyRun:
    """Connections opened and rows built first (untimed), then COPY against the clock."""

    def __init__(self, conns: list[asyncpg.Connection], work: list[list[list[Row]]], duration_s: float) -> None:
        self._conns, self._work, self._duration_s = conns, work, duration_s
        self._calibration_rows = ROWS_PER_COPY

    @classmethod
    async def prepare(
        cls, db: BenchDb, fleet: list[Vehicle], base: datetime, connections: int, duration_s: float, window: timedelta
    ) -> CopyRun:
        """Each connection gets its own time window after `base`; the calibration COPY uses `base`'s."""
        conns = [await db.connect(jsonb_codec=False) for _ in range(connections)]
        try:
            rate = await _calibrate(conns[0], fleet, base)
            # Rows are built before the clock starts: building them in the loop would lower the ceiling.
            per_conn = min(MAX_ROWS_PER_CONN, int(rate * 1.5 * duration_s))
            work = [build_chunks(fleet, base + (c + 1) * window, per_conn) for c in range(connections)]
        except BaseException:
            for c in conns:
                await c.close()
            raise
        return cls(conns, work, duration_s)

    async def run(self) -> CopyResult:
        """COPY for the duration (or until the pre-built rows run out)."""
        latencies: list[float] = []
        sent = [0] * len(self._conns)
        done = [0] * len(self._conns)
        t0 = time.perf_counter()
        deadline = t0 + self._duration_s
        loops = (
            _copy_loop(c, w, deadline, latencies, sent, done, i)
            for i, (c, w) in enumerate(zip(self._conns, self._work, strict=True))
        )
        await asyncio.gather(*loops)
        elapsed = time.perf_counter() - t0
        latencies.sort()
        cal = self._calibration_rows
        return CopyResult(
            len(self._conns),
            sum(sent) + cal,
            sum(done) + cal,
            sum(done),
            elapsed,
            _pct(latencies, 50),
            _pct(latencies, 99),
            cal,
            tuple(done),
        )

    async def close(self) -> None:
        for c in self._conns:
            await c.close()


async def _calibrate(conn: asyncpg.Connection, fleet: list[Vehicle], base: datetime) -> float:
    """Rows/s of one warm-up COPY (its rows are stored too, and counted with the phase)."""
    chunk = build_chunks(fleet, base, ROWS_PER_COPY)[0]
    t = time.perf_counter()
    await conn.copy_records_to_table("fixes", records=chunk, columns=COLUMNS)
    return len(chunk) / (time.perf_counter() - t)


async def _copy_loop(
    conn: asyncpg.Connection,
    chunks: list[list[Row]],
    deadline: float,
    latencies: list[float],
    sent: list[int],
    done: list[int],
    slot: int,
) -> None:
    for chunk in chunks:
        if time.perf_counter() >= deadline:
            return
        sent[slot] += len(chunk)
        t = time.perf_counter()
        await conn.copy_records_to_table("fixes", records=chunk, columns=COLUMNS)
        latencies.append((time.perf_counter() - t) * 1000)
        done[slot] += len(chunk)


def _pct(sorted_ms: list[float], p: float) -> float:
    if not sorted_ms:
        return 0.0
    return sorted_ms[min(len(sorted_ms) - 1, round(p / 100 * (len(sorted_ms) - 1)))]
