"""The bench's printed result: figures, integrity and the target ratios, as plain aligned text."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

from bench.copy_ceiling import ROWS_PER_COPY
from bench.phases import PhaseResult
from bench.table import ms, num, pct
from bench.table import render as table

TARGET_BATCH_VS_COPY = 0.40
TARGET_SINGLE_VS_NOOP = 0.80
TARGET_P99_MS = 50.0


def render(
    results: list[PhaseResult],
    duration_s: float,
    wrk: str,
    duplicate_keys: int,
    db_name: str,
    dropped: bool,
    log_dir: Path,
) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"telemetria ingest bench   {now}   nproc {os.cpu_count()}   {wrk} (1 thread)   {duration_s:g} s per phase\n"
        f"single: one fix per POST; batch: {{'fixes': [1,000]}} per POST; COPY: asyncpg "
        f"copy_records_to_table, {ROWS_PER_COPY:,} rows per statement (its requests = statements)\n"
        "CPU in % of one core: server = uvicorn and its workers, db = the whole local cluster, "
        "client = wrk (or this process for COPY), machine = all cores (other work on the machine included)"
    )
    measured = [r for r in results if r.kind != "warm-up"]
    parts = [
        head,
        "",
        "THROUGHPUT AND LATENCY",
        _figures(measured),
        "",
        "INTEGRITY (in fixes; stored = rows added to `fixes` during the phase)",
        _integrity([r for r in results if r.integrity]),
        "cut at stop = fixes in requests wrk started but never saw answered when its time ran out (they may land);",
        "duplicates = stored beyond (acked + cut at stop); lost = acked but not stored; both must be 0.",
        f"(vehicle_id, ts) keys stored more than once (GROUP BY ... HAVING count(*) > 1): {duplicate_keys}",
        "",
        "RATIOS VS TARGETS (the no-op baseline runs 1 worker; batch is compared with the best COPY figure)",
        _ratios(measured),
        "",
        f"cleanup: database {db_name} {'dropped' if dropped else 'NOT dropped'}; servers stopped; logs in {log_dir}",
    ]
    return "\n".join(parts)


def _label(r: PhaseResult) -> str:
    return r.kind if r.workers is None else f"{r.kind} {r.workers}w"


def _figures(rows: list[PhaseResult]) -> str:
    headers = ["what", "conns", "secs", "requests", "req/s", "rows/s", "p50 ms", "p99 ms", "non-2xx"]
    headers += ["server", "db", "client", "machine"]
    out = []
    for r in rows:
        non2xx = sum(r.non_2xx.values()) + sum(r.socket_errors.values())
        c = r.cpu
        out.append(
            [
                *(_label(r), str(r.conns), num(r.duration_s, 1), num(r.requests), num(r.req_per_s), num(r.rows_per_s)),
                ms(r.p50_ms),
                *(ms(r.p99_ms), num(non2xx), pct(c.server_pct), pct(c.db_pct), pct(c.client_pct), pct(c.machine_pct)),
            ]
        )
    return table(headers, out)


def _integrity(rows: list[PhaseResult]) -> str:
    headers = ["phase", "conns", "sent", "2xx × n", "acked", "stored", "stored−acked", "cut at stop"]
    headers += ["duplicates", "lost", "svc dup/rej", "non-2xx by status"]
    out = []
    for r in rows:
        i = r.integrity
        assert i is not None
        statuses = ", ".join(f"{code}: {n:,}" for code, n in r.non_2xx.items())
        errors = ", ".join(f"{name}: {n:,}" for name, n in r.socket_errors.items())
        out.append(
            [
                *(_label(r), str(r.conns), num(i.sent), num(i.acked_by_status), num(i.acked), num(i.stored)),
                *(num(i.beyond_acked), num(i.cut_at_stop), num(i.duplicates), num(i.lost)),
                *(f"{i.service_duplicates}/{i.service_rejected}", "; ".join(x for x in (statuses, errors) if x) or "-"),
            ]
        )
    return table(headers, out)


def _ratios(rows: list[PhaseResult]) -> str:
    copies = [r for r in rows if r.kind == "COPY"]
    best_copy = max(copies, key=lambda r: r.rows_per_s, default=None)
    noop = {r.conns: r for r in rows if r.kind == "no-op"}
    out = []
    for r in rows:
        if r.kind == "batch" and best_copy and best_copy.rows_per_s:
            ratio = r.rows_per_s / best_copy.rows_per_s
            what = f"batch {r.workers}w c={r.conns} rows/s ÷ COPY ({best_copy.conns} conn) rows/s"
            out.append([what, f"{ratio:.0%}", f"≥ {TARGET_BATCH_VS_COPY:.0%}", _verdict(ratio >= TARGET_BATCH_VS_COPY)])
        elif r.kind == "single":
            base = noop.get(r.conns)
            if base and base.req_per_s and r.workers == 1:
                ratio = r.req_per_s / base.req_per_s
                what = f"single {r.workers}w c={r.conns} req/s ÷ no-op c={r.conns} req/s"
                out.append(
                    [what, f"{ratio:.0%}", f"≥ {TARGET_SINGLE_VS_NOOP:.0%}", _verdict(ratio >= TARGET_SINGLE_VS_NOOP)]
                )
            out.append(
                [
                    f"single {r.workers}w c={r.conns} p99",
                    f"{r.p99_ms:.1f} ms",
                    f"< {TARGET_P99_MS:g} ms",
                    _verdict(r.p99_ms < TARGET_P99_MS),
                ]
            )
    return table(["ratio", "value", "target", "verdict"], out)


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"
