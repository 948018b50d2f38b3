"""Ingest throughput and latency next to their baselines, all measured in this run.

    .venv/bin/python -m bench.ingest [--duration S] [--quick]

Creates its own database (telemetria_bench_<pid>) in the local cluster, registers a fleet, runs
the real service (`telemetria serve`) and no-op apps under the same uvicorn settings (a bare
Starlette + orjson route: the limit; FastAPI with a pydantic model: what a typical FastAPI app
costs; the service's own app with a no-op ingest route: what its framework and middleware cost),
drives them all with wrk at each concurrency in turn, measures asyncpg COPY into the same
hypertable, looks up every fix each phase sent by its key (every acknowledged one must be stored
exactly once), prints one table, and drops the database. Exits 1 when an integrity check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType

from bench import procs, report
from bench.benchdb import BenchDb, postmaster_pid
from bench.phases import Context, PhaseResult, copy_phase, http_phase
from bench.procs import Server
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
        return Plan(args.duration or 5, 2, (8, 32, 128), (8,), (1,), two_workers=False)
    return Plan(args.duration or 15, 3, (8, 32, 128), (2, 8, 32), (1, 2), two_workers=True)


@dataclass
class Outcome:
    """One run of the bench: its phases and how it ended."""

    plan: Plan
    wrk: str
    db_name: str
    log_dir: Path
    results: list[PhaseResult] = field(default_factory=list)
    duplicate_keys: int = 0  # (vehicle_id, ts) stored more than once in the whole database
    dropped: bool = False

    def failures(self) -> list[str]:
        """Integrity failures, per phase; any of them makes the bench exit 1."""
        out = [f"{r.kind} c={r.conns}: {p}" for r in self.results for p in r.problems]
        if self.duplicate_keys:
            out.append(f"{self.duplicate_keys} (vehicle_id, ts) keys stored more than once")
        return out


class Windows:
    """Hands out the next unused fix-time window."""

    def __init__(self) -> None:
        self._next = datetime.now(UTC).replace(microsecond=0) - FIRST_WINDOW_AGO

    def take(self) -> datetime:
        base, self._next = self._next, self._next + WINDOW
        if self._next > datetime.now(UTC) - timedelta(minutes=10):
            raise RuntimeError("out of fix-time windows: fewer phases or a larger FIRST_WINDOW_AGO")
        return base


def run_single(ctx: Context, plan: Plan, windows: Windows, results: list[PhaseResult]) -> Server:
    """Single fixes at each concurrency, the bare no-op, the service's stack with a no-op route, the FastAPI
    no-op and the service in turn, so that the figures of one concurrency are measured seconds apart.
    Returns the running service."""
    service = procs.start_service(1, ctx.db.dsn, ctx.log_dir / "service-1w.log")
    try:
        noops = [
            (k, procs.start_noop(k, ctx.log_dir / f"noop-{k}.log", ctx.db.dsn)) for k in ("bare", "stack", "fastapi")
        ]
        try:
            # Warm-up: fills the token cache and the pool; its fixes are checked like any phase's.
            results.append(_phase(ctx, service, "warm-up", 1, 32, 1, plan.warmup_s, windows))
            for c in plan.single_conns:
                for kind, noop in noops:
                    results.append(http_phase(ctx, noop, kind, 1, c, 1, plan.duration_s, datetime.now(UTC), WINDOW))
                    _progress(results[-1])
                results.append(_phase(ctx, service, "single", 1, c, 1, plan.duration_s, windows))
                _progress(results[-1])
        finally:
            for _, noop in noops:
                noop.stop()
    except BaseException:
        service.stop()
        raise
    return service


def _phase(
    ctx: Context, server: Server, kind: str, workers: int, conns: int, per: int, duration_s: float, windows: Windows
) -> PhaseResult:
    return http_phase(ctx, server, kind, workers, conns, per, duration_s, windows.take(), WINDOW)


def run_batches(
    ctx: Context, plan: Plan, windows: Windows, server: Server, workers: int, conns: tuple[int, ...]
) -> list[PhaseResult]:
    out = []
    for c in conns:
        out.append(_phase(ctx, server, "batch", workers, c, BATCH_FIXES, plan.duration_s, windows))
        _progress(out[-1])
    return out


def run_all(ctx: Context, plan: Plan, results: list[PhaseResult]) -> None:
    windows = Windows()
    service = run_single(ctx, plan, windows, results)
    try:
        results += run_batches(ctx, plan, windows, service, 1, plan.batch_conns)
    finally:
        service.stop()
    for c in plan.copy_conns:
        results.append(copy_phase(ctx, c, plan.duration_s, windows.take(), WINDOW / (c + 2)))
        _progress(results[-1])
    if plan.two_workers:
        service = procs.start_service(2, ctx.db.dsn, ctx.log_dir / "service-2w.log")
        try:
            results.append(_phase(ctx, service, "warm-up", 2, 32, 1, plan.warmup_s, windows))
            c = plan.single_conns[-1]
            results.append(_phase(ctx, service, "single", 2, c, 1, plan.duration_s, windows))
            _progress(results[-1])
            results += run_batches(ctx, plan, windows, service, 2, plan.batch_conns[1:2])
        finally:
            service.stop()


def _progress(r: PhaseResult) -> None:
    non_2xx = sum(r.non_2xx.values()) + sum(r.socket_errors.values())
    print(
        f"  {r.kind:7} workers={r.workers or '-'} conns={r.conns:<4} {r.req_per_s:9,.0f} 2xx/s "
        f"{r.rows_per_s:10,.0f} rows/s  p50 {r.p50_ms:.1f} ms  p99 {r.p99_ms:.1f} ms"
        + (f"  NON-2XX {non_2xx:,}" if non_2xx else "")
        + (f"  INTEGRITY: {'; '.join(r.problems)}" if r.problems else ""),
        file=sys.stderr,
        flush=True,
    )


def measure(plan: Plan) -> Outcome:
    """Every phase of `plan` in a database of its own, dropped at the end whatever happens."""
    settings = Settings()
    db = BenchDb.for_this_run(settings)
    wrk = ensure_wrk()
    log_dir = Path(tempfile.mkdtemp(prefix="telemetria-bench-"))
    out = Outcome(plan, wrk_version(wrk), db.name, log_dir)
    print(f"bench: database {db.name}, logs in {log_dir}", file=sys.stderr)
    asyncio.run(db.create())
    try:
        ctx = Context.with_fleet(wrk, db, FLEET_SIZE, log_dir, postmaster_pid(settings))
        run_all(ctx, plan, out.results)
        out.duplicate_keys = asyncio.run(db.duplicate_keys())
    finally:
        asyncio.run(db.drop())
    out.dropped = not asyncio.run(db.exists())
    return out


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.ingest", description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, help="seconds per phase (default 15, quick 5)")
    p.add_argument("--quick", action="store_true", help="one batch and one COPY concurrency, no 2-worker run")
    return p


def main(argv: list[str] | None = None) -> int:
    plan = plan_for(parser().parse_args(argv))
    # SIGTERM must unwind through the finally blocks that stop servers and drop the database.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    out = measure(plan)
    print(report.render(out))
    return 1 if out.failures() else 0


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
