"""A tracker's POST while the public area is hammered and a user verifies a large file (issue 33, item 3).

    .venv/bin/python -m bench.contention [--quick] [--duration S]

Creates its own database (telemetria_bench_<pid>) in the local cluster: one vehicle with its tracker, 30 routes of
5,000 points each in the school year in force (what made one anonymous GET /public/itineraries cost 1.2-2.1 s of
the event loop), an admin user, and a large track export to verify (a real export's rows repeated to 100,000).
Runs the real service (`telemetria serve`, one process, public area on) and, in two phases of S seconds each:

* idle: the tracker posts single fixes one after the other (20 a second at most) and each answer is timed;
* loaded: the same, while a helper process runs 10 anonymous clients fetching /public/itineraries back to back
  (half of them revalidating with If-None-Match) and one user posting the large file to /api/v1/seals/verify
  again as soon as it is answered.

The two phases alternate in SLICES slices each (idle, loaded, idle, loaded, ...; S / SLICES seconds a slice), so
that a slow drift of the machine or of the database server (a checkpoint, another database's autovacuum) falls on
both sides alike instead of on whichever phase ran second: at the end of the full suite, one phase after the other
missed the target on a few stalls (loaded p50 unchanged, max 37.7 ms) that four runs alone did not show. Each
loaded slice has a helper process of its own, which finishes its requests before the next idle slice starts.

Target: the tracker's p99 while loaded under 2× its idle p99. Prints one table (p50, p99, max per phase; what the
helpers got, by status) and drops the database; exits 1 when the target is not met or a fix was refused.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import multiprocessing
import os
import signal
import statistics
import sys
import tempfile
import time
from collections import Counter
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from types import FrameType
from typing import Any

import httpx

from bench import fleetgen, procs
from bench.benchdb import BenchDb, Vehicle
from bench.fleetgen import Days
from bench.table import render
from telemetria.auth import store as auth_store
from telemetria.auth.roles import Role
from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings

ROUTES, POINTS = 30, 5_000
PUBLIC_CLIENTS = 10
FILE_ROWS = 100_000
POST_EVERY_S = 0.05
FACTOR = 2.0  # target: loaded p99 < FACTOR × idle p99
SLICES = 3  # idle and loaded slices each, alternating


async def prepare(db: BenchDb) -> tuple[Vehicle, str]:
    """The registry (30 long routes, the school year), one vehicle with a day of fixes, an admin token, the file."""
    today = datetime.now(LOCAL_TZ).date()
    (vehicle,) = await db.register_fleet(1)
    conn = await db.connect()
    try:
        await conn.execute(
            "INSERT INTO school_years (year, start_date, end_date) VALUES ($1, $2, $3)",
            today.year, date(today.year, 1, 1), date(today.year, 12, 31),
        )  # fmt: skip
        for r in range(ROUTES):
            coords = [[-62.47 + 0.0004 * i, -10.43 + 0.01 * r + 0.0003 * math.sin(i / 7)] for i in range(POINTS)]
            rid = await conn.fetchval(
                "INSERT INTO routes (code, name, school_year, geometry, length_m) VALUES ($1, $2, $3, $4, $5)"
                " RETURNING id",
                f"C{r:03d}", f"Linha {r}", today.year, {"type": "LineString", "coordinates": coords}, 200_000.0,
            )  # fmt: skip
            await conn.execute(
                "INSERT INTO route_stops (route_id, seq, name, lat, lon, kind, scheduled_time) VALUES"
                " ($1, 1, 'Casa', $2, $3, 'boarding', '06:30'), ($1, 2, 'Escola', $4, $5, 'school', '07:30')",
                rid, coords[10][1], coords[10][0], coords[-1][1], coords[-1][0],
            )  # fmt: skip
        user = await auth_store.add_user(conn, "bench", "correct horse battery staple", Role.ADMIN)
        token = (await auth_store.create_token(conn, user["id"], "bench"))["token"]
    finally:
        await conn.close()
    conn = await db.connect(jsonb_codec=False)
    try:
        await fleetgen.load(conn, [vehicle], Days(today - timedelta(days=3), 1))
    finally:
        await conn.close()
    return vehicle, token


async def large_file(url: str, token: str, vehicle: Vehicle) -> bytes:
    """A real track export of the vehicle's day, its rows repeated to FILE_ROWS."""
    day = (datetime.now(LOCAL_TZ).date() - timedelta(days=3)).isoformat()
    params = {"vehicle_id": str(vehicle.vehicle_id), "from": day, "to": day, "format": "csv"}
    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        r = await c.get("/api/v1/reports/track", params=params, headers={"Authorization": f"Bearer {token}"})
        r.raise_for_status()
    lines = r.content.split(b"\r\n")
    head, rows = lines[:1], [ln for ln in lines[1:] if ln and not ln.startswith(b"selo")]
    body = (rows * (FILE_ROWS // max(1, len(rows)) + 1))[:FILE_ROWS]
    return b"\r\n".join(head + body) + b"\r\n"


async def tracker(url: str, vehicle: Vehicle, duration_s: float, first: int) -> tuple[list[float], int]:
    """Single fixes posted one after the other for `duration_s` (the n-th at 30 min ago + 50 ms × (first + n)):
    each answer's latency (s), and how many were refused."""
    out, refused = [], 0
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    headers = {"Authorization": f"Bearer {vehicle.token}"}
    async with httpx.AsyncClient(base_url=url, timeout=30) as c:
        end, n = time.monotonic() + duration_s, first
        while time.monotonic() < end:
            body = {"ts": (start + timedelta(milliseconds=50 * n)).isoformat(), "lat": -10.43, "lon": -62.47}
            t = time.perf_counter()
            r = await c.post("/api/v1/fixes", json=body, headers=headers)
            out.append(time.perf_counter() - t)
            refused += r.status_code != 200
            n += 1
            await asyncio.sleep(max(0.0, POST_EVERY_S - out[-1]))
    return out, refused


def _helpers(url: str, token: str, data: bytes, duration_s: float, results: Any, only: str | None = None) -> None:
    """The load, in a process of its own: 10 anonymous clients and one user verifying, until `duration_s` is up.

    At niceness +10: the clients stand for machines elsewhere, and on a 2-core box a load generator answered 429
    at once spends a core of its own asking again, which a real server would never pay for. Niceness lends that core
    back to the service only when it needs it; the requests are the same."""
    os.nice(10)

    async def main() -> None:
        public: Counter[str] = Counter()
        verify: Counter[str] = Counter()
        end = time.monotonic() + duration_s

        async def anonymous(k: int) -> None:
            etag = None
            async with httpx.AsyncClient(base_url=url, timeout=60) as c:
                while time.monotonic() < end:
                    h: dict[str, str] = {"If-None-Match": etag} if etag and k % 2 else {}
                    r = await c.get("/public/itineraries", headers=h, params={"n": str(k)})
                    etag = r.headers.get("etag", etag)
                    public[str(r.status_code)] += 1

        async def verifier() -> None:
            async with httpx.AsyncClient(base_url=url, timeout=300) as c:
                while time.monotonic() < end:
                    r = await c.post("/api/v1/seals/verify", files={"file": ("t.csv", data)},
                                     headers={"Authorization": f"Bearer {token}"})  # fmt: skip
                    verify[str(r.status_code)] += 1
                    if r.status_code == 429:
                        await asyncio.sleep(float(r.headers.get("retry-after", "1")))

        public_load = [anonymous(k) for k in range(PUBLIC_CLIENTS)] if only != "verify" else []
        await asyncio.gather(*public_load, *([verifier()] if only != "public" else []))
        results.put((dict(public), dict(verify)))

    asyncio.run(main())


def p99(xs: list[float]) -> float:
    return sorted(xs)[max(0, math.ceil(0.99 * len(xs)) - 1)] if xs else math.nan


def run(db: BenchDb, duration_s: float, log_dir: Path, only: str | None = None) -> dict[str, Any]:
    vehicle, token = asyncio.run(prepare(db))
    server = procs.start_service(1, db.dsn, log_dir / "service.log", {"TELEMETRIA_PUBLIC_ENABLED": "true"})
    try:
        data = asyncio.run(large_file(server.url, token, vehicle))
        asyncio.run(tracker(server.url, vehicle, 2.0, 0))  # warm-up: the token cache, the pool
        first_s = asyncio.run(first_itineraries(server.url))  # computed once per data version: timed apart
        idle: list[list[float]] = []
        loaded: list[list[float]] = []
        refused, public, verify = 0, Counter[str](), Counter[str]()
        slice_s = duration_s / SLICES
        for k in range(SLICES):  # distinct fix times in every slice: 1,000 posts (50 s of fix time) apart
            xs, no = asyncio.run(tracker(server.url, vehicle, slice_s, 4_000 + 2_000 * k))
            idle.append(xs)
            refused += no
            xs, no, got = _loaded_slice(server.url, vehicle, token, data, slice_s, 5_000 + 2_000 * k, only)
            loaded.append(xs)
            refused += no
            public.update(got[0])
            verify.update(got[1])
    finally:
        server.stop()
    return {"idle": idle, "loaded": loaded, "refused": refused, "public": dict(public), "verify": dict(verify),
            "file_bytes": len(data), "first_s": first_s}  # fmt: skip


def _loaded_slice(
    url: str, vehicle: Vehicle, token: str, data: bytes, slice_s: float, first: int, only: str | None
) -> tuple[list[float], int, tuple[dict[str, int], dict[str, int]]]:
    """One loaded slice: the helpers' process started, the tracker timed while it runs, the process ended (its
    requests answered) before returning; the latencies, the fixes refused, what the helpers got by status."""
    ctx = multiprocessing.get_context("spawn")
    results = ctx.Queue()
    helper = ctx.Process(target=_helpers, args=(url, token, data, slice_s + 2.0, results, only))
    helper.start()
    time.sleep(1.0)  # the helpers under way before the tracker's slice starts
    xs, refused = asyncio.run(tracker(url, vehicle, slice_s, first))
    got = results.get(timeout=600)
    helper.join(timeout=60)
    return xs, refused, got


async def first_itineraries(url: str) -> float:
    """The first /public/itineraries of this data version (computed in the job queue's process): seconds."""
    async with httpx.AsyncClient(base_url=url, timeout=120) as c:
        t = time.perf_counter()
        (await c.get("/public/itineraries")).raise_for_status()
        return time.perf_counter() - t


def report(r: dict[str, Any], duration_s: float) -> tuple[str, bool]:
    idle, loaded = [x for xs in r["idle"] for x in xs], [x for xs in r["loaded"] for x in xs]
    limit = FACTOR * p99(idle)
    met = p99(loaded) < limit and r["refused"] == 0
    rows = [
        [name, str(len(xs)), f"{1000 * statistics.median(xs):.1f}", f"{1000 * p99(xs):.1f}", f"{1000 * max(xs):.1f}"]
        for name, xs in (("idle", idle), ("loaded", loaded))
    ]
    by_slice = "; ".join(
        f"{name} " + " / ".join(f"{1000 * p99(xs):.1f}" for xs in r[name]) for name in ("idle", "loaded")
    )
    text = "\n".join([
        f"CONTENTION: a tracker's single-fix POSTs, {duration_s:g} s per phase in {len(r['idle'])} alternating "
        f"slices, idle and while {PUBLIC_CLIENTS} anonymous clients fetch /public/itineraries ({ROUTES} routes × "
        f"{POINTS:,} points) and one user verifies a {r['file_bytes'] / 1e6:.1f} MB CSV of {FILE_ROWS:,} rows",
        render(["phase", "posts", "p50 ms", "p99 ms", "max ms"], rows),
        f"p99 ms by slice, in the order run: {by_slice}",
        f"first /public/itineraries of the data version (computed once, before the phases): {r['first_s']:.2f} s",
        f"public area answers by status: {r['public']}; verifications by status: {r['verify']}; "
        f"fixes refused: {r['refused']}",
        f"target: loaded p99 < {FACTOR:g}x idle p99 ({1000 * limit:.1f} ms): {1000 * p99(loaded):.1f} ms, "
        f"{'met' if met else 'NOT met'}",
    ])  # fmt: skip
    return text, met


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.contention", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="10 s phases")
    p.add_argument(
        "--duration", type=float, help=f"seconds per phase, in {SLICES} slices (default 30, quick 10; at most 120)"
    )
    p.add_argument("--only", choices=["public", "verify"], help="one of the two loads only (to tell which costs)")
    args = p.parse_args(argv)
    duration_s = min(args.duration or (10.0 if args.quick else 30.0), 120.0)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    settings = Settings()
    db = BenchDb.for_this_run(settings)
    log_dir = Path(tempfile.mkdtemp(prefix="telemetria-contention-"))
    print(f"bench: database {db.name}, logs in {log_dir}", file=sys.stderr)
    asyncio.run(db.create())
    try:
        r = run(db, duration_s, log_dir, args.only)
    finally:
        asyncio.run(db.drop())
    text, met = report(r, duration_s)
    print(text)
    print(f"cleanup: database {db.name} {'NOT dropped' if asyncio.run(db.exists()) else 'dropped'}; logs in {log_dir}")
    return 0 if met else 1


def _exit_on_signal(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


if __name__ == "__main__":
    sys.exit(main())
