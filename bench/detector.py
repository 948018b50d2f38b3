"""The occurrence detector under sustained live ingest: its round time and lag, and what it costs ingest.

    .venv/bin/python -m bench.detector [--vehicles N] [--interval S] [--duration S] [--reps N] [--quick]
                                       [--nice N] [--processes N] [--history H] [--phases paced,saturated]
                                       [--warmup S]

Creates its own database (telemetria_bench_<pid>) in the local cluster, registers a fleet (by default 10,000
vehicles reporting every 30 s: 333 fixes/s), routes with scheduled stops around now assigned to them, and each
vehicle's last 2 h 30 min of fixes (`--history`: a window analyses the whole local day it touches, so a vehicle
that drove all morning costs more than one that just started). Then, in turns (off, on, off, on),
runs the real service (`telemetria serve`) with the detector off and on (detector_interval_s 0 / 10):
- paced: every vehicle posts one fix per interval, live (fix time = now), over keep-alive connections; the
  figures are the rate reached, the answer latency, the service's and the database's CPU, and (detector on) the
  rounds' time (detector_state), the oldest waiting dirty mark sampled every second (the lag), and the detector
  processes' resident memory (the most sampled: what they keep, detector_keep_fixes, grows with the day);
- saturated: the same posts as fast as 32 connections go, for the ingest throughput on vs off.
A paced phase with the detector on is measured after `--warmup` seconds (150) of the same load: a detector process
computes every vehicle's day whole once after it starts, nothing being kept yet (a once-per-start cost).
Prints one table; drops the database. Exits 1 when the detector's lag passed 60 s in a paced phase.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import math
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg
import orjson

from bench import procs
from bench.benchdb import BenchDb, Vehicle, postmaster_pid
from bench.phases import Context, http_phase
from bench.table import num, render
from bench.wrk import ensure_wrk
from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings

JARU_LAT, JARU_LON = -10.43, -62.47
ROUTES = 50  # shared by the fleet: the registry's size is not what is measured
HISTORY = [timedelta(hours=2, minutes=30)]  # --history: each vehicle's fixes before the phases
PROCESSES = [2]  # --processes (setting detector_processes)
HISTORY_ENDS = timedelta(minutes=40)  # before registration; the saturated phases' fix times lie after it
LAG_LIMIT_S = 60.0
STEADY_S = 60  # a phase's first seconds take the backlog its start finds (every vehicle dirty at once)
# A paced phase with the detector on is driven this long before it is measured: a detector process computes every
# vehicle's day whole once after it starts (nothing is kept yet), in its first two rounds (the first takes the
# vehicles marked at its start, the second the rest); --warmup.
WARMUP = [150.0]
NICE = [10]  # --nice
WRK_WINDOW = timedelta(minutes=2)  # each saturated phase's fix times (wrk's: 1 ms apart per tracker)
WRK_BASE = [datetime.now(UTC)]  # set at registration: between the history's end and the paced phases' live fixes
_WRK_WINDOWS = itertools.count()  # the next unused WRK_WINDOW, from WRK_BASE on


@dataclass
class Phase:
    name: str
    detector: bool
    sent: int = 0
    ok: int = 0
    elapsed_s: float = 0.0
    latencies_ms: list[float] = field(default_factory=list)
    service_cpu_s: float = 0.0
    db_cpu_s: float = 0.0
    detector_cpu_s: float = 0.0  # of the service's, the detector process's share
    p50: float | None = None  # wrk's, when it drove the phase
    p99: float | None = None
    rounds: list[tuple[float, int]] = field(default_factory=list)  # (seconds, windows) of each round seen
    lags_s: list[float] = field(default_factory=list)
    detector_rss_mb: float = 0.0  # the detector processes' resident memory together, the most sampled

    warmed: bool = False  # the detector ran WARMUP before the phase was measured

    @property
    def steady_lags_s(self) -> list[float]:
        """The lags of a warmed phase; of another, those after its first STEADY_S seconds."""
        return self.lags_s if self.warmed else self.lags_s[STEADY_S:]

    @property
    def rate(self) -> float:
        return self.ok / self.elapsed_s if self.elapsed_s else 0.0

    def pct_ms(self, q: float) -> float:
        if self.p50 is not None and self.p99 is not None:
            return self.p50 if q == 0.5 else self.p99
        if not self.latencies_ms:
            return math.nan
        xs = sorted(self.latencies_ms)
        return xs[min(len(xs) - 1, int(q * len(xs)))]


def position(i: int, t: float) -> tuple[float, float]:
    """Vehicle i at epoch t: along its route's line east of Jaru at ~40 km/h, back and forth."""
    route = i % ROUTES
    along = (t / 3600 * 40_000) % 40_000  # m along a 40 km line, then again
    return JARU_LAT + route * 0.002, JARU_LON + along / 109_500


