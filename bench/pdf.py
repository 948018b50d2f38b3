"""The PDF of a track report: time and peak memory for 10k and 100k rows, the CSV of the same rows beside it.

    .venv/bin/python -m bench.pdf                 # 10 000 and 100 000 rows (a few minutes on a busy machine)
    .venv/bin/python -m bench.pdf --rows 2000,20000

No database: the rows are the track report's columns (reports/kinds/track.py) with made-up values, generated
as the report's rows are (an async iterator computed while the file is written), plus a map of one line
through every position. Each figure comes from a fresh process (`--one FORMAT ROWS`), so its peak RSS is that
export's own: the peak is reset after the imports (/proc/self/clear_refs) and set beside the RSS before it.
Python's own allocations are traced too (tracemalloc, a second run) — the figure that says whether memory
grows with the rows. The baseline is the CSV (streamed, flat by construction).
"""

from __future__ import annotations

import argparse
import asyncio
import io
import subprocess
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from bench.csvexport import peak_rss_kib, reset_peak, rss_kib
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.kinds.track import COLUMNS
from telemetria.reports.output import csv, gis, pdf
from telemetria.reports.output.document import Document, Table

START = datetime(2026, 3, 2, 10, tzinfo=UTC)


async def rows(n: int) -> AsyncIterator[dict[str, Any]]:
    km = 0.0
    for i in range(n):
        step = 0.0123 + (i % 7) * 0.001
        km += step
        t = START + timedelta(seconds=10 * i)
        yield {
            "vehicle_id": 12, "plate": "NBX-1A23", "time": t, "lat": -10.43 + i * 1e-6,
            "lon": -62.46 + (i % 500) * 1e-5,
            "speed_kmh": 30.0 + i % 40, "heading_deg": i % 360, "ignition": "ligada", "step_km": step, "km": km,
            "method": "rota" if i % 3 else "linha reta", "used": True, "received": t + timedelta(seconds=4),
            "delay_s": 4,
        }  # fmt: skip
        if i % 1000 == 0:
            await asyncio.sleep(0)


def document(n: int) -> Document:
    async def drawing() -> tuple[list[gis.Segment], list[gis.Place]]:
        line = [gis.Position(r["time"], r["lat"], r["lon"]) async for r in rows(n)]
        return [gis.Segment("NBX-1A23", line)], [gis.Place("Escola", "school", -10.43, -62.46)]

    keys = [c.get for c in COLUMNS if isinstance(c.get, str)]
    total = [{**dict.fromkeys(keys), "method": None, "plate": "Total", "km": 123.456}]
    table = Table("Trajetória", COLUMNS, rows(n), lambda: total)
    return Document(
        "track", "Trajetória", "trajetoria", LOCAL_TZ, [("Período", "02/03/2026 a 31/03/2026")], "bench (admin)",
        START, [table], drawing=drawing, municipality="Prefeitura Municipal de Jaru",
    )  # fmt: skip


async def _pdf(n: int) -> int:
    out = io.BytesIO()  # not the spooled file: its bytes would count as the writer's memory, to be fair to it
    await pdf.render(document(n), out)
    return len(out.getbuffer())


async def _csv(n: int) -> int:
    size = 0
    async for chunk in csv.csv_chunks(COLUMNS, rows(n), LOCAL_TZ):
        size += len(chunk)
    return size


def one(fmt: str, n: int) -> dict[str, Any]:
    run = {"pdf": _pdf, "csv": _csv}[fmt]
    reset_peak()
    before = rss_kib()
    t = time.perf_counter()
    size = asyncio.run(run(n))
    seconds = time.perf_counter() - t
    peak = peak_rss_kib()
    tracemalloc.start()
    asyncio.run(run(n))
    traced = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return {
        "format": fmt, "rows": n, "seconds": round(seconds, 2), "bytes": size, "rss_before_kib": before,
        "peak_rss_kib": peak, "traced_peak_kib": traced // 1024,
    }  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="10000,100000", help="row counts, comma-separated")
    ap.add_argument("--one", nargs=2, metavar=("FORMAT", "ROWS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(orjson.dumps(one(args.one[0], int(args.one[1]))).decode())
        return
    print(f"{'rows':>8} {'format':>6} {'seconds':>8} {'MB':>7} {'peak RSS MiB (+ growth)':>24} {'traced MiB':>10}")
    for n in (int(x) for x in args.rows.split(",")):
        for fmt in ("csv", "pdf"):
            found = subprocess.run(
                [sys.executable, "-m", "bench.pdf", "--one", fmt, str(n)], check=True, capture_output=True, text=True
            )
            r = orjson.loads(found.stdout)
            grown = (r["peak_rss_kib"] - r["rss_before_kib"]) / 1024
            rss = f"{r['peak_rss_kib'] / 1024:.1f} (+{grown:.1f})"
            print(
                f"{n:>8} {fmt:>6} {r['seconds']:>8.2f} {r['bytes'] / 1e6:>7.2f} {rss:>24} "
                f"{r['traced_peak_kib'] / 1024:>10.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
