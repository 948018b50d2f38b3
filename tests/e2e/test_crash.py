"""Worker processes SIGKILLed under load: the supervisor restarts them, trackers retry, and key by key
every acknowledged fix is stored exactly once, nothing stored was never sent and nothing was rejected."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from pathlib import Path
from urllib.parse import urlsplit

import asyncpg

from bench.chaos import stored_keys
from telemetria.settings import Settings
from telemetria.sim.demo import ensure_fleet
from telemetria.sim.outbox import Key, KeyLedger
from telemetria.sim.runner import FleetStats, run_fleet
from tests.e2e.conftest import serve


def assert_stored_once(ledger: KeyLedger, stats: FleetStats, rows: list[Key], doubled: int) -> None:
    """The crash-safety promise, key by key, for a fleet that was drained after its stop."""
    stored = set(rows)
    assert doubled == 0 and len(rows) == len(stored), f"duplicates: {len(rows) - len(stored)}, {doubled}"
    assert not (lost := ledger.acked - stored), f"{len(lost)} acknowledged fixes not stored, e.g. {few(lost)}"
    assert not (unsent := stored - ledger.sent), f"{len(unsent)} stored fixes never sent, e.g. {few(unsent)}"
    # Stored without ever getting a 2xx: only fixes of requests whose answer never came.
    assert not (odd := stored - ledger.acked - ledger.unanswered), f"stored, unacknowledged: {few(odd)}"
    assert stats.pending == 0 and stats.dropped == 0, stats.summary()  # drained, none given up
    # Conservation: every fix made (and every copy re-sent) was answered stored or duplicate, none
    # rejected. A server refusing valid fixes would pass the key checks above (a rejected fix is
    # neither acknowledged nor stored), so this is checked on its own.
    assert stats.rejected == 0, stats.summary()
    assert stats.generated + stats.resent == stats.accepted + stats.duplicates, stats.summary()
    # Each stored row was inserted by exactly one request: answered (the answers' `accepted`) or not
    # (the 2xx to its retry called it a duplicate, or no 2xx ever came).
    assert len(stored) == stats.accepted + ledger.stored_unanswered + len(stored - ledger.acked), stats.summary()
    statuses = {s for s in stats.by_status if s.isdigit()}  # the rest are transport errors
    assert statuses <= {"200", "503"}, stats.summary()


def few(keys: set[Key]) -> list[Key]:
    return sorted(keys)[:5]


def worker_pids(url: str) -> set[int]:
    """The worker processes of the `telemetria serve --workers N` listening on url's port (from /proc)."""
    port = str(urlsplit(url).port)
    procs: dict[int, tuple[int, list[str]]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
        except OSError:
            continue
        procs[int(entry.name)] = (int(stat[stat.rindex(")") + 2 :].split()[1]), argv)
    servers = {pid for pid, (_, argv) in procs.items() if "telemetria.cli" in argv and "serve" in argv and port in argv}
    # multiprocessing's spawn runs each worker as `python -c "...spawn_main(...)" --multiprocessing-fork`;
    # the supervisor's other child, the resource tracker, is left alone.
    return {pid for pid, (ppid, argv) in procs.items() if ppid in servers and any("spawn_main" in a for a in argv)}


async def two_workers(url: str, limit_s: float = 10) -> set[int]:
    """The worker pids once there are two again (or whatever there is after limit_s)."""
    for _ in range(int(limit_s / 0.1)):
        if len(pids := worker_pids(url)) >= 2:
            return pids
        await asyncio.sleep(0.1)
    return worker_pids(url)


async def kill_workers(url: str, rng: random.Random, kills: int, every_s: float) -> list[int]:
    """SIGKILL a random worker at a random moment of each `every_s` window; returns their pids."""
    killed = []
    start = time.monotonic()
    for i in range(kills):
        await asyncio.sleep(max(0.0, start + every_s * (i + rng.uniform(0.4, 0.9)) - time.monotonic()))
        pids = await two_workers(url)  # the last victim's successor may still be starting
        victim = rng.choice(sorted(pids))
        os.kill(victim, signal.SIGKILL)
        killed.append(victim)
    return killed


async def test_workers_killed_under_load_lose_nothing(db_env: dict[str, str], tmp_path: Path) -> None:
    dsn = db_env["TELEMETRIA_DATABASE_URL"]
    conn = await asyncpg.connect(dsn)
    try:
        creds = await ensure_fleet(conn, Settings(database_url=dsn, data_dir=tmp_path), 10, prefix="KIL")
    finally:
        await conn.close()

    server = serve({**db_env, "TELEMETRIA_LOG_LEVEL": "warning"}, "--workers", "2")
    url = next(server)
    ledger = KeyLedger()
    try:
        before = worker_pids(url)
        stats, killed = await asyncio.gather(
            run_fleet(url, creds, interval_s=1, seed=7, speedup=10, duration_s=15, drain_s=15, ledger=ledger),
            kill_workers(url, random.Random(7), kills=3, every_s=4.5),
        )
        after = await two_workers(url)
    finally:
        server.close()

    assert len(before) == 2 and len(killed) == 3 and len(after) == 2 and not after & set(killed), (before, after)
    rows, doubled = await stored_keys(dsn, [u for u, _ in creds])
    assert len(ledger.acked) > 500, stats.summary()  # under load the whole time
    assert_stored_once(ledger, stats, rows, doubled)