def fix_body(i: int, t: float, speed: float = 40.0) -> bytes:
    lat, lon = position(i, t)
    ts = datetime.fromtimestamp(t, UTC).isoformat(timespec="milliseconds")
    return orjson.dumps({"ts": ts, "lat": round(lat, 6), "lon": round(lon, 6), "speed_kmh": speed, "valid": True})


class Conn:
    """One keep-alive HTTP/1.1 connection, built by hand: the load generator must cost far less than the service."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, host: str):
        self.reader, self.writer, self.host = reader, writer, host

    @classmethod
    async def open(cls, host: str, port: int) -> Conn:
        r, w = await asyncio.open_connection(host, port)
        return cls(r, w, f"{host}:{port}")

    async def post(self, token: str, body: bytes) -> int:
        head = (
            f"POST /api/v1/fixes HTTP/1.1\r\nHost: {self.host}\r\nAuthorization: Bearer {token}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n\r\n"
        ).encode()
        self.writer.write(head + body)
        status = int((await self.reader.readline()).split()[1])
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        await self.reader.readexactly(length)
        return status

    def close(self) -> None:
        self.writer.close()


async def register(db: BenchDb, n: int) -> list[Vehicle]:
    """The fleet, ROUTES routes with stops scheduled around now assigned on every weekday, and HISTORY of fixes."""
    fleet = await db.register_fleet(n)
    conn = await db.connect()
    try:
        now = datetime.now(UTC)
        # Whole seconds: wrk writes fix times in whole ms from it, and the integrity check's grid starts at it.
        WRK_BASE[0] = (now - HISTORY_ENDS + timedelta(minutes=1)).replace(microsecond=0)
        here = now.astimezone(LOCAL_TZ)
        for r in range(ROUTES):
            lat = JARU_LAT + r * 0.002
            line = {"type": "LineString", "coordinates": [[JARU_LON, lat], [JARU_LON + 40_000 / 109_500, lat]]}
            rid = await conn.fetchval(
                "INSERT INTO routes (code, name, school_year, geometry, length_m) VALUES ($1, $2, $3, $4, 40000)"
                " RETURNING id",
                f"B{r:03d}",
                f"Bench {r}",
                here.year,
                line,
            )
            for seq, frac in enumerate((0.0, 0.25, 0.5, 0.75, 1.0), 1):
                at = (here - timedelta(hours=1) + timedelta(hours=2) * frac).time().replace(microsecond=0)
                kind = "school" if seq == 3 else "garage" if seq in (1, 5) else "boarding"
                await conn.execute(
                    "INSERT INTO route_stops (route_id, seq, name, lat, lon, kind, scheduled_time)"
                    " VALUES ($1, $2, $3, $4, $5, $6, $7)",
                    rid, seq, f"Parada {seq}", lat, JARU_LON + 40_000 / 109_500 * frac, kind, at,
                )  # fmt: skip
            ids = [v.vehicle_id for v in fleet[r::ROUTES]]
            await conn.execute(
                "INSERT INTO route_assignments (route_id, vehicle_id, valid_from, weekdays)"
                " SELECT $1, v, $2, '{1,2,3,4,5,6,7}' FROM unnest($3::int[]) AS v",
                rid, here.date() - timedelta(days=30), ids,
            )  # fmt: skip
        t1 = (now - HISTORY_ENDS).timestamp()
        records = []
        for i, v in enumerate(fleet):
            t = t1 - HISTORY[0].total_seconds() + (i % 30)
            while t < t1:
                lat, lon = position(i, t)
                ts = datetime.fromtimestamp(t, UTC)
                records.append((v.vehicle_id, v.tracker_id, ts, lat, lon, 40.0, True, ts))
                t += 30
            if len(records) > 100_000:
                await _copy(conn, records)
                records = []
        await _copy(conn, records)
        # The detector starts clean: no marks, and yesterday already rescanned (else its first round would rescan
        # every vehicle's yesterday, a one-off of the first deployment, not the steady state measured here).
        await conn.execute("SELECT refresh_latest_fixes(NULL); UPDATE latest_fixes SET dirty_from = NULL")
        await conn.execute("UPDATE detector_state SET rescanned_through = $1", here.date())
    finally:
        await conn.close()
    return fleet


async def _copy(conn: asyncpg.Connection, records: Sequence[tuple[object, ...]]) -> None:
    cols = ["vehicle_id", "tracker_id", "ts", "lat", "lon", "speed_kmh", "valid", "received_at"]
    await conn.copy_records_to_table("fixes", records=records, columns=cols)


async def sample(db: BenchDb, phase: Phase, stop: asyncio.Event, service_pid: int) -> None:
    """Every second: how long the oldest change not yet recomputed has waited, each new round recorded, and the
    detector processes' resident memory."""
    conn = await db.connect()
    last = await conn.fetchval("SELECT last_round_at FROM detector_state")  # an earlier phase's round is not this one's
    try:
        while not stop.is_set():
            row = await conn.fetchrow(
                "SELECT (SELECT extract(epoch FROM now() - min(dirty_since)) FROM latest_fixes"
                " WHERE dirty_from IS NOT NULL) AS lag, last_round_at, last_round_s, last_round_windows"
                " FROM detector_state"
            )
            if phase.detector:
                phase.lags_s.append(float(row["lag"] or 0.0))
                if row["last_round_at"] is not None and row["last_round_at"] != last:
                    last = row["last_round_at"]
                    phase.rounds.append((row["last_round_s"], row["last_round_windows"]))
                rss = await asyncio.to_thread(detector_rss, service_pid)
                phase.detector_rss_mb = max(phase.detector_rss_mb, rss / 2**20)
            try:
                await asyncio.wait_for(stop.wait(), 1.0)
            except TimeoutError:
                pass
    finally:
        await conn.close()


