"""One measured phase: load, CPU watched on all sides, and every fix it sent accounted for by key."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from bench import procs
from bench.benchdb import BenchDb, Vehicle
from bench.copy_ceiling import ROWS_PER_COPY, CopyResult, CopyRun
from bench.keys import Accounting, Run, account
from bench.wrk import WrkResult, run_wrk

NOOPS = ("bare", "stack", "fastapi")  # phases against bench/noop_app.py: nothing stored, nothing to check
STEP = timedelta(milliseconds=1)  # between a tracker's consecutive fixes, in every phase


@dataclass(slots=True)
class Cpu:
    server_pct: float | None = None  # of one core; uvicorn and its workers
    db_pct: float | None = None  # the local cluster's postmaster and all its backends
    client_pct: float | None = None  # wrk, or this process for COPY
    machine_pct: float | None = None  # all cores busy, out of nproc × 100 %


@dataclass(slots=True)
class PhaseResult:
    kind: str  # "bare", "stack" or "fastapi" (bench/noop_app.py), "single", "batch", "COPY", "warm-up"
    workers: int | None
    conns: int
    fixes_per_req: int
    requests: int  # answered, whatever the status (statements for COPY)
    ok: int  # answered 2xx (statements committed for COPY)
    duration_s: float
    p50_ms: float  # of all answers: wrk's histogram does not split by status (see `clean`)
    p99_ms: float
    rows: int  # fixes acknowledged by a 2xx and found stored (rows committed for COPY; 2xx for a no-op)
    non_2xx: dict[int, int] = field(default_factory=dict)
    socket_errors: dict[str, int] = field(default_factory=dict)
    cpu: Cpu = field(default_factory=Cpu)
    integrity: Accounting | None = None

    @property
    def req_per_s(self) -> float:
        """2xx answers a second; nothing else counts as throughput."""
        return self.ok / self.duration_s if self.duration_s else 0.0

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.duration_s if self.duration_s else 0.0

    @property
    def clean(self) -> bool:
        """Every answer a 2xx and no socket errors: only then are its latencies those of successes."""
        return not self.non_2xx and not self.socket_errors

    @property
    def problems(self) -> list[str]:
        return self.integrity.problems() if self.integrity else []


@dataclass
class Context:
    wrk: str
    db: BenchDb
    fleet: list[Vehicle]
    tokens_file: Path
    log_dir: Path
    postmaster: int | None

    @classmethod
    def with_fleet(cls, wrk: str, db: BenchDb, size: int, log_dir: Path, postmaster: int | None) -> Context:
        """Register `size` vehicles with trackers in `db` (created) and write their tokens for wrk's script."""
        fleet = asyncio.run(db.register_fleet(size))
        tokens_file = log_dir / "tokens.txt"
        tokens_file.write_text("".join(v.token + "\n" for v in fleet))
        return cls(wrk, db, fleet, tokens_file, log_dir, postmaster)


class CpuWatch:
    """CPU seconds of the server tree, the database tree and the whole machine over a phase."""

    def __init__(self, server_pid: int | None, postmaster: int | None) -> None:
        self._server, self._pg = server_pid, postmaster
        self._t0 = time.monotonic()
        self._srv0 = procs.tree_cpu(server_pid) if server_pid else {}
        self._pg0 = procs.tree_cpu(postmaster) if postmaster else {}
        self._m0 = procs.machine_busy()

    def stop(self, client_cpu_s: float) -> Cpu:
        wall = time.monotonic() - self._t0
        m1 = procs.machine_busy()
        busy, total = m1[0] - self._m0[0], m1[1] - self._m0[1]
        cpu = Cpu(client_pct=100 * client_cpu_s / wall, machine_pct=100 * busy / total * _nproc() if total else None)
        if self._server:
            cpu.server_pct = 100 * procs.cpu_delta(self._srv0, procs.tree_cpu(self._server)) / wall
        if self._pg:
            cpu.db_pct = 100 * procs.cpu_delta(self._pg0, procs.tree_cpu(self._pg)) / wall
        return cpu


def _nproc() -> int:
    return os.cpu_count() or 1


