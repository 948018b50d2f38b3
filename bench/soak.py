"""Memory under sustained overload: the real service driven beyond capacity, its RSS read from /proc.

    .venv/bin/python -m bench.soak [--minutes 10] [--connections 512] [--quick] [--no-jam] [--fix-step-ms 1]

Creates its own database (telemetria_bench_<pid>), registers a fleet, runs `telemetria serve` with
its default settings (but its detectors keep SOAK_KEEP_FIXES fixes each: see below) and drives it with wrk
posting 1,000-fix batches on many connections, far more than one process decodes and commits. Clients ignore
Retry-After and re-send at once (the worst case). Every `--jam-every` seconds a side connection locks `fixes`
for `--jam-for` seconds, so the writer backs up as well. Prints one row per interval and a verdict; exits 1
when a 5xx other than 503 appears, a 503 lacks Retry-After, memory grows past the bound (by process role: the
service, the detectors with their caches' budget), or the per-key check fails: an
acknowledged fix missing, a key stored twice, or a stored fix no request carried (requests cut off
when wrk stops are reported apart, never netted against losses).

The fixes are late (their days are closed), so the service's rollup refresher recomputes every
vehicle-day each minute from all of that day's fixes. With the default 1 ms between a tracker's
fixes a vehicle-day never fills and the refresher's working set, hence RSS, keeps rising slowly;
with `--fix-step-ms 50` days fill (~70,000 fixes, close to one a second) and RSS levels off.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import FrameType

from bench import procs
from bench.benchdb import BenchDb, Vehicle
from bench.keys import Accounting, account
from bench.phases import settled_count
from bench.table import num
from bench.table import render as table
from bench.wrk import LUA_SCRIPT, WrkResult, ensure_wrk, parse, wrk_version
from telemetria.occurrences.detection.trackcache import FIX_BYTES
from telemetria.settings import Settings

FLEET_SIZE = 200
BATCH_FIXES = 1_000
MIB = 1024 * 1024
# The memory bound: the RSS at the end of the load may be at most GROWTH × the RSS after the first
# interval of load, plus SLACK. The first loaded sample, not the idle start, is the reference: the
# budgets (in-flight bytes, pending rows) are meant to be filled under overload, and what must not
# happen is growth after that.
GROWTH = 1.25
SLACK_MIB = 32
# The detector processes keep the days they analyse (trackcache.py), a cache that fills with the data, not with the
# load: each may grow by its budget, detector_keep_fixes × FIX_BYTES, and no more. The soak's vehicle-days hold
# ~30,000 fixes a minute, so it runs them with a budget its 10 minutes fill several times over (1.5 min quick:
# about twice); the default (8 M fixes, sized for 10,000 vehicles' days, bench.detector) would take longer than the
# run to fill, and its bound would check nothing. The service process itself is held to GROWTH.
SOAK_KEEP_FIXES = 1_000_000
DETECTOR_PROCESSES = Settings().detector_processes
JAM = "LOCK TABLE fixes IN EXCLUSIVE MODE"  # blocks the writer's inserts; reads go on

# fixes.lua as it is, plus: why each 503 was given and whether it carried Retry-After, and a
# "SOAK tick" line of running totals at most once a second, read while wrk runs (one wrk thread).
WRAPPER_LUA = """
dofile("{fixes}")
local base_setup, base_response, base_done = setup, response, done
local soak_threads = {{}}
retry_after, by_budget, by_queue, by_writer = 0, 0, 0, 0
local last_tick = 0

function setup(thread)
  base_setup(thread)
  table.insert(soak_threads, thread)
end

local function tick()
  local codes = {{}}
  for code, n in pairs(statuses) do
    table.insert(codes, code .. ":" .. n)
  end
  io.write(string.format("SOAK tick %d %d %d %d %d %s\\n", accepted, retry_after, by_budget, by_queue,
    by_writer, table.concat(codes, ",")))
  io.flush()
end

function response(status, headers, body)
  base_response(status, headers, body)
  if status == 503 then
    if headers["retry-after"] or headers["Retry-After"] then
      retry_after = retry_after + 1
    end
    if string.find(body, "in progress", 1, true) then
      by_budget = by_budget + 1
    elseif string.find(body, "fixes waiting", 1, true) then
      by_queue = by_queue + 1
    elseif string.find(body, "already waiting", 1, true) then
      by_writer = by_writer + 1
    end
  end
  if os.time() ~= last_tick then
    last_tick = os.time()
    tick()
  end
