"""One CSV export of positions, in a fresh process so that its peak RSS is the export's own.

    .venv/bin/python -m bench.csvexport DSN ROWS REPS FROM TO

Streams the first ROWS fixes of [FROM, TO) (ISO instants; ordered by vehicle and time) through an
asyncpg cursor into output.csv.csv_chunks, writing to /dev/null, REPS times; then the same cursor
without CSV, and once more under tracemalloc. Prints one JSON object: seconds per repetition,
bytes, the peak RSS during the exports next to the RSS before them (KiB; Linux's peak is reset
first through /proc/self/clear_refs, so imports do not hide it), and the traced Python peak.
"""

from __future__ import annotations

import asyncio
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any, BinaryIO

import asyncpg
import orjson

from telemetria.localtime import LOCAL_TZ
from telemetria.reports.output.csv import BOOL, COORD, DATETIME, INT, Column, csv_chunks, decimal

PREFETCH = 5_000
POSITIONS = """
SELECT vehicle_id, ts, lat, lon, speed_kmh, heading_deg, ignition, odometer_m FROM fixes
WHERE ts >= $1 AND ts < $2 ORDER BY vehicle_id, ts LIMIT $3"""
COUNT_POSITIONS = f"SELECT count(*) FROM ({POSITIONS}) p"

COLUMNS = [
    Column("Veículo (id)", "vehicle_id", INT),
    Column("Data/hora", "ts", DATETIME),
    Column("Latitude", "lat", COORD),
    Column("Longitude", "lon", COORD),
    Column("Velocidade (km/h)", "speed_kmh", decimal(1)),
    Column("Rumo (graus)", "heading_deg", decimal(0)),
    Column("Ignição", "ignition", BOOL),
    Column("Odômetro (m)", "odometer_m", decimal(1)),
]


def _status_kib(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith(key + ":")), None)
    except OSError:
        return None


def rss_kib() -> int:
    """Resident set now, KiB (the process peak where /proc is missing)."""
    return _status_kib("VmRSS") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def reset_peak() -> None:
    """Make the peak RSS start from now (Linux >= 4.0); elsewhere it keeps the start-up peak."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass


def peak_rss_kib() -> int:
    return _status_kib("VmHWM") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


async def _rows(conn: asyncpg.Connection, start: datetime, end: datetime, n: int) -> AsyncIterator[Any]:
    async for r in conn.cursor(POSITIONS, start, end, n, prefetch=PREFETCH):
        yield r


async def export(conn: asyncpg.Connection, start: datetime, end: datetime, n: int, out: BinaryIO) -> tuple[int, int]:
    """(rows, bytes) of one export into `out`; the cursor needs a transaction."""
    size = rows = 0
    async with conn.transaction(readonly=True):

        async def counted() -> AsyncIterator[Any]:
            nonlocal rows
            async for r in _rows(conn, start, end, n):
                rows += 1
                yield r

        async for chunk in csv_chunks(COLUMNS, counted(), LOCAL_TZ):
            out.write(chunk)  # /dev/null: never blocks
            size += len(chunk)
    return rows, size


async def cursor_only(conn: asyncpg.Connection, start: datetime, end: datetime, n: int) -> int:
    async with conn.transaction(readonly=True):
        return sum([1 async for _ in _rows(conn, start, end, n)])


async def main(dsn: str, n: int, reps: int, start: datetime, end: datetime, out: BinaryIO) -> dict[str, Any]:
    conn = await asyncpg.connect(dsn)
    try:
        await conn.fetchval("SELECT 1")
        reset_peak()
        before = rss_kib()
        csv_s, rows, size = [], 0, 0
        for _ in range(reps):
            t = time.perf_counter()
            rows, size = await export(conn, start, end, n, out)
            csv_s.append(time.perf_counter() - t)
        peak = peak_rss_kib()
        cursor_s = []
        for _ in range(reps):
            t = time.perf_counter()
            await cursor_only(conn, start, end, n)
            cursor_s.append(time.perf_counter() - t)
        tracemalloc.start()
        await export(conn, start, end, n, out)
        traced_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    finally:
        await conn.close()
    return {"rows": rows, "bytes": size, "csv_s": csv_s, "cursor_s": cursor_s, "rss_before_kib": before,
            "rss_peak_kib": peak, "traced_peak_kib": traced_peak // 1024}  # fmt: skip


if __name__ == "__main__":
    dsn, rows, reps, start, end = sys.argv[1:6]
    with open(os.devnull, "wb") as sink:
        args = (dsn, int(rows), int(reps), datetime.fromisoformat(start), datetime.fromisoformat(end), sink)
        result = asyncio.run(main(*args))
    sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