def http_phase(
    ctx: Context,
    server: procs.Server,
    kind: str,
    workers: int | None,
    conns: int,
    fixes_per_req: int,
    duration_s: float,
    base: datetime,
    span: timedelta,
) -> PhaseResult:
    """wrk against `server`, its fixes at `base` + steps; unless a no-op, every fix is looked up by key in
    [base, base + span), a window no other phase writes to."""
    stores = kind not in NOOPS
    watch = CpuWatch(server.proc.pid, ctx.postmaster)
    r = run_wrk(
        ctx.wrk,
        server.url,
        connections=conns,
        duration_s=duration_s,
        tokens_file=ctx.tokens_file,
        fixes_per_request=fixes_per_req,
        base_ms=int(base.timestamp() * 1000),
        step_ms=STEP // timedelta(milliseconds=1),
        log=ctx.log_dir / f"wrk-{kind}-{workers}w-c{conns}.txt",
    )
    cpu = watch.stop(r.cpu_s)
    result = PhaseResult(
        kind, workers, conns, fixes_per_req, r.requests, r.ok, r.duration_s, r.p50_ms, r.p99_ms, r.ok * fixes_per_req
    )
    result.non_2xx, result.socket_errors, result.cpu = r.non_2xx, r.socket_errors, cpu
    if stores:
        _within(r, len(ctx.fleet), fixes_per_req, span)
        asyncio.run(settled_count(ctx.db))
        result.integrity = asyncio.run(_account(ctx, r.runs, fixes_per_req, base, span, r))
        result.rows = result.integrity.stored_acked
    return result


def _within(r: WrkResult, trackers: int, per: int, span: timedelta) -> None:
    """The fixes of the last request built must lie inside the phase's window, or keys could collide."""
    last_g = r.runs[-1].end - 1 if r.runs else 0
    if (last_g // trackers + 1) * per * STEP > span:
        raise RuntimeError(f"phase ran past its {span} window of fix times: shorten it or widen WINDOW")


async def _account(
    ctx: Context, runs: list[Run], per: int, base: datetime, span: timedelta, r: WrkResult | None = None
) -> Accounting:
    ids = [v.tracker_id for v in ctx.fleet]
    stored, off_grid = await ctx.db.stored_runs(base, base + span, STEP, per, ids)
    extra = {"unidentified": r.unidentified, "miscounted": r.miscounted} if r else {}
    return account(runs, stored, per, off_grid_rows=off_grid, **extra)


async def settled_count(db: BenchDb, timeout_s: float = 15.0) -> int:
    """Rows in `fixes` once requests cut off by wrk's stop have finished landing (or failed)."""
    last = await db.count_fixes()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        await asyncio.sleep(0.5)
        now = await db.count_fixes()
        if now == last:
            return now
        last = now
    return last


def copy_phase(ctx: Context, conns: int, duration_s: float, base: datetime, window: timedelta) -> PhaseResult:
    """asyncpg COPY of the same rows into the same hypertable; every row checked by key, as for HTTP.

    Row r of a COPY window is vehicle r % n at window start + (r // n) ms: request number g = r of one fix.
    """
    c, cpu = asyncio.run(_timed_copy(ctx, conns, duration_s, base, window))
    statements = c.timed_rows // ROWS_PER_COPY
    result = PhaseResult(
        "COPY", None, conns, ROWS_PER_COPY, statements, statements, c.duration_s, c.p50_ms, c.p99_ms, c.timed_rows
    )
    result.cpu = cpu
    grids = [(base, c.calibration_rows)] + [(base + (i + 1) * window, n) for i, n in enumerate(c.committed_per_conn)]
    result.integrity = sum(
        (asyncio.run(_account(ctx, [Run(0, n, 200)] if n else [], 1, start, window)) for start, n in grids),
        Accounting(),
    )
    return result


async def _timed_copy(
    ctx: Context, conns: int, duration_s: float, base: datetime, window: timedelta
) -> tuple[CopyResult, Cpu]:
    run = await CopyRun.prepare(ctx.db, ctx.fleet, base, conns, duration_s, window)
    try:
        # CPU is watched over the timed COPY only, not the row building before it.
        watch = CpuWatch(None, ctx.postmaster)
        t0 = time.process_time()
        result = await run.run()
        return result, watch.stop(time.process_time() - t0)
    finally:
        await run.close()