end

function done(summary, latency, requests)
  base_done(summary, latency, requests)
  local n = {{0, 0, 0, 0}}
  for _, t in ipairs(soak_threads) do
    for i, key in ipairs({{"retry_after", "by_budget", "by_queue", "by_writer"}}) do
      n[i] = n[i] + t:get(key)
    end
  end
  io.write(string.format("SOAK final %d %d %d %d\\n", n[1], n[2], n[3], n[4]))
end
"""


@dataclass(slots=True)
class Totals:
    """Cumulative answers since the load began."""

    statuses: dict[int, int] = field(default_factory=dict)
    acked_fixes: int = 0  # fixes the 2xx bodies say were stored
    retry_after: int = 0  # 503 answers that carried Retry-After
    by_budget: int = 0  # 503 before reading the body: the in-flight budget (requests or body bytes) is spent
    by_queue: int = 0  # 503 before reading the body: the writer's queue is full
    by_writer: int = 0  # 503 after reading and decoding the body: the writer's queue filled meanwhile

    @classmethod
    def from_tick(cls, line: str) -> Totals:
        f = line.split()
        codes = dict(c.split(":") for c in f[7].split(",")) if len(f) > 7 else {}
        return cls({int(c): int(n) for c, n in codes.items()}, *(int(x) for x in f[2:7]))

    @property
    def ok(self) -> int:
        return sum(n for code, n in self.statuses.items() if 200 <= code < 300)

    @property
    def shed(self) -> int:
        return self.statuses.get(503, 0)

    @property
    def other(self) -> dict[int, int]:
        return {c: n for c, n in sorted(self.statuses.items()) if not 200 <= c < 300 and c not in (429, 503)}

    @property
    def bad_5xx(self) -> int:
        return sum(n for code, n in self.other.items() if code >= 500)


class RssWatch:
    """The service tree's RSS, sampled every second while the load runs: the last value and the peak."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.roles = procs.tree_rss_by_role(pid)
        self.last = self.peak = sum(self.roles.values())

    def reset_peak(self) -> None:
        self.peak = self.last

    def sample(self) -> None:
        self.roles = procs.tree_rss_by_role(self.pid)
        self.last = sum(self.roles.values())
        self.peak = max(self.peak, self.last)

    async def run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(1.0)


@dataclass
class Plan:
    minutes: float
    interval_s: float
    connections: int
    jam_every_s: float  # 0: no jams
    jam_for_s: float
    fix_step_ms: int = 1  # time between one tracker's consecutive fixes


def plan_for(args: argparse.Namespace) -> Plan:
    jam_every = 0.0 if args.no_jam else args.jam_every
    if args.quick:
        return Plan(args.minutes or 1.5, 10.0, args.connections, jam_every, args.jam_for, args.fix_step_ms)
    return Plan(args.minutes or 10.0, 60.0, args.connections, jam_every, args.jam_for, args.fix_step_ms)


async def jam(db: BenchDb, every_s: float, for_s: float, stop: asyncio.Event, held: list[float]) -> None:
    """Every `every_s`, hold a lock that stalls every insert into `fixes` for `for_s` seconds."""
    conn = await db.connect(jsonb_codec=False)
    try:
        while True:
            try:
                await asyncio.wait_for(stop.wait(), every_s - for_s)
                return
            except TimeoutError:
                pass
            t0 = time.monotonic()
            async with conn.transaction():
                await conn.execute(JAM)
                await asyncio.sleep(for_s)
            held.append(time.monotonic() - t0)
    finally:
        await conn.close()