async def drive(url: str, fleet: list[Vehicle], phase: Phase, rate: float | None, duration_s: float) -> None:
    """Post fixes for duration_s: paced at `rate` fixes/s (None: as fast as 32 connections go)."""
    host, port = url.removeprefix("http://").split(":")
    n_conns = 32
    conns = [await Conn.open(host, int(port)) for _ in range(n_conns)]
    idle: asyncio.Queue[Conn] = asyncio.Queue()
    for c in conns:
        idle.put_nowait(c)
    t0 = time.monotonic()
    last_t: dict[int, float] = {}

    async def one(c: Conn, i: int) -> None:
        t = max(time.time(), last_t.get(i, 0.0) + 0.001)  # a vehicle's fix times never repeat
        last_t[i] = t
        start = time.perf_counter()
        try:
            status = await c.post(fleet[i].token, fix_body(i, t))
        finally:
            idle.put_nowait(c)
        phase.sent += 1
        if status == 200:
            phase.ok += 1
            phase.latencies_ms.append((time.perf_counter() - start) * 1000)

    tasks: set[asyncio.Task[None]] = set()
    k = 0
    while (now := time.monotonic() - t0) < duration_s:
        if rate is not None:
            due = k / rate
            if due > now:
                await asyncio.sleep(due - now)
        c = await idle.get()
        task = asyncio.create_task(one(c, k % len(fleet)))
        tasks.add(task)
        task.add_done_callback(tasks.discard)
        k += 1
    await asyncio.gather(*tasks)
    phase.elapsed_s = time.monotonic() - t0
    for c in conns:
        c.close()


def detector_cpu_s(tree: dict[int, float]) -> float:
    """CPU seconds of the detector process(es) among a process tree's."""
    return sum(cpu for pid, cpu in tree.items() if _is_detector(pid))


def detector_rss(root: int) -> int:
    """Resident bytes of the detector process(es) under `root`."""
    return sum(procs.rss(pid) for pid in procs.tree_cpu(root) if _is_detector(pid))


def _is_detector(pid: int) -> bool:
    try:
        return b"occurrences.detector" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


