"""Ingest throughput and latency next to their baselines, all measured in this run.

    .venv/bin/python -m bench.ingest [--duration S] [--quick]

Creates its own database (telemetria_bench_<pid>) in the local cluster, registers a fleet, runs
the real service (`telemetria serve`) and a no-op FastAPI app under the same uvicorn settings,
drives both with wrk, measures asyncpg COPY into the same hypertable, checks that every
acknowledged fix is stored exactly once, prints one table, and drops the database.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import tempfile
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType

from bench import procs, report
from bench.benchdb import BenchDb, postmaster_pid
from bench.phases import Context, PhaseResult, copy_phase, http_phase
from bench.wrk import ensure_wrk, wrk_version
from telemetria.settings import Settings

FLEET_SIZE = 200
BATCH_FIXES = 1_000
# Every phase writes its fixes into a time window of its own, all in the last four hours: the
# service refuses fixes more than 5 min ahead or beyond retention, and windows never collide.
WINDOW = timedelta(minutes=15)
FIRST_WINDOW_AGO = timedelta(hours=4)


@dataclass(frozen=True)
class Plan:
    duration_s: float
    warmup_s: float
    single_conns: tuple[int, ...]
    batch_conns: tuple[int, ...]
    copy_conns: tuple[int, ...]
    two_workers: bool


def plan_for(args: argparse.Namespace) -> Plan:
    if args.quick:
        return Plan(args.duration or 5, 2, (32,), (8,), (1,), two_workers=False)
    return Plan(args.duration or 15, 3, (8, 32, 128), (2, 8, 32), (1, 2), two_workers=True)


class Windows:
    """Hands out the next unused fix-time window."""

    def __init__(self) -> None:
        self._next = datetime.now(UTC).replace(microsecond=0) - FIRST_WINDOW_AGO

    def take(self) -> datetime:
        base, self._next = self._next, self._next + WINDOW
        if self._next > datetime.now(UTC) - timedelta(minutes=10):
            raise RuntimeError("out of fix-time windows: fewer phases or a larger FIRST_WINDOW_AGO")
        return base


def run_noop(ctx: Context, plan: Plan, results: list[PhaseResult]) -> None:
    server = procs.start_noop(ctx.log_dir / "noop.log")
    try:
        for c in plan.single_conns:
            results.append(http_phase(ctx, server, "no-op", 1, c, 1, plan.duration_s, datetime.now(UTC)))
            _progress(results[-1])
    finally:
        server.stop()


def run_service(
    ctx: Context, plan: Plan, windows: Windows, workers: int, single: tuple[int, ...], batch: tuple[int, ...]
) -> list[PhaseResult]:
    out: list[PhaseResult] = []
    server = procs.start_service(workers, ctx.db.dsn, ctx.log_dir / f"service-{workers}w.log")
    try:
        # Warm-up: fills the token cache and the pool; its fixes are checked like any phase's.
        out.append(http_phase(ctx, server, "warm-up", workers, 32, 1, plan.warmup_s, windows.take()))
        for c in single:
            out.append(http_phase(ctx, server, "single", workers, c, 1, plan.duration_s, windows.take()))
            _progress(out[-1])
        for c in batch:
            out.append(http_phase(ctx, server, "batch", workers, c, BATCH_FIXES, plan.duration_s, windows.take()))
            _progress(out[-1])
    finally:
        server.stop()
    return out


def run_all(ctx: Context, plan: Plan) -> list[PhaseResult]:
    windows = Windows()
    results: list[PhaseResult] = []
    run_noop(ctx, plan, results)
    results += run_service(ctx, plan, windows, 1, plan.single_conns, plan.batch_conns)
    for c in plan.copy_conns:
        results.append(copy_phase(ctx, c, plan.duration_s, windows.take(), WINDOW / (c + 2)))
        _progress(results[-1])
    if plan.two_workers:
        results += run_service(ctx, plan, windows, 2, plan.single_conns[-1:], plan.batch_conns[1:2])
    return results


def _progress(r: PhaseResult) -> None:
    print(
        f"  {r.kind:7} workers={r.workers or '-'} conns={r.conns:<4} {r.req_per_s:9,.0f} req/s "
        f"{r.rows_per_s:10,.0f} rows/s  p50 {r.p50_ms:.1f} ms  p99 {r.p99_ms:.1f} ms",
        file=sys.stderr,
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.ingest", description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, help="seconds per phase (default 15, quick 5)")
    p.add_argument("--quick", action="store_true", help="one concurrency per kind, no 2-worker run")
    args = p.parse_args(argv)
    plan = plan_for(args)
    # SIGTERM must unwind through the finally blocks that stop servers and drop the database.
    signal.signal(signal.SIGTERM, _exit_on_signal)

    settings = Settings()
    db = BenchDb.for_this_run(settings)
    wrk = ensure_wrk()
    log_dir = Path(tempfile.mkdtemp(prefix="telemetria-bench-"))
    print(f"bench: database {db.name}, logs in {log_dir}", file=sys.stderr)
    asyncio.run(db.create())
    try:
        fleet = asyncio.run(db.register_fleet(FLEET_SIZE))
        tokens_file = log_dir / "tokens.txt"
        tokens_file.write_text("".join(v.token + "\n" for v in fleet))
        ctx = Context(wrk, db, fleet, tokens_file, log_dir, postmaster_pid(settings))
        results = run_all(ctx, plan)
        duplicate_keys = asyncio.run(db.duplicate_keys())
    finally:
        asyncio.run(db.drop())
    dropped = not asyncio.run(db.exists())
    print(report.render(results, plan.duration_s, wrk_version(wrk), duplicate_keys, db.name, dropped, log_dir))
    return 0


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
