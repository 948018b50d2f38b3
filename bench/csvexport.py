"""The CSV export's speed against main's formatting, and one CSV export of positions in a fresh process.

    .venv/bin/python -m bench.csvexport                  # 1,000,000 rows, no database: the target (issue 37)
    .venv/bin/python -m bench.csvexport --rows 200000 --reps 3
    .venv/bin/python -m bench.csvexport DSN ROWS REPS FROM TO   # (bench.reports) one export through a cursor

Without a database: ROWS positions (the columns below, as the positions export writes them; dicts, as a
cursor's records are read by key) are made once, then written as CSV in turns, REPS times each: by the export
(`csv_chunks`), by main's per-cell path before issue 37 (each column's `Kind.fmt` and `_quote` called per cell
with the row read through `_getter`, the code csv.py ran until then, kept below as the baseline), and merely
iterated (the floor). Both exports must give the same bytes. Target: >= 300,000 rows/s. The machine is shared,
so the verdict takes the speed-up over main's path measured in this run against the issue's ratio (300k over
the 112k rows/s main made on a free machine, 2.68x), and prints the rows/s by wall and CPU time beside it.
Exits 1 when the target is missed or the bytes differ.

With DSN...:

Streams the first ROWS fixes of [FROM, TO) (ISO instants; ordered by vehicle and time) through an
asyncpg cursor into output.csv.csv_chunks, writing to /dev/null, REPS times; then the same cursor
without CSV, and once more under tracemalloc. Prints one JSON object: seconds per repetition,
bytes, the peak RSS during the exports next to the RSS before them (KiB; Linux's peak is reset
first through /proc/self/clear_refs, so imports do not hide it), and the traced Python peak.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import resource
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any, BinaryIO

import asyncpg
import orjson

from bench.table import num, render
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.output.csv import (
    BOM,
    BOOL,
    COORD,
    DATETIME,
    INT,
    Chunker,
    Column,
    CsvFormatter,
    _getter,
    _quote,
    csv_chunks,
    decimal,
)  # fmt: skip

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


TARGET_ROWS_S = 300_000
MAIN_ROWS_S = 112_000  # main before issue 37, 1 M rows on the free machine (issue 37)
T0 = datetime(2026, 3, 2, 10, tzinfo=UTC)


def position_rows(n: int) -> list[dict[str, Any]]:
    """Positions as the table holds them: 100 vehicles, a fix every 10 s, speeds and odometer in tenths."""
    per = max(1, n // 100)
    return [
        {
            "vehicle_id": 1 + i // per, "ts": T0 + timedelta(seconds=10 * (i % per)), "lat": -10.43 + (i % 9973) * 1e-5,
            "lon": -62.46 - (i % 7919) * 1e-5, "speed_kmh": round(30 + 20 * math.sin(i), 1), "heading_deg": i % 360,
            "ignition": i % 13 != 0, "odometer_m": round(150_000 + 13.7 * i, 1),
        }
        for i in range(n)
    ]  # fmt: skip


def main_line(cells: list[tuple[Callable[[Any], Any], Any, bool]], row: Any, tz: tzinfo) -> str:
    """csv.CsvFormatter.line as main wrote it before issue 37: the baseline."""
    out = []
    for get, fmt, text in cells:
        value = get(row)
        if value is None:
            out.append("")
        elif text:
            out.append(_quote(fmt(value, tz)))
        else:
            out.append(fmt(value, tz))
    return ";".join(out) + "\r\n"


def by_main(rows: list[dict[str, Any]]) -> bytes:
    """The file by main's per-cell path (BOM, header and lines, 64 KiB chunks joined)."""
    fmt = CsvFormatter(COLUMNS, LOCAL_TZ)
    cells = [(_getter(c.get), c.kind.fmt, c.kind.text) for c in fmt.columns]
    buf, parts = Chunker(), [b""]
    buf.add(BOM + fmt.header())
    for row in rows:
        if chunk := buf.add(main_line(cells, row, LOCAL_TZ)):
            parts.append(chunk)
    parts.append(buf.flush())
    return b"".join(parts)


def by_export(rows: list[dict[str, Any]]) -> bytes:
    async def run() -> bytes:
        return b"".join([chunk async for chunk in csv_chunks(COLUMNS, rows, LOCAL_TZ)])

    return asyncio.run(run())


def floor(rows: list[dict[str, Any]]) -> bytes:
    for _ in rows:
        pass
    return b""


def formatting(n: int, reps: int) -> int:
    """The no-database comparison (see the module's docstring); the exit status."""
    rows = position_rows(n)
    ways: dict[str, Callable[[list[dict[str, Any]]], bytes]] = {
        "export": by_export,
        "main": by_main,
        "rows only": floor,
    }
    wall: dict[str, list[float]] = {k: [] for k in ways}
    cpu: dict[str, list[float]] = {k: [] for k in ways}
    files: dict[str, bytes] = {}
    print(f"bench.csvexport: {n:,} rows, {reps} turns, {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}")
    for _ in range(reps):
        for name, way in ways.items():  # in turns, so that the machine's load falls on all alike
            t, c = time.perf_counter(), time.process_time()
            files[name] = way(rows)
            wall[name].append(time.perf_counter() - t)
            cpu[name].append(time.process_time() - c)
    table = []
    for name in ways:
        w, c = min(wall[name]), min(cpu[name])
        table.append([name, f"{w:.2f}", f"{c:.2f}", num(n / w), num(n / c), f"{c / n * 1e6:.2f}"])
    print(render(["writer", "best s", "best CPU s", "rows/s", "rows/s (CPU)", "µs/row (CPU)"], table))
    same = files["export"] == files["main"]
    speedup = min(cpu["main"]) / min(cpu["export"])
    need = TARGET_ROWS_S / MAIN_ROWS_S
    print(
        f"bytes: export {len(files['export']):,}, main {len(files['main']):,}: {'identical' if same else 'DIFFERENT'}"
    )
    print(f"speed-up over main's path (CPU): {speedup:.2f}x; main on a free machine made {num(MAIN_ROWS_S)} rows/s, so")
    print(
        f"the target of {num(TARGET_ROWS_S)} rows/s is a {need:.2f}x speed-up; on this machine now that is "
        f"{num(n / min(cpu['export']))} rows/s of CPU, {num(speedup * MAIN_ROWS_S)} rows/s on the free one"
    )
    met = speedup >= need
    print(f"target: >= {num(TARGET_ROWS_S)} rows/s (>= {need:.2f}x main): {'met' if met else 'NOT met'}")
    return 0 if met and same else 1


if __name__ == "__main__":
    if len(sys.argv) == 6 and not sys.argv[1].startswith("-"):
        dsn, rows, reps, start, end = sys.argv[1:6]
        with open(os.devnull, "wb") as sink:
            args = (dsn, int(rows), int(reps), datetime.fromisoformat(start), datetime.fromisoformat(end), sink)
            result = asyncio.run(main(*args))
        sys.stdout.buffer.write(orjson.dumps(result) + b"\n")
    else:
        ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
        ap.add_argument("--rows", type=int, default=1_000_000)
        ap.add_argument("--reps", type=int, default=3)
        a = ap.parse_args()
        sys.exit(formatting(a.rows, a.reps))
