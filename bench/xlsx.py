"""XLSX export: 100,000 track rows (the track's 14 columns) in under 10 s, in flat memory; side by side with the CSV
of the same rows and with openpyxl's write-only mode (the library not chosen, docs/architecture.md).

    .venv/bin/python -m bench.xlsx              # 10,000 and 100,000 rows, 3 repetitions each
    .venv/bin/python -m bench.xlsx --quick      # 1 repetition

Writers: ours (XlsxWriter, constant memory, one write per typed cell), the CSV of the same rows (the baseline),
XlsxWriter's typed-column paths (the leanest, `typed`, and `write_row`), the rows alone and, when installed, the
compiled writers rustpy-xlsxwriter, fastxlsxio and rvgsrust-xlsxwriter; openpyxl write-only with --all
(docs/performance.md compares them; --profile: where our writer's time goes).

Every export runs in a fresh process (`--one WRITER ROWS`), so that its peak RSS is its own; the rows are made
lazily, as the track's are computed while they stream. Exits 1 when the target is not met.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson

from bench.csvexport import peak_rss_kib, reset_peak, rss_kib
from bench.table import num, render
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.kinds.track import COLUMNS
from telemetria.reports.output import xlsx
from telemetria.reports.output.csv import csv_chunks
from telemetria.reports.output.document import Document, Table

TARGET_S = 10.0
ROWS = (10_000, 100_000)
FLAT_SLACK_KIB = 16 * 1024  # 100k rows may hold this much more than 10k rows and still count as flat
T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)


def make_rows(n: int) -> Iterator[dict[str, Any]]:
    """Track-like rows: one vehicle every 10,000 rows, a fix every 10 s."""
    km = 0.0
    for i in range(n):
        step = 0.05 + (i % 7) / 1000
        km += step
        t = T0 + timedelta(seconds=10 * i)
        yield {
            "vehicle_id": 1 + i // 10_000, "plate": f"ABC{1000 + i // 10_000}", "time": t.astimezone(LOCAL_TZ),
            "lat": -10.43 + i * 1e-6, "lon": -62.46 - i * 1e-6, "speed_kmh": round(30 + 20 * math.sin(i), 1),
            "heading_deg": i % 360, "ignition": "ligada", "step_km": round(step, 4), "km": round(km, 4),
            "method": "route", "used": i % 50 != 0, "received": (t + timedelta(seconds=3)).astimezone(LOCAL_TZ),
            "delay_s": 3,
        }  # fmt: skip


async def lazily(n: int) -> AsyncIterator[dict[str, Any]]:
    for i, row in enumerate(make_rows(n)):
        if i % 1000 == 0:
            await asyncio.sleep(0)  # as a cursor would hand the loop back
        yield row


def document(n: int) -> Document:
    return Document(
        kind="track", title="Trajetória", filename="trajetoria", tz=LOCAL_TZ, query=[("Período", "bench")],
        generated_by="bench (admin)", generated_at=T0, tables=[Table("Trajetória", COLUMNS, lazily(n))],
    )  # fmt: skip


async def ours(n: int, out: Path) -> None:
    with out.open("wb") as f:
        async for chunk in xlsx.chunks(document(n)):
            f.write(chunk)


async def as_csv(n: int, out: Path) -> None:
    with out.open("wb") as f:
        async for chunk in csv_chunks(COLUMNS, lazily(n), LOCAL_TZ):
            f.write(chunk)


async def with_openpyxl(n: int, out: Path) -> None:
    """The same typed cells through openpyxl's write-only workbook (its fastest mode)."""
    from openpyxl import Workbook
    from openpyxl.cell import WriteOnlyCell

    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Trajetória")
    ws.freeze_panes = "A2"
    headers = xlsx.headers_of(COLUMNS, LOCAL_TZ)
    ws.append(headers)
    getters = [(c.get, c.kind) for c in COLUMNS]
    async for row in lazily(n):
        cells = []
        for get, kind in getters:
            cell = xlsx.cell_of(kind, row[get] if isinstance(get, str) else get(row), LOCAL_TZ)
            c = WriteOnlyCell(ws, value=cell.value)
            if cell.style:
                c.number_format = cell.style
            cells.append(c)
        ws.append(cells)
    ws.auto_filter.ref = f"A1:N{n + 1}"
    wb.save(out)