async def run_phase(
    db: BenchDb, fleet: list[Vehicle], name: str, detector: bool, rate: float | None, duration_s: float, log: Path,
    wrk: str,
) -> Phase:  # fmt: skip
    """One phase on a fresh service: paced by this process at `rate`, or (None) saturated by wrk."""
    phase = Phase(name, detector)
    os.environ["TELEMETRIA_DETECTOR_INTERVAL_S"] = "10" if detector else "0"
    os.environ["TELEMETRIA_DETECTOR_NICE"] = str(NICE[0])
    os.environ["TELEMETRIA_DETECTOR_PROCESSES"] = str(PROCESSES[0])
    os.environ["TELEMETRIA_ROLLUP_INTERVAL_S"] = "0"
    # Each phase starts clean: no change left waiting by the phase before (the detector was off, or another one).
    # Before the service starts: marks cleared under a running detector would hide fixes from what it keeps.
    conn = await db.connect()
    try:
        await conn.execute("UPDATE latest_fixes SET dirty_from = NULL, dirty_since = NULL WHERE dirty_from IS NOT NULL")
    finally:
        await conn.close()
    server = procs.start_service(1, db.dsn, log / f"{name}-{'on' if detector else 'off'}.log")
    stop = asyncio.Event()
    pg = postmaster_pid(Settings())
    try:
        if detector and rate is not None and WARMUP[0] > 0:
            await drive(server.url, fleet, Phase(name + "-warmup", detector), rate, WARMUP[0])
            phase.warmed = True
        cpu0, db0 = procs.tree_cpu(server.proc.pid), procs.tree_cpu(pg) if pg else {}
        sampler = asyncio.create_task(sample(db, phase, stop, server.proc.pid))
        if rate is not None:
            await drive(server.url, fleet, phase, rate, duration_s)
        else:
            tokens = log / "tokens.txt"
            await asyncio.to_thread(tokens.write_text, "".join(v.token + "\n" for v in fleet))
            ctx = Context(wrk, db, fleet, tokens, log, pg)
            base = WRK_BASE[0] + WRK_WINDOW * next(_WRK_WINDOWS)
            r = await asyncio.to_thread(http_phase, ctx, server, "single", 1, 32, 1, duration_s, base, WRK_WINDOW)
            phase.sent, phase.ok, phase.elapsed_s = r.requests, r.ok, r.duration_s
            phase.p50, phase.p99 = r.p50_ms, r.p99_ms
            if r.problems:
                print(f"{name}: {r.problems}", file=sys.stderr)
        stop.set()
        await sampler
        if phase.detector:  # the lag second by second, and the rounds seen, to look at beside the service's log
            lags = log / f"{name}-lags.txt"
            rounds = "".join(f"round {s:.1f} s, {w} windows\n" for s, w in phase.rounds)
            await asyncio.to_thread(lags.write_text, "".join(f"{x:.1f}\n" for x in phase.lags_s) + rounds)
        cpu1 = procs.tree_cpu(server.proc.pid)
        phase.service_cpu_s = procs.cpu_delta(cpu0, cpu1)
        phase.detector_cpu_s = detector_cpu_s(cpu1) - detector_cpu_s(cpu0)
        phase.db_cpu_s = procs.cpu_delta(db0, procs.tree_cpu(pg)) if pg else math.nan
    finally:
        server.stop()
    return phase


def table(phases: list[Phase]) -> str:
    rows = []
    for p in phases:
        rounds = [r[0] for r in p.rounds]
        rows.append(
            [
                p.name,
                "on" if p.detector else "off",
                num(p.rate),
                num(p.pct_ms(0.5), 1),
                num(p.pct_ms(0.99), 1),
                num(p.service_cpu_s / p.elapsed_s * 100 if p.elapsed_s else 0),
                num(p.detector_cpu_s / p.elapsed_s * 100 if p.elapsed_s else 0) if p.detector else "",
                num(p.db_cpu_s / p.elapsed_s * 100 if p.elapsed_s else 0),
                str(len(rounds)) if p.detector else "",
                num(statistics.median(rounds), 1) if rounds else "",
                num(max(rounds), 1) if rounds else "",
                num(statistics.median(r[1] for r in p.rounds)) if p.rounds else "",
                num(statistics.median(p.lags_s), 1) if p.lags_s else "",
                num(max(p.lags_s), 1) if p.lags_s else "",
                num(max(p.steady_lags_s), 1) if p.steady_lags_s else "",
                num(p.detector_rss_mb) if p.detector else "",
            ]
        )
    headers = ["phase", "detector", "fixes/s", "p50 ms", "p99 ms", "service CPU %", "of it detector %", "db CPU %",
               "rounds",
               "round s (median)", "round s (max)", "windows/round",
               "oldest waiting s (median)", "(max)", "(max, steady)", "detector RSS MB (max)"]  # fmt: skip
    return render(headers, rows)


