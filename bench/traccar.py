"""The Traccar gateway beside /api/v1/fixes, on the same service, fleet and database, in the same run.

    .venv/bin/python -m bench.traccar [--duration S] [--quick]

Creates its own database (telemetria_bench_<pid>) in the local cluster, registers a fleet and one Traccar
gateway, runs the real service (`telemetria serve`, one worker) and drives it with wrk at each concurrency
in turn: single fixes to /api/v1/fixes (bench/fixes.lua), then the same track as Traccar's forwarded bodies to
/api/v1/traccar/positions (bench/traccar.lua), seconds apart. Every acknowledged fix of both is looked up by its
key (stored exactly once), one table is printed, and the database is dropped. Exits 1 on an integrity failure.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from types import FrameType

from bench import procs
from bench.benchdb import BenchDb, postmaster_pid
from bench.ingest import WINDOW, Windows
from bench.phases import STEP, Context, CpuWatch, PhaseResult, _account, _within, http_phase, settled_count
from bench.procs import Server
from bench.table import ms, num, pct
from bench.table import render as table
from bench.wrk import ensure_wrk, run_wrk
from telemetria.settings import Settings
from telemetria.traccar import gateways

FLEET_SIZE = 200
TRACCAR_LUA = Path(__file__).with_name("traccar.lua")


@dataclass
class Outcome:
    db_name: str
    log_dir: Path
    results: list[PhaseResult] = field(default_factory=list)
    duplicate_keys: int = 0

    def failures(self) -> list[str]:
        out = [f"{r.kind} c={r.conns}: {p}" for r in self.results for p in r.problems]
        if self.duplicate_keys:
            out.append(f"{self.duplicate_keys} (vehicle_id, ts) keys stored more than once")
        return out


def traccar_phase(ctx: Context, server: Server, gateway_file: Path, conns: int, duration_s: float, base: datetime):
    """As phases.http_phase for one fix a request, with Traccar's bodies, every fix checked by key."""
    watch = CpuWatch(server.proc.pid, ctx.postmaster)
    r = run_wrk(
        ctx.wrk, server.url, connections=conns, duration_s=duration_s, tokens_file=gateway_file,
        fixes_per_request=1, base_ms=int(base.timestamp() * 1000), step_ms=STEP // timedelta(milliseconds=1),
        log=ctx.log_dir / f"wrk-traccar-c{conns}.txt", script=TRACCAR_LUA,
    )  # fmt: skip
    cpu = watch.stop(r.cpu_s)
    result = PhaseResult("traccar", 1, conns, 1, r.requests, r.ok, r.duration_s, r.p50_ms, r.p99_ms, r.ok)
    result.non_2xx, result.socket_errors, result.cpu = r.non_2xx, r.socket_errors, cpu
    _within(r, len(ctx.fleet), 1, WINDOW)
    asyncio.run(settled_count(ctx.db))
    result.integrity = asyncio.run(_account(ctx, r.runs, 1, base, WINDOW, r))
    result.rows = result.integrity.stored_acked
    return result


async def _add_gateway(db: BenchDb) -> str:
    conn = await db.connect()
    try:
        return str((await gateways.add_gateway(conn, "bench"))["token"])
    finally:
        await conn.close()


def measure(conns: tuple[int, ...], duration_s: float, warmup_s: float) -> Outcome:
    settings = Settings()
    db = BenchDb.for_this_run(settings)
    wrk = ensure_wrk()
    log_dir = Path(tempfile.mkdtemp(prefix="telemetria-bench-traccar-"))
    out = Outcome(db.name, log_dir)
    print(f"bench: database {db.name}, logs in {log_dir}", file=sys.stderr)
    asyncio.run(db.create())
    try:
        ctx = Context.with_fleet(wrk, db, FLEET_SIZE, log_dir, postmaster_pid(settings))
        token = asyncio.run(_add_gateway(db))
        gateway_file = log_dir / "gateway.txt"  # the fleet's order: tracker i is BENCH{i:05d} (benchdb.py)
        gateway_file.write_text("".join(f"{token} BENCH{i:05d}\n" for i in range(len(ctx.fleet))))
        windows = Windows()
        service = procs.start_service(1, db.dsn, log_dir / "service-1w.log")
        try:
            out.results.append(http_phase(ctx, service, "warm-up", 1, 32, 1, warmup_s, windows.take(), WINDOW))
            out.results.append(traccar_phase(ctx, service, gateway_file, 32, warmup_s, windows.take()))
            out.results[-1].kind = "warm-up traccar"
            for c in conns:
                out.results.append(http_phase(ctx, service, "fixes", 1, c, 1, duration_s, windows.take(), WINDOW))
                _progress(out.results[-1])
                out.results.append(traccar_phase(ctx, service, gateway_file, c, duration_s, windows.take()))
                _progress(out.results[-1])
        finally:
            service.stop()
        out.duplicate_keys = asyncio.run(db.duplicate_keys())
    finally:
        asyncio.run(db.drop())
    return out


def _progress(r: PhaseResult) -> None:
    print(f"  {r.kind:8} conns={r.conns:<4} {r.req_per_s:9,.0f} 2xx/s  p50 {r.p50_ms:.1f} ms  p99 {r.p99_ms:.1f} ms",
          file=sys.stderr, flush=True)  # fmt: skip


def render(out: Outcome) -> str:
    rows = []
    fixes = {r.conns: r for r in out.results if r.kind == "fixes"}
    for r in out.results:
        if r.kind.startswith("warm-up"):
            continue
        base = fixes.get(r.conns)
        ratio = f"{r.req_per_s / base.req_per_s:.2f}x" if r.kind == "traccar" and base and base.req_per_s else "-"
        non_2xx = sum(r.non_2xx.values()) + sum(r.socket_errors.values())
        cpu = r.cpu.server_pct if r.cpu else None
        path = "/api/v1/traccar/positions" if r.kind == "traccar" else "/api/v1/fixes"
        rows.append([path, str(r.conns), num(r.req_per_s), ratio, ms(r.p50_ms), ms(r.p99_ms), num(non_2xx),
                     pct(cpu), "ok" if not r.problems else "FAILED"])  # fmt: skip
    head = ["endpoint (1 fix a request)", "conns", "2xx/s", "vs fixes", "p50 ms", "p99 ms", "non-2xx", "server CPU",
            "stored once"]  # fmt: skip
    lines = [table(head, rows), ""]
    lines += [f"integrity: {f}" for f in out.failures()] or ["integrity: every acknowledged fix stored exactly once"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.traccar", description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, help="seconds per phase (default 15, quick 5)")
    p.add_argument("--quick", action="store_true", help="concurrencies 8 and 32 only")
    args = p.parse_args(argv)
    conns = (8, 32) if args.quick else (8, 32, 128)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    out = measure(conns, args.duration or (5 if args.quick else 15), 2 if args.quick else 3)
    print(render(out))
    return 1 if out.failures() else 0


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