def _typed(row: dict[str, Any], cols: list[tuple[Any, str]]) -> list[Any]:
    """A row's values as the typed-column paths take them: naive local date-times, booleans as "Sim"/"Não"."""
    out = []
    for get, kind in cols:
        v = row[get] if isinstance(get, str) else get(row)
        if v is not None and kind == "datetime":
            v = v.astimezone(LOCAL_TZ).replace(tzinfo=None, microsecond=0)
        elif v is not None and kind == "bool":
            v = "Sim" if v else "Não"
        out.append(v)
    return out


async def with_write_row(n: int, out: Path) -> None:
    """XlsxWriter's typed-column path: each column's number format set once (set_column), rows by write_row."""
    book = xlsx.Book(out, out.parent)
    ws = book.sheet("Trajetória")
    for j, c in enumerate(COLUMNS):
        style = xlsx.DATETIME_FORMAT if c.kind.name == "datetime" else xlsx.number_format(c.kind)
        ws.set_column(j, j, 12, book.style(style) if style else None)
    ws.write_row(0, 0, xlsx.headers_of(COLUMNS, LOCAL_TZ), book.style("header"))
    cols = [(c.get, c.kind.name) for c in COLUMNS]
    i = 0
    async for row in lazily(n):
        i += 1
        ws.write_row(i, 0, _typed(row, cols))
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, n, len(COLUMNS) - 1)
    book.close()


async def with_rustpy(n: int, out: Path) -> None:
    """The same typed cells through rustpy-xlsxwriter (a binding of rust_xlsxwriter; not a dependency: measured
    when installed), records from a generator, per-column number formats, constant memory (its default)."""
    import importlib

    rp = importlib.import_module("rustpy_xlsxwriter")
    heads = xlsx.headers_of(COLUMNS, LOCAL_TZ)
    formats = []
    for c in COLUMNS:
        style = xlsx.DATETIME_FORMAT if c.kind.name == "datetime" else xlsx.number_format(c.kind)
        formats.append(rp.Format().set_num_format(style) if style else None)
    cols = [(c.get, c.kind.name) for c in COLUMNS]

    def records() -> Iterator[dict[str, Any]]:
        for row in make_rows(n):
            yield dict(zip(heads, _typed(row, cols), strict=True))

    book = rp.FastExcel(str(out)).freeze(row=1)
    book.sheet("Trajetória", records(), column_formats=formats, autofilter=True, header_format=rp.Format().set_bold())
    await asyncio.to_thread(book.save)


def _converter(kind: str) -> Any:
    """The one conversion a column's values need on the typed paths (None: the value is written as it is)."""
    if kind == "datetime":
        return lambda v: xlsx._serial(v.astimezone(LOCAL_TZ).replace(tzinfo=None, microsecond=0))
    if kind == "bool":
        return lambda v: "Sim" if v else "Não"
    return None


async def with_typed(n: int, out: Path) -> None:
    """XlsxWriter's typed-column path at its leanest: constant memory, per column the writer (`write_number` or
    `write_string`), its format and its conversion chosen once, no per-cell type check, no width measuring: the
    floor of any XlsxWriter path, what XlsxWriter itself costs."""
    book = xlsx.Book(out, out.parent)
    ws = book.sheet("Consulta")
    ws.write_string(0, 0, "Trajetória", book.style("title"))
    ws = book.sheet("Trajetória")
    ws.write_row(0, 0, xlsx.headers_of(COLUMNS, LOCAL_TZ), book.style("header"))
    plan = []
    for j, c in enumerate(COLUMNS):
        style = xlsx.DATETIME_FORMAT if c.kind.name == "datetime" else xlsx.number_format(c.kind)
        write = ws.write_string if c.kind.text or c.kind.name == "bool" else ws.write_number
        plan.append((j, c.get, _converter(c.kind.name), write, book.style(style) if style else None))
    i = 0
    async for row in lazily(n):
        i += 1
        for j, get, conv, write, fmt in plan:
            v = row[get] if isinstance(get, str) else get(row)
            if v is not None:
                write(i, j, conv(v) if conv else v, fmt)
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, n, len(COLUMNS) - 1)
    book.close()