class Load:
    """One wrk run for the whole soak; its running totals are read from its output as it goes."""

    def __init__(self, proc: asyncio.subprocess.Process, base: datetime, step: timedelta) -> None:
        self.proc = proc
        self.base, self.step = base, step  # request g's fixes are at base + (g // trackers * 1,000 + j) * step
        self.now = Totals()
        self.lines: list[str] = []

    @classmethod
    async def start(cls, wrk: str, script: Path, url: str, plan: Plan, tokens: Path) -> Load:
        # Fix times start 20 h back, 1 ms apart per tracker: even a million requests stay in the past.
        # wrk builds a new request (the tracker's next fixes) for every attempt, 503s included, so a
        # tracker's fix times advance about 250,000 steps a minute here; further apart than 1 ms they
        # start earlier by twice that, so that they stay in the past too.
        steps = 500_000 * plan.minutes * (plan.fix_step_ms - 1)
        back = timedelta(hours=20) + timedelta(milliseconds=steps)
        base = (datetime.now(UTC) - back).replace(microsecond=0)
        base_ms = int(base.timestamp() * 1000)
        args = [wrk, "-t1", f"-c{plan.connections}", f"-d{round(plan.minutes * 60)}s", "--timeout", "30s"]
        args += ["--latency", "-s", str(script), url, "--", str(tokens), str(BATCH_FIXES), str(base_ms)]
        args += [str(plan.fix_step_ms), "1"]
        pipe = asyncio.subprocess.PIPE
        proc = await asyncio.create_subprocess_exec(*args, stdout=pipe, stderr=pipe)
        return cls(proc, base, timedelta(milliseconds=plan.fix_step_ms))

    async def follow(self) -> None:
        assert self.proc.stdout is not None
        async for raw in self.proc.stdout:
            line = raw.decode()
            if line.startswith("SOAK tick"):
                self.now = Totals.from_tick(line)
            else:
                self.lines.append(line)

    async def finish(self, log: Path) -> tuple[WrkResult, dict[str, str], Totals]:
        """wrk's summary and the final totals, once it has stopped; its output is kept in `log`."""
        _, err_b = await self.proc.communicate()
        out, err = "".join(self.lines), err_b.decode()
        await asyncio.to_thread(log.write_text, out + err)
        final = [line.split() for line in self.lines if line.startswith("SOAK final")]
        if self.proc.returncode != 0 or not final:
            raise RuntimeError(f"wrk failed (exit {self.proc.returncode}), see {log}:\n{err[-2000:]}")
        r = parse(out)
        # Percentiles as wrk prints them (a value in seconds carries a trailing blank).
        latency = dict(re.findall(r"^\s+(50|90|99)%\s+(\S+)\s*$", out, re.MULTILINE))
        return r, latency, Totals(dict(r.statuses), r.accepted, *(int(x) for x in final[0][2:6]))


def row(label: str, rss: int, peak: int | None, t: Totals, stored: int) -> list[str]:
    other = ", ".join(f"{c}: {n}" for c, n in t.other.items()) or "0"
    shed = f"{num(t.shed)} ({num(t.retry_after)})"
    return [
        *(label, num(rss / MIB), "-" if peak is None else num(peak / MIB), num(t.ok), shed, num(t.by_budget)),
        *(num(t.by_queue), num(t.by_writer), num(t.statuses.get(429, 0)), other, num(t.acked_fixes), num(stored)),
    ]


HEADERS = ["time", "RSS MiB", "peak MiB", "2xx", "503 (Retry-After)", "budget", "queue", "late", "429", "other"]
HEADERS += ["fixes acked", "fixes stored"]


async def soak(
    db: BenchDb, fleet: list[Vehicle], server: procs.Server, wrk: str, plan: Plan, tokens: Path, log_dir: Path
) -> int:
    script = log_dir / "soak.lua"
    script.write_text(WRAPPER_LUA.format(fixes=LUA_SCRIPT))
    rss = RssWatch(server.proc.pid)
    start_rss = rss.last
    rows = [row("start", start_rss, None, Totals(), await db.count_fixes())]
    _progress(rows)
    sampler = asyncio.create_task(rss.run())
    stop, held = asyncio.Event(), list[float]()
    jammer = asyncio.create_task(jam(db, plan.jam_every_s, plan.jam_for_s, stop, held)) if plan.jam_every_s else None
    load = await Load.start(wrk, script, server.url, plan, tokens)
    follower = asyncio.create_task(load.follow())
    t0, first = time.monotonic(), dict[str, int]()
    try:
        n = max(1, round(plan.minutes * 60 / plan.interval_s))
        for i in range(1, n + 1):
            rss.reset_peak()
            # The last sample is taken just before wrk stops, still under load.
            await asyncio.sleep(max(0.0, t0 + min(i * plan.interval_s, plan.minutes * 60 - 1) - time.monotonic()))
            end_rss, peak, answers, end = rss.last, rss.peak, load.now, dict(rss.roles)
            first = first or end
            elapsed = time.monotonic() - t0
            label = f"{int(elapsed // 60)}:{round(elapsed % 60):02d}"
            rows.append(row(label, end_rss, peak, answers, await db.count_fixes()))
            _progress(rows)
        await follower
        r, latency, totals = await load.finish(log_dir / "wrk.txt")
    finally:
        stop.set()
        if jammer is not None:
            await jammer
        sampler.cancel()
        if load.proc.returncode is None:
            load.proc.kill()
    await settled_count(db)  # requests cut off by wrk's stop land (or fail); the writer drains
    rss.sample()
    settled_rss = rss.last
    stored = await db.count_fixes()
    rows.append(row("settled", settled_rss, None, totals, stored))
    memory = Memory(start_rss, first, end, settled_rss, SOAK_KEEP_FIXES * FIX_BYTES)
    keys, off = await db.stored_runs(
        load.base, datetime.now(UTC) + timedelta(days=1), load.step, BATCH_FIXES, [v.tracker_id for v in fleet]
    )
    checked = account(
        r.runs, keys, BATCH_FIXES, off_grid_rows=off, unidentified=r.unidentified, miscounted=r.miscounted
    )
    return verdict(plan, rows, totals, r, latency, memory, checked, held)


