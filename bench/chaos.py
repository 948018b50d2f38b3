"""Crash safety under sustained load: the service SIGKILLed and PostgreSQL restarted, nothing lost.

    .venv/bin/python -m bench.chaos [--duration S] [--trackers N] [--kills K]
                                    [--pg-restarts fast,immediate] [--quick]

Starts a throw-away PostgreSQL cluster of its own (restarting it disturbs nobody else), runs
`telemetria serve` against it on a fixed port and drives a simulated fleet at it (a fix a second
per tracker, sped up, over HTTP with the trackers' own retry and backoff). Each scenario has a
fleet of its own and K faults at random moments (seeded): the whole service (supervisor and
workers) SIGKILLed and started again, or PostgreSQL stopped with `fast` or `immediate` shutdown
and started again. Then the fleet stops, the trackers' buffers drain, and what was sent,
acknowledged and stored is compared key by key (tracker, fix time). One row per scenario; exits
1 if a fix was acknowledged but not stored (lost), stored twice, stored but never sent, rejected
by the server, dropped by a tracker (a 4xx, or a full buffer) or still pending in a tracker's
buffer after the drain (a service that never recovers would leave them all there), or a request
was answered with a status other than 2xx, 503 or 429.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import asyncpg

from bench import procs
from bench.benchdb import BenchDb
from bench.table import num, render
from telemetria.ops.localdb import LocalDb
from telemetria.settings import Settings
from telemetria.sim.demo import ensure_fleet
from telemetria.sim.outbox import Key, KeyLedger, fix_key
from telemetria.sim.runner import FleetStats, run_fleet

STORED_KEYS = """
SELECT t.unique_id, f.ts FROM fixes f JOIN trackers t ON t.id = f.tracker_id WHERE t.unique_id = ANY($1::text[])"""
DOUBLED_KEYS = """
SELECT count(*) FROM (
    SELECT 1 FROM fixes f JOIN trackers t ON t.id = f.tracker_id WHERE t.unique_id = ANY($1::text[])
    GROUP BY f.vehicle_id, f.ts HAVING count(*) > 1) d"""
FAULTS = {"kill": "service SIGKILL", "fast": "PostgreSQL fast", "immediate": "PostgreSQL immediate"}
PREFIXES = {"kill": "KIL", "fast": "PGF", "immediate": "PGI"}
PG_DOWN_S = 1.5  # how long PostgreSQL stays stopped at each restart
DRAIN_S = 60.0  # how long trackers may keep retrying their buffers once the load stops


async def stored_keys(dsn: str, unique_ids: list[str]) -> tuple[list[Key], int]:
    """Every stored fix of these trackers as a key (repeats kept), and the (vehicle, ts) keys stored twice."""
    conn = await asyncpg.connect(dsn)
    try:
        rows = await conn.fetch(STORED_KEYS, unique_ids)
        doubled = int(await conn.fetchval(DOUBLED_KEYS, unique_ids))
    finally:
        await conn.close()
    return [fix_key(r["unique_id"], r["ts"]) for r in rows], doubled


@dataclass(frozen=True)
class Plan:
    duration_s: float
    trackers: int
    speedup: float
    faults: int  # per scenario
    pg_modes: tuple[str, ...]
    workers: int
    seed: int


class Service:
    """`telemetria serve` on one port for the whole run, so the fleet finds it again after a kill."""

    def __init__(self, dsn: str, workers: int, log: Path) -> None:
        self.port, self.workers, self.log = procs.free_port(), workers, log
        self.env = {**os.environ, "TELEMETRIA_DATABASE_URL": dsn, "TELEMETRIA_LOG_LEVEL": "warning"}
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        cmd = [str(procs.VENV_BIN / "telemetria"), "serve", "--host", "127.0.0.1", "--port", str(self.port)]
        with self.log.open("ab") as out:  # a session of its own: one killpg reaches every worker
            self.proc = subprocess.Popen(
                [*cmd, "--workers", str(self.workers)],
                cwd=procs.ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        procs.wait_ready(procs.Server("service", self.proc, self.url, self.log), 30)

    def kill(self) -> None:
        """SIGKILL to the supervisor and every worker at once: no graceful anything."""
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def stop(self) -> None:
        if self.proc is not None:
            procs.Server("service", self.proc, self.url, self.log).stop()


@dataclass
class Row:
    scenario: str
    faults: int
    stats: FleetStats
    ledger: KeyLedger
    stored: set[Key]
    doubled: int  # (vehicle, ts) keys stored more than once, counted by the database
    acked_per_s: float  # while the faults came

    @property
    def lost(self) -> int:
        return len(self.ledger.acked - self.stored)

    @property
    def unsent(self) -> int:
        return len(self.stored - self.ledger.sent)

    @property
    def without_2xx(self) -> int:
        """Stored by a request that got no 2xx: answered 'duplicate' on its retry, or never acknowledged."""
        return self.ledger.stored_unanswered + len(self.stored - self.ledger.acked)

    @property
    def odd_statuses(self) -> int:
        by = self.stats.by_status
        return sum(n for s, n in by.items() if s.isdigit() and not (s.startswith("2") or s in ("503", "429")))

    def problems(self) -> list[str]:
        """Why this scenario fails; empty when every fix the fleet made was acknowledged and stored exactly once."""
        s = self.stats
        checks = [
            (self.lost, "acknowledged but not stored"),
            (self.doubled, "keys stored twice"),
            (self.unsent, "stored but never sent"),
            (self.odd_statuses, "answers other than 2xx, 503 and 429"),
            (s.rejected, "fixes rejected by the server"),
            (s.dropped, "fixes dropped by trackers"),
            (s.pending, "fixes still pending after the drain"),
        ]
        return [f"{n:,} {what}" for n, what in checks if n]

    @property
    def failed(self) -> bool:
        return bool(self.problems())


async def faults(kind: str, n: int, plan: Plan, service: Service, cluster: LocalDb, rng: random.Random) -> None:
    """n faults of one kind, each at a random moment of its own slice of the load."""
    start = time.monotonic()
    for i in range(n):
        at = start + plan.duration_s / n * (i + rng.uniform(0.2, 0.7))
        await asyncio.sleep(max(0.0, at - time.monotonic()))
        if kind == "kill":
            service.kill()
            await asyncio.to_thread(service.start)
        else:
            await asyncio.to_thread(cluster.stop, kind)
            await asyncio.sleep(PG_DOWN_S)
            await asyncio.to_thread(cluster.start)
        print(f"  {FAULTS[kind]} {i + 1}/{n} at {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)


async def warmed_up(ledger: KeyLedger, trackers: int, fleet: asyncio.Task[FleetStats], limit_s: float = 60) -> None:
    """Until most trackers have posted: simulating their first runs holds the GIL a while (~80 ms a tracker).

    Not all: a tracker that starts inside a signal-loss window posts nothing for minutes.
    """
    for _ in range(int(limit_s / 0.5)):
        if len({k[0] for k in ledger.sent}) >= 0.8 * trackers or fleet.done():
            return
        await asyncio.sleep(0.5)


async def run_scenario(kind: str, plan: Plan, db: BenchDb, service: Service, cluster: LocalDb, data: Path) -> Row:
    conn = await asyncpg.connect(db.dsn)
    try:
        settings = Settings(database_url=db.dsn, data_dir=data)
        creds = await ensure_fleet(conn, settings, plan.trackers, prefix=PREFIXES[kind])
    finally:
        await conn.close()
    ledger, stats, stop = KeyLedger(), FleetStats(), asyncio.Event()
    fleet = asyncio.create_task(
        run_fleet(
            service.url,
            creds,
            interval_s=1,
            seed=plan.seed,
            speedup=plan.speedup,
            stats=stats,
            stop=stop,
            drain_s=DRAIN_S,
            ledger=ledger,
        )
    )
    t_start = time.monotonic()
    try:
        await warmed_up(ledger, len(creds), fleet)
        t0, acked0 = time.monotonic(), stats.acknowledged
        await faults(kind, plan.faults, plan, service, cluster, random.Random(f"{plan.seed}-{kind}"))
        await asyncio.sleep(max(0.0, t0 + plan.duration_s - time.monotonic()))
    finally:
        stop.set()
    t_stop = time.monotonic()
    rate = (stats.acknowledged - acked0) / (t_stop - t0)
    await fleet
    took = f"warm-up {t0 - t_start:.1f} s, load {t_stop - t0:.1f} s, drain {time.monotonic() - t_stop:.1f} s"
    print(f"  {took}\n  {stats.summary()}", file=sys.stderr, flush=True)
    stored, doubled = await stored_keys(db.dsn, [u for u, _ in creds])
    doubled += len(stored) - len(set(stored))
    return Row(FAULTS[kind], plan.faults, stats, ledger, set(stored), doubled, rate)


def table(rows: list[Row]) -> str:
    headers = ["scenario", "faults", "sent", "acked", "stored", "no 2xx", "dup", "lost", "unsent"]
    headers += ["503", "conn err", "other", "rejected", "dropped", "retries", "left", "acked/s"]
    out = []
    for r in rows:
        s = r.stats
        conn_errors = sum(n for k, n in s.by_status.items() if not k.isdigit())
        counts = [len(r.ledger.sent), len(r.ledger.acked), len(r.stored), r.without_2xx, r.doubled, r.lost]
        counts += [r.unsent, s.by_status.get("503", 0), conn_errors, r.odd_statuses, s.rejected, s.dropped]
        counts += [s.retries, s.pending]
        out.append([r.scenario, str(r.faults), *map(num, counts), num(r.acked_per_s)])
    return render(headers, out)


LEGEND = """\
sent/acked/stored: distinct fixes (tracker, fix time) posted, answered with a 2xx, in the database.
no 2xx: stored by a request that got no 2xx (in flight at a fault: no answer, or a 503 when
PostgreSQL went away between committing and confirming), acknowledged only as a duplicate on retry.
dup: keys stored twice (must be 0). lost: acknowledged but not stored (must be 0). unsent: stored
but never posted (must be 0). 503, conn err (no answer), other (any other non-2xx but 429; must be
0): requests. rejected: fixes the server refused in a 2xx answer; dropped: fixes trackers gave up
(a 4xx, or pushed out of a full buffer); left: fixes still buffered after the drain (all three must
be 0: every fix the fleet made must end up acknowledged). retries: requests re-sending a batch.
acked/s: while the faults came; trackers back off after failures, so part of the backlog lands in
the drain after the load."""


async def run_all(plan: Plan, db: BenchDb, cluster: LocalDb, data: Path, log_dir: Path) -> list[Row]:
    await db.create()
    service = Service(db.dsn, plan.workers, log_dir / "service.log")
    await asyncio.to_thread(service.start)
    rows = []
    try:
        for kind in ("kill", *plan.pg_modes):
            print(f"bench: {FAULTS[kind]}, {plan.trackers} trackers for {plan.duration_s:g} s", file=sys.stderr)
            rows.append(await run_scenario(kind, plan, db, service, cluster, data))
    finally:
        service.stop()
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.chaos", description=__doc__.split("\n\n")[0])
    p.add_argument("--duration", type=float, help="seconds of load per scenario (default 60, quick 10)")
    p.add_argument("--trackers", type=int, help="simulated trackers per scenario (default 200, quick 40)")
    p.add_argument("--kills", type=int, help="faults per scenario (default 5, quick 2)")
    p.add_argument("--pg-restarts", default="fast,immediate", help="PostgreSQL stop modes to try, comma-separated")
    p.add_argument("--speedup", type=float, help="simulated seconds per wall second (default 3, quick 8)")
    p.add_argument("--workers", type=int, default=2, help="service processes (default 2)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--quick", action="store_true", help="about a minute")
    args = p.parse_args(argv)
    modes = tuple(m for m in args.pg_restarts.split(",") if m)
    if bad := [m for m in modes if m not in ("fast", "immediate")]:
        p.error(f"unknown PostgreSQL stop mode: {', '.join(bad)}")
    q = args.quick
    plan = Plan(
        args.duration or (10 if q else 60),
        args.trackers or (40 if q else 200),
        args.speedup or (8.0 if q else 3.0),
        args.kills if args.kills is not None else (2 if q else 5),  # PostgreSQL restarts as many
        modes,
        args.workers,
        args.seed,
    )
    signal.signal(signal.SIGTERM, _exit_on_signal)  # unwind through the finally blocks below

    # Under /tmp itself: as root the cluster runs as `postgres`, which must reach the directory.
    data = Path(tempfile.mkdtemp(prefix="telemetria-chaos-", dir="/tmp"))
    os.chmod(data, 0o755)
    settings = Settings(database_url=None, data_dir=data, db_port=procs.free_port())
    cluster = LocalDb.from_settings(settings)
    db = BenchDb.for_this_run(settings)
    log_dir = Path(tempfile.mkdtemp(prefix="telemetria-chaos-logs-"))
    print(f"bench: own cluster in {data} (port {settings.db_port}), logs in {log_dir}", file=sys.stderr)
    try:
        cluster.start()
        rows = asyncio.run(run_all(plan, db, cluster, data, log_dir))
    finally:
        cluster.stop("immediate")
        shutil.rmtree(data, ignore_errors=True)
    print(
        f"\nCrash safety: {plan.trackers} trackers per scenario, a fix a second at {plan.speedup:g}x, "
        f"{plan.duration_s:g} s of load, {plan.workers} service processes, seed {plan.seed}\n"
    )
    print(table(rows))
    print("\n" + LEGEND)
    failed = [f"{r.scenario}: {'; '.join(r.problems())}" for r in rows if r.failed]
    print(
        "\nFAILED: " + " | ".join(failed)
        if failed
        else "\nOK: every fix made was acknowledged, and every acknowledged fix stored exactly once"
    )
    return 1 if failed else 0


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
