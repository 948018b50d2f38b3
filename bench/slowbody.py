"""Ingest while slow connections are held: valid single fixes beside the N = 0 baseline of the same run.

    .venv/bin/python -m bench.slowbody [--holds 0,4,50,200] [--duration S] [--quick]

Creates its own database (telemetria_bench_<pid>) in the local cluster, registers a fleet, runs the real
service (`telemetria serve`, one process, on 127.0.0.1) and, for each N, holds N slow connections against it
while wrk posts valid single fixes to /api/v1/fixes (32 connections) for S seconds. Two kinds of slow
connection, each N at a time: the attack of issue 13 (`POST /osmand` headers declaring a 16 MiB body), and
OsmAnd bodies within the OsmAnd cap (8 KiB declared), which the service has to wait for. Each drips a byte
every 5 s, and when the service answers or closes it, it is opened again a second later, as an attacker
keeping N connections would. Prints one table (req/s, p50, p99 and non-2xx of the valid fixes; what the slow
connections got) and drops the database; exits 1 if a valid fix was not answered 200, or was lost.

Bounded: N at most 500, S at most 60 s, phases run one after the other; everything on the loopback.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

from bench import procs
from bench.benchdb import BenchDb, postmaster_pid
from bench.ingest import WINDOW, Windows
from bench.phases import Context, PhaseResult, http_phase
from bench.table import ms, num, render
from bench.wrk import ensure_wrk, wrk_version
from telemetria.settings import Settings

FLEET_SIZE = 200
WRK_CONNS = 32
MAX_HOLDS = 500
MAX_DURATION_S = 60.0
DRIP_S = 5.0  # one byte this often on each slow connection
REOPEN_S = 1.0  # a slow connection the service answered or closed is opened again after this long
SETTLE_S = 1.5  # between opening the slow connections and measuring
KINDS = {  # the slow connections: what each sends before it starts dripping
    "16 MiB": b"POST /osmand HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 16777216\r\n\r\n",
    "8 KiB": b"POST /osmand HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 8192\r\n\r\n",
}


@dataclass
class HoldStats:
    opened: int = 0
    answers: Counter[str] = field(default_factory=Counter)  # "413", "408", "closed", "reset", "refused"
    open_samples: list[int] = field(default_factory=list)  # connections open, sampled every 0.5 s


class Holder:
    """`n` slow connections to 127.0.0.1:`port` that send `head`, held from a thread of their own until stop()."""

    def __init__(self, port: int, n: int, head: bytes) -> None:
        self.port, self.n, self.head = port, n, head
        self.stats = HoldStats()
        self.open = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), name="slow-holder", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def stop(self) -> HoldStats:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        return self.stats

    async def _main(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        tasks = [asyncio.create_task(self._hold(self.head)) for _ in range(self.n)]
        tasks.append(asyncio.create_task(self._sample()))
        self._ready.set()
        await self._stop.wait()
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _sample(self) -> None:
        while True:
            self.stats.open_samples.append(self.open)
            await asyncio.sleep(0.5)

    async def _hold(self, head: bytes) -> None:
        while True:
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                self.stats.answers["refused"] += 1
                await asyncio.sleep(REOPEN_S)
                continue
            self.stats.opened += 1
            self.open += 1
            try:
                self.stats.answers[await _drip_until_answered(reader, writer, head)] += 1
            finally:
                self.open -= 1
                writer.close()
            await asyncio.sleep(REOPEN_S)


async def _drip_until_answered(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, head: bytes) -> str:
    """Send the headers, then a byte every DRIP_S; what the service did: its status, or how it closed."""
    try:
        writer.write(head)
        while True:
            try:
                answer = await asyncio.wait_for(reader.read(64), DRIP_S)
            except TimeoutError:
                writer.write(b" ")
                continue
            if answer.startswith(b"HTTP/1.1 "):
                return answer[9:12].decode()
            return "closed"
    except OSError:
        return "reset"


@dataclass(frozen=True)
class Phase:
    holds: int
    kind: str
    result: PhaseResult
    stats: HoldStats


def run_phases(ctx: Context, holds: list[int], duration_s: float) -> list[Phase]:
    windows = Windows()
    server = procs.start_service(1, ctx.db.dsn, ctx.log_dir / "service.log")
    port = int(server.url.rsplit(":", 1)[1])
    out: list[Phase] = []
    try:
        http_phase(ctx, server, "warm-up", 1, WRK_CONNS, 1, 3, windows.take(), WINDOW)  # the token cache, the pool
        # The baseline runs first and again last: the difference between the two is the run's noise.
        plan = [(0, ""), *((n, kind) for kind in KINDS for n in holds if n), (0, "")]
        for n, kind in plan:
            holder = Holder(port, n, KINDS.get(kind, b""))
            holder.start()
            time.sleep(SETTLE_S if n else 0)
            holder.stats.open_samples.clear()  # held connections are counted while measuring only
            result = http_phase(ctx, server, "single", 1, WRK_CONNS, 1, duration_s, windows.take(), WINDOW)
            out.append(Phase(n, kind, result, holder.stop()))
            _progress(out[-1])
    finally:
        server.stop()
    return out


def _progress(p: Phase) -> None:
    r = p.result
    print(
        f"  slow={p.holds:<4} {p.kind:6} {r.rows_per_s:9,.0f} stored/s  p50 {r.p50_ms:.1f} ms  p99 {r.p99_ms:.1f} ms  "
        f"non-2xx {sum(r.non_2xx.values())}  slow answers {dict(p.stats.answers)}",
        file=sys.stderr,
        flush=True,
    )


def report(phases: list[Phase], duration_s: float, wrk: str, db_name: str, dropped: bool, log_dir: Path) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    base = next((p.result for p in phases if p.holds == 0), None)
    headers = ["slow conns", "stored/s", "vs N=0", "p50 ms", "p99 ms", "p99 vs N=0", "non-2xx", "lost"]
    headers += ["held min/avg", "slow opened", "slow got"]
    rows = []
    for i, p in enumerate(phases):
        r, s = p.result, p.stats
        label = f"{p.holds} × {p.kind}" if p.holds else ("0 (again)" if i == len(phases) - 1 else "0")
        lost = _lost(r)
        samples = s.open_samples or [0]
        got = ", ".join(f"{k} {v:,}" for k, v in sorted(s.answers.items())) or "-"
        rows.append(
            [
                *(label, num(r.rows_per_s), _ratio(r.rows_per_s, base.rows_per_s if base else 0)),
                *(ms(r.p50_ms), ms(r.p99_ms), _ratio(r.p99_ms, base.p99_ms if base else 0)),
                *(num(sum(r.non_2xx.values()) + sum(r.socket_errors.values())), num(lost)),
                *(f"{min(samples)}/{sum(samples) / len(samples):.0f}", num(s.opened), got),
            ]
        )
    return "\n".join(
        [
            f"telemetria slow-body bench   {now}   nproc {os.cpu_count()}   load average {os.getloadavg()[0]:.1f}"
            f"   {wrk} (1 thread)   {duration_s:g} s per phase",
            f"valid single fixes to /api/v1/fixes over {WRK_CONNS} connections, while N slow connections are held:",
            "`POST /osmand` declaring 16 MiB (the attack of issue 13) or 8 KiB (within the OsmAnd cap); a byte",
            f"every {DRIP_S:g} s; each opened again {REOPEN_S:g} s after the service answers or closes it.",
            "Service: 1 process, default settings.",
            "",
            render(headers, rows),
            "",
            "stored/s = valid fixes answered 200 (one per request) a second; p50/p99 over every answer, 503s included.",
            "vs N=0: against the first baseline; the last row repeats it, so the two baselines show the run's noise.",
            "held = slow connections open (sampled every 0.5 s); slow got = how the service ended them, by status",
            "(413: refused at once for its size; 408: cut off at its body deadline); lost = acked but not stored.",
            "",
            f"cleanup: database {db_name} {'dropped' if dropped else 'NOT dropped'}; server stopped; logs in {log_dir}",
        ]
    )


def _ratio(x: float, base: float) -> str:
    return f"{x / base:.0%}" if base else "-"


def parse_holds(text: str) -> list[int]:
    holds = [int(h) for h in text.split(",") if h.strip()]
    if not holds or any(not 0 <= h <= MAX_HOLDS for h in holds):
        raise argparse.ArgumentTypeError(f"slow connections: 0 to {MAX_HOLDS} each")
    return [0, *(h for h in holds if h)]  # the N = 0 baseline always runs, first (and last)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.slowbody", description=__doc__.split("\n\n")[0])
    p.add_argument("--holds", type=parse_holds, default=[0, 4, 50, 200], help="slow connections per phase")
    p.add_argument("--duration", type=float, help="seconds per phase (default 10, quick 5; at most 60)")
    p.add_argument("--quick", action="store_true", help="5 s phases")
    args = p.parse_args(argv)
    duration_s = min(args.duration or (5.0 if args.quick else 10.0), MAX_DURATION_S)
    signal.signal(signal.SIGTERM, _exit_on_signal)  # unwind through the finally blocks that clean up

    settings = Settings()
    db = BenchDb.for_this_run(settings)
    wrk = ensure_wrk()
    log_dir = Path(tempfile.mkdtemp(prefix="telemetria-slowbody-"))
    print(f"bench: database {db.name}, logs in {log_dir}", file=sys.stderr)
    asyncio.run(db.create())
    try:
        ctx = Context.with_fleet(wrk, db, FLEET_SIZE, log_dir, postmaster_pid(settings))
        phases = run_phases(ctx, args.holds, duration_s)
    finally:
        asyncio.run(db.drop())
    dropped = not asyncio.run(db.exists())
    print(report(phases, duration_s, wrk_version(wrk), db.name, dropped, log_dir))
    failed = [p for p in phases if p.result.non_2xx or p.result.socket_errors or p.result.problems]
    if failed:
        problems = "; ".join(f"slow={p.holds} {p.kind}: {q}" for p in failed for q in p.result.problems)
        print(f"FAILED: valid fixes refused, or not stored once, in {len(failed)} phase(s) {problems}", file=sys.stderr)
    return 1 if failed else 0


def _lost(r: PhaseResult) -> int:
    return r.integrity.lost if r.integrity else 0


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