def _progress(rows: list[list[str]]) -> None:
    print(table(HEADERS, rows).splitlines()[-1], file=sys.stderr, flush=True)


@dataclass(frozen=True)
class Memory:
    start: int  # idle, before the load
    first_by: dict[str, int]  # after the first interval of load, by role (procs.tree_rss_by_role)
    end_by: dict[str, int]  # the last sample under load
    settled: int  # after the load, once the writer has drained
    cache_bytes: int  # a detector process's cache budget (keep × FIX_BYTES)

    @property
    def first(self) -> int:
        return sum(self.first_by.values())

    @property
    def end(self) -> int:
        return sum(self.end_by.values())

    def bound(self, role: str) -> float:
        """A role's bound: the service (and any other process) GROWTH × its first sample; the detectors their first
        sample plus each one's cache budget (with the same slack)."""
        first = self.first_by.get(role, 0)
        if role == "detector":
            return first + self.detectors * self.cache_bytes * GROWTH + SLACK_MIB * MIB
        return first * GROWTH + SLACK_MIB * MIB

    @property
    def detectors(self) -> int:
        return DETECTOR_PROCESSES

    def over(self) -> list[str]:
        """The roles whose end is past their bound, described."""
        return [
            f"{role} {self.end_by.get(role, 0) / MIB:,.0f} MiB > bound {self.bound(role) / MIB:,.0f} MiB"
            for role in sorted({*self.first_by, *self.end_by})
            if self.end_by.get(role, 0) > self.bound(role)
        ]

    def by_role(self) -> str:
        return "; ".join(
            f"{role} {self.first_by.get(role, 0) / MIB:,.0f} → {self.end_by.get(role, 0) / MIB:,.0f} MiB"
            f" (bound {self.bound(role) / MIB:,.0f})"
            for role in sorted({*self.first_by, *self.end_by})
        )