def compare(phases: list[Phase], kind: str) -> str:
    off = [p.rate for p in phases if p.name.startswith(kind) and not p.detector]
    on = [p.rate for p in phases if p.name.startswith(kind) and p.detector]
    if not off or not on:
        return ""
    drop = (1 - statistics.mean(on) / statistics.mean(off)) * 100
    return f"{kind}: {num(statistics.mean(off))} fixes/s off, {num(statistics.mean(on))} on: {drop:+.1f} % drop"


async def main(args: argparse.Namespace) -> int:
    n = args.vehicles or (1_000 if args.quick else 10_000)
    duration = args.duration or (30 if args.quick else 60)
    rate = n / args.interval
    NICE[0] = args.nice
    HISTORY[0] = timedelta(hours=args.history)
    PROCESSES[0] = args.processes
    WARMUP[0] = args.warmup
    wrk = ensure_wrk()
    db = BenchDb.for_this_run(Settings())
    log = Path(tempfile.mkdtemp(prefix="bench-detector-"))
    await db.create()
    try:
        t = time.perf_counter()
        fleet = await register(db, n)
        print(f"fleet of {n} vehicles, {ROUTES} routes, {HISTORY[0]} of fixes each: {time.perf_counter() - t:.0f} s",
              file=sys.stderr)  # fmt: skip
        phases = []
        for rep in range(args.reps):
            for detector in (False, True) if "paced" in args.phases else ():
                name = f"paced-{rep + 1}"
                phases.append(await run_phase(db, fleet, name, detector, rate, duration, log, wrk))
                print(table(phases[-1:]), file=sys.stderr)
            for detector in (False, True) if "saturated" in args.phases else ():
                name = f"saturated-{rep + 1}"
                phases.append(await run_phase(db, fleet, name, detector, None, duration / 2, log, wrk))
                print(table(phases[-1:]), file=sys.stderr)
    finally:
        await db.drop()
    print(f"bench.detector: {n} vehicles every {args.interval:g} s ({rate:.0f} fixes/s), {duration} s per paced phase")
    print(table(phases))
    print(compare(phases, "paced"))
    print(compare(phases, "saturated"))
    worst = max((lag for p in phases for lag in p.lags_s), default=0.0)
    paced = [p for p in phases if p.name.startswith("paced") and p.detector]
    steady = max((lag for p in paced for lag in p.steady_lags_s), default=math.inf if paced else 0.0)
    print(f"lag: the oldest change waiting for the detector waited at most {worst:.1f} s; in paced phases (after"
          f" {WARMUP[0]:.0f} s of warm-up), {steady:.1f} s (target: 60 s)")  # fmt: skip
    print(f"logs: {log}")
    return 1 if steady > LAG_LIMIT_S else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--vehicles", type=int)
    parser.add_argument("--interval", type=float, default=30.0, help="seconds between a vehicle's fixes")
    parser.add_argument("--duration", type=float, help="seconds per paced phase (saturated: half)")
    parser.add_argument("--reps", type=int, default=2)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--nice", type=int, default=10, help="the detector process's niceness (setting detector_nice)")
    parser.add_argument("--processes", type=int, default=2, help="detector processes (setting detector_processes)")
    parser.add_argument("--phases", type=lambda x: x.split(","), default=["paced", "saturated"],
                        help="which kinds of phase to run, comma-separated: paced,saturated")  # fmt: skip
    parser.add_argument("--warmup", type=float, default=150.0,
                        help="seconds a paced phase with the detector on is driven before it is measured")  # fmt: skip
    parser.add_argument("--history", type=float, default=2.5, help="hours of fixes each vehicle has before the phases")
    sys.exit(asyncio.run(main(parser.parse_args())))