async def with_fastxlsxio(n: int, out: Path) -> None:
    """The same typed cells through fastxlsxio (a Rust writer with a cell and row API, constant memory), rows in
    batches with one format per column. It has no freeze panes, no autofilter and no font size (its formats take
    `num_format` and `bold` only), so it cannot write our sheets as they are; measured when installed."""
    import importlib

    fx = importlib.import_module("fastxlsxio")
    book = fx.XIOWWorkbook(str(out), fx.XIOWOptions(constant_memory=True))
    book.add_worksheet("Consulta").write_cell(0, 0, "Trajetória", book.add_format({"bold": True}))
    ws = book.add_worksheet("Trajetória")
    ws.write_row(0, 0, xlsx.headers_of(COLUMNS, LOCAL_TZ), [book.add_format({"bold": True})] * len(COLUMNS))
    formats = []
    for c in COLUMNS:
        style = xlsx.DATETIME_FORMAT if c.kind.name == "datetime" else xlsx.number_format(c.kind)
        formats.append(book.add_format({"num_format": style}) if style else None)
    cols = [(c.get, c.kind.name) for c in COLUMNS]
    i, batch = 1, []
    async for row in lazily(n):
        batch.append(_typed(row, cols))
        if len(batch) >= xlsx.BATCH_ROWS:
            ws.write_rows(i, 0, batch, formats)
            i, batch = i + len(batch), []
    ws.write_rows(i, 0, batch, formats)
    book.save()


async def with_rvgs(n: int, out: Path) -> None:
    """The same typed cells through rvgsrust-xlsxwriter (a binding of rust_xlsxwriter with a cell API: constant
    memory, frozen panes, autofilter, font sizes, widths set at the end), one `write` per cell with its column's
    format, as ours writes them; measured when installed."""
    import importlib

    rx = importlib.import_module("rvgsrust_xlsxwriter")
    wb = rx.Workbook()
    wb.set_tempdir(str(out.parent))
    wb.add_worksheet("Consulta", constant_memory=True).write(0, 0, "Trajetória", wb.add_format().set_bold())
    ws = wb.add_worksheet("Trajetória", constant_memory=True)
    bold = wb.add_format().set_bold()
    for j, h in enumerate(xlsx.headers_of(COLUMNS, LOCAL_TZ)):
        ws.write(0, j, h, bold)
    plan = []
    for j, c in enumerate(COLUMNS):
        style = xlsx.DATETIME_FORMAT if c.kind.name == "datetime" else xlsx.number_format(c.kind)
        plan.append((j, c.get, _converter(c.kind.name), wb.add_format().set_num_format(style) if style else None))
    write, i = ws.write, 0
    async for row in lazily(n):
        i += 1
        for j, get, conv, fmt in plan:
            v = row[get] if isinstance(get, str) else get(row)
            if v is not None:
                write(i, j, conv(v) if conv else v, fmt)
    ws.freeze_panes(1, 0)
    ws.autofilter(0, 0, n, len(COLUMNS) - 1)
    await asyncio.to_thread(wb.close, str(out))


async def rows_only(n: int, out: Path) -> None:
    """The rows alone, made and iterated, nothing written: what every writer pays before its first cell."""
    count = 0
    async for _ in lazily(n):
        count += 1
    await asyncio.to_thread(out.write_bytes, b"%d" % count)


def where_the_time_goes(n: int) -> list[list[str]]:
    """Our writer under cProfile (its steps run on one thread, the rows from a plain generator): its own time
    (tottime) per module group, the share of the total."""
    import cProfile
    import pstats

    def write(path: Path) -> None:  # xlsx.write's steps, on this thread (cProfile sees one thread)
        doc = document(0)
        book = xlsx.Book(path, path.parent)
        xlsx.Query(book, doc)
        sheet = xlsx.Sheet(book, book.sheet("Trajetória"), COLUMNS, LOCAL_TZ)
        batch: list[dict[str, Any]] = []
        for row in make_rows(n):
            batch.append(row)
            if len(batch) >= xlsx.BATCH_ROWS:
                sheet.write(batch)
                batch = []
        sheet.write(batch)
        sheet.finish()
        book.close()

    with tempfile.TemporaryDirectory() as tmp:
        prof = cProfile.Profile()
        prof.enable()
        write(Path(tmp) / "out")
        prof.disable()
    groups: dict[str, float] = {}
    stats: dict[Any, Any] = getattr(pstats.Stats(prof), "stats")  # noqa: B009 (not in the stubs)
    for (file, _, func), (_, _, tottime, _, _) in stats.items():
        if "xlsxwriter" in file:
            key = "XlsxWriter: " + ("cell XML (_write_*)" if func.startswith("_write") else "writing API, rest")
        elif "telemetria/reports/output" in file:
            key = "ours: conversion, emitters (reports/output)"
        elif "bench" in file:
            key = "the rows (bench's generator)"
        elif "zipfile" in file or "zlib" in func or "compress" in func:
            key = "zip (deflate)"
        else:
            key = "builtins and stdlib (str, io, datetime: called by both)"
        groups[key] = groups.get(key, 0.0) + tottime
    total = sum(groups.values())
    return [[k, f"{v:.2f}", f"{100 * v / total:.0f} %"] for k, v in sorted(groups.items(), key=lambda kv: -kv[1])]