def verdict(
    plan: Plan,
    rows: list[list[str]],
    t: Totals,
    r: WrkResult,
    latency: dict[str, str],
    m: Memory,
    keys: Accounting,
    held: list[float],
) -> int:
    settings = Settings()
    failures = []
    if t.bad_5xx:
        failures.append(f"{t.bad_5xx} 5xx answers other than 503")
    if t.retry_after != t.shed:
        failures.append(f"{t.shed - t.retry_after} 503 answers without Retry-After")
    failures += keys.problems()
    if m.over():
        failures.append("memory grew past the bound: " + ", ".join(m.over()))
    answered = sum(t.statuses.values())
    jams = f"{len(held)} jams of `{JAM}` for {plan.jam_for_s:g} s" if plan.jam_every_s else "no jams"
    errors = ", ".join(f"{k} {v}" for k, v in r.socket_errors.items()) or "none"
    lines = [
        f"telemetria soak   {datetime.now(UTC):%Y-%m-%d %H:%M UTC}   nproc {os.cpu_count()}   {plan.minutes:g} min",
        f"service: `telemetria serve`, 1 worker; in-flight budget {settings.ingest_max_inflight_bytes / MIB:g} MiB /"
        f" {settings.ingest_max_inflight_requests} requests, writer {settings.writer_max_pending_rows:,} pending fixes,"
        f" bodies up to {settings.max_body_bytes / MIB:g} MiB; RSS = the service's process tree",
        f"load: wrk, {plan.connections} connections, {BATCH_FIXES:,}-fix batches (~{BATCH_FIXES * 170 // 1024} KiB),"
        f" re-sent at once (Retry-After ignored); each tracker's fixes {plan.fix_step_ms:,} ms apart; {jams}",
        "counts are cumulative; 503 (Retry-After): all 503 answers (those with the header), then why: before the body"
        " was read, the in-flight budget was spent (budget) or the writer's queue full (queue); after reading and"
        " decoding it, the writer's queue had filled (late)",
        "",
        table(HEADERS, rows),
        "",
        f"answered {num(answered)}: {100 * t.ok / max(1, answered):.0f} % 2xx, {100 * t.shed / max(1, answered):.0f} %"
        f" 503; latency of all answers p50 {latency.get('50')}, p90 {latency.get('90')}, p99 {latency.get('99')},"
        f" max {r.max_ms / 1000:,.1f}s;"
        f" socket errors: {errors}",
        f"by key (tracker, fix time): fixes sent {num(keys.sent)}, acknowledged {num(keys.acked)}, stored"
        f" {num(keys.stored)}; lost {num(keys.lost)}, doubled {num(keys.doubled)}, stored but never sent"
        f" {num(keys.unsent)} (all three must be 0); cut off unanswered when wrk stopped: {num(keys.cut_requests)}"
        f" requests, {num(keys.cut)} fixes, {num(keys.cut_stored)} of them stored; stored after a non-2xx answer"
        f" {num(keys.stored_without_2xx)}",
        f"RSS: start (idle) {m.start / MIB:,.0f} MiB, after the first interval {m.first / MIB:,.0f} MiB, end of load"
        f" {m.end / MIB:,.0f} MiB, settled {m.settled / MIB:,.0f} MiB; by process, first interval → end of load:"
        f" {m.by_role()}; bounds: {GROWTH:g} × first + {SLACK_MIB} MiB, the detectors plus {GROWTH:g} × their caches"
        f" ({DETECTOR_PROCESSES} × {SOAK_KEEP_FIXES:,} fixes × {FIX_BYTES} B)",
        ("PASS" if not failures else "FAIL: " + "; ".join(failures))
        + f" (RSS end/first {m.end / max(1, m.first):.2f}, end/start {m.end / max(1, m.start):.2f};"
        f" 5xx other than 503: {t.bad_5xx})",
    ]
    print("\n".join(lines))
    return 1 if failures else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, help="how long the load runs (default 10, quick 1.5)")
    p.add_argument("--connections", type=int, default=512, help="wrk connections (default 512)")
    p.add_argument("--quick", action="store_true", help="1.5 minutes, a row every 10 s instead of every minute")
    p.add_argument("--jam-every", type=float, default=30.0, help="seconds between DB lock jams (default 30)")
    p.add_argument("--jam-for", type=float, default=5.0, help="seconds each jam holds the lock (default 5)")
    p.add_argument("--no-jam", action="store_true", help="no DB-side back-pressure")
    p.add_argument(
        "--fix-step-ms", type=int, default=1, help="ms between one tracker's fixes (default 1: vehicle-days never fill)"
    )
    args = p.parse_args(argv)
    plan = plan_for(args)
    signal.signal(signal.SIGTERM, _exit_on_signal)  # unwind: stop the service, drop the database

    settings = Settings()
    db = BenchDb.for_this_run(settings)
    wrk = ensure_wrk()
    log_dir = Path(tempfile.mkdtemp(prefix="telemetria-soak-"))
    print(f"soak: database {db.name}, {wrk_version(wrk)}, logs in {log_dir}", file=sys.stderr)
    asyncio.run(db.create())
    try:
        fleet = asyncio.run(db.register_fleet(FLEET_SIZE))
        tokens = log_dir / "tokens.txt"
        tokens.write_text("".join(v.token + "\n" for v in fleet))
        keep = {"TELEMETRIA_DETECTOR_KEEP_FIXES": str(SOAK_KEEP_FIXES)}
        server = procs.start_service(1, db.dsn, log_dir / "service.log", keep)
        try:
            return asyncio.run(soak(db, fleet, server, wrk, plan, tokens, log_dir))
        finally:
            server.stop()
    finally:
        asyncio.run(db.drop())


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
