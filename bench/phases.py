"""One measured phase: load, CPU watched on all sides, and stored rows counted before and after."""

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
from bench.wrk import run_wrk


@dataclass(slots=True)
class Integrity:
    sent: int  # fixes in requests (or COPY statements) started
    acked_by_status: int  # 2xx answers × fixes per request
    acked: int  # fixes the 2xx bodies say were stored
    cut_at_stop: int  # fixes in requests the load generator started but never saw answered
    stored: int  # rows added to `fixes` during the phase
    service_duplicates: int = 0  # fixes 2xx bodies called duplicates (none are: all are distinct)
    service_rejected: int = 0

    @property
    def beyond_acked(self) -> int:
        return self.stored - self.acked

    @property
    def duplicates(self) -> int:
        """Rows no request accounts for: beyond the acknowledged plus those cut off unanswered."""
        return max(0, self.stored - self.acked - self.cut_at_stop)

    @property
    def lost(self) -> int:
        return max(0, self.acked - self.stored)


@dataclass(slots=True)
class Cpu:
    server_pct: float | None = None  # of one core; uvicorn and its workers
    db_pct: float | None = None  # the local cluster's postmaster and all its backends
    client_pct: float | None = None  # wrk, or this process for COPY
    machine_pct: float | None = None  # all cores busy, out of nproc × 100 %


@dataclass(slots=True)
class PhaseResult:
    kind: str  # "no-op", "single", "batch", "COPY", "warm-up"
    workers: int | None
    conns: int
    fixes_per_req: int
    requests: int
    duration_s: float
    p50_ms: float
    p99_ms: float
    rows: int  # fixes acknowledged (rows committed for COPY)
    non_2xx: dict[int, int] = field(default_factory=dict)
    socket_errors: dict[str, int] = field(default_factory=dict)
    cpu: Cpu = field(default_factory=Cpu)
    integrity: Integrity | None = None

    @property
    def req_per_s(self) -> float:
        return self.requests / self.duration_s if self.duration_s else 0.0

    @property
    def rows_per_s(self) -> float:
        return self.rows / self.duration_s if self.duration_s else 0.0


@dataclass
class Context:
    wrk: str
    db: BenchDb
    fleet: list[Vehicle]
    tokens_file: Path
    log_dir: Path
    postmaster: int | None


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
) -> PhaseResult:
    """wrk against `server`; rows in `fixes` are counted around it unless the server is the no-op."""
    stores = kind != "no-op"
    before = asyncio.run(ctx.db.count_fixes()) if stores else 0
    watch = CpuWatch(server.proc.pid, ctx.postmaster)
    r = run_wrk(
        ctx.wrk,
        server.url,
        connections=conns,
        duration_s=duration_s,
        tokens_file=ctx.tokens_file,
        fixes_per_request=fixes_per_req,
        base_ms=int(base.timestamp() * 1000),
        step_ms=1,
        log=ctx.log_dir / f"wrk-{kind}-{workers}w-c{conns}.txt",
    )
    cpu = watch.stop(r.cpu_s)
    result = PhaseResult(
        kind, workers, conns, fixes_per_req, r.requests, r.duration_s, r.p50_ms, r.p99_ms, r.accepted, r.non_2xx
    )
    result.socket_errors, result.cpu = r.socket_errors, cpu
    if stores:
        stored = asyncio.run(_settled_count(ctx.db)) - before
        cut = (r.generated - r.requests) * fixes_per_req
        result.integrity = Integrity(
            r.generated * fixes_per_req, r.ok * fixes_per_req, r.accepted, cut, stored, r.duplicates, r.rejected
        )
    return result


async def _settled_count(db: BenchDb, timeout_s: float = 15.0) -> int:
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
    """asyncpg COPY of the same rows into the same hypertable; rows counted around it."""
    before = asyncio.run(ctx.db.count_fixes())
    c, cpu = asyncio.run(_timed_copy(ctx, conns, duration_s, base, window))
    stored = asyncio.run(ctx.db.count_fixes()) - before
    result = PhaseResult("COPY", None, conns, ROWS_PER_COPY, 0, c.duration_s, c.p50_ms, c.p99_ms, c.timed_rows)
    result.requests, result.cpu = c.timed_rows // ROWS_PER_COPY, cpu
    result.integrity = Integrity(c.rows_sent, c.rows_committed, c.rows_committed, 0, stored)
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