def _has(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


ADOPTED = "xlsxwriter"  # the writer reports/output/xlsx.py uses: the one the targets are checked on
WRITERS = {"xlsxwriter": ours, "typed": with_typed, "write_row": with_write_row, "csv": as_csv, "rows": rows_only}
OPTIONAL = {"openpyxl": with_openpyxl}  # --all: 2–3× slower than XlsxWriter, measured in issue 19
if _has("rustpy_xlsxwriter"):
    WRITERS["rustpy"] = with_rustpy
if _has("fastxlsxio"):
    WRITERS["fastxlsxio"] = with_fastxlsxio
if _has("rvgsrust_xlsxwriter"):
    WRITERS["rvgs"] = with_rvgs


def one(writer: str, n: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        reset_peak()
        before = rss_kib()
        t, cpu = time.perf_counter(), time.process_time()
        asyncio.run({**WRITERS, **OPTIONAL}[writer](n, out))
        seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
        size = out.stat().st_size
        return {"seconds": seconds, "cpu_s": cpu, "bytes": size, "rss_kib": before, "peak_kib": peak_rss_kib()}


def run(writer: str, n: int, reps: int) -> dict[str, Any]:
    best: dict[str, Any] | None = None
    for _ in range(reps):
        cmd = [sys.executable, "-m", "bench.xlsx", "--one", writer, str(n)]
        got: dict[str, Any] = orjson.loads(subprocess.run(cmd, capture_output=True, check=True).stdout)
        if best is None or got["seconds"] < best["seconds"]:
            best = got
    assert best is not None
    return best


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="one repetition each")
    ap.add_argument("--all", action="store_true", help="openpyxl's write-only mode too")
    ap.add_argument("--profile", action="store_true", help="where our writer's time goes (cProfile, 100k rows)")
    ap.add_argument("--one", nargs=2, metavar=("WRITER", "ROWS"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(orjson.dumps(one(args.one[0], int(args.one[1]))).decode())
        return 0
    reps = 1 if args.quick else 3
    print(f"bench.xlsx: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; best of {reps}, fresh process each")
    writers = {**WRITERS, **OPTIONAL} if args.all else WRITERS
    found = {(w, n): run(w, n, reps) for n in ROWS for w in writers}
    rows = []
    for (w, n), r in found.items():
        grown = r["peak_kib"] - r["rss_kib"]
        rows.append([w, num(n), f"{r['seconds']:.2f}", f"{r['cpu_s']:.2f}", num(n / r["seconds"]),
                     num(r["bytes"] / 1024), num(r["peak_kib"] / 1024, 1), num(grown / 1024, 1)])  # fmt: skip
    heads = ["writer", "rows", "s", "CPU s", "rows/s", "file KiB", "peak RSS MiB", "peak - start MiB"]
    print(render(heads, rows))
    print("CPU s: the process's CPU time (all threads); on a machine shared beyond its cores, wall time grows")
    print("with the load and CPU time much less, so compare CPU s with the CSV's line when the load is high")
    if args.profile:
        print(f"\nwhere the time goes: {ADOPTED}, {num(ROWS[1])} rows under cProfile (its overhead included)")
        print(render(["part", "s (own time)", "share"], where_the_time_goes(ROWS[1])))
    lines, code = verdict(found)
    print("\n".join(lines))
    return code


def verdict(found: dict[tuple[str, int], dict[str, Any]]) -> tuple[list[str], int]:
    """The targets checked on the adopted writer's runs: the lines to print and the exit code (1: one missed)."""
    big, small = found[(ADOPTED, ROWS[1])], found[(ADOPTED, ROWS[0])]
    grew = (big["peak_kib"] - big["rss_kib"]) - (small["peak_kib"] - small["rss_kib"])
    fast, flat = big["seconds"] < TARGET_S, grew <= FLAT_SLACK_KIB
    return [
        f"target: {num(ROWS[1])} rows in < {TARGET_S:.0f} s ({ADOPTED}): {big['seconds']:.2f} s wall, "
        f"{big['cpu_s']:.2f} s CPU, {'met' if fast else 'NOT met'}",
        f"target: flat memory, 10× the rows within {FLAT_SLACK_KIB // 1024} MiB more peak: "
        f"{grew / 1024:+.1f} MiB, {'met' if flat else 'NOT met'}",
    ], 0 if fast and flat else 1


if __name__ == "__main__":
    sys.exit(main())
