"""The demo the README's run command starts: the service plus simulated vehicles posting real HTTP."""

from __future__ import annotations

import asyncio
import logging
import os
from datetime import UTC, datetime
from typing import Any

import asyncpg
import orjson
import uvicorn

from telemetria.db import create_pool, init_connection
from telemetria.ingest.queries import FIX_TOTALS
from telemetria.registry import fleet
from telemetria.serve import uvicorn_config
from telemetria.settings import Settings

log = logging.getLogger("telemetria.demo")

STATUS_EVERY_S = 10.0


def _plate(prefix: str, i: int) -> str:
    # Mercosul-style plates: SIM1A00, SIM1A01, ... SIM1A99, SIM1B00, ... (unique for i < 23,400)
    return f"{prefix[:3].upper()}{1 + i // 2600}{chr(65 + (i // 100) % 26)}{i % 100:02d}"


async def ensure_fleet(conn: Any, settings: Settings, vehicles: int, prefix: str = "SIM") -> list[tuple[str, str]]:
    """Register the simulated fleet once; its tokens live in the data dir (0600) since they are shown once."""
    path = settings.data_dir / f"sim-fleet-{prefix.lower()}.json"
    known: dict[str, str] = orjson.loads(path.read_bytes()) if path.exists() else {}
    creds: list[tuple[str, str]] = []
    for i in range(vehicles):
        plate = _plate(prefix, i)
        unique_id = f"{prefix.lower()}-{i + 1:04d}"
        if not await fleet.vehicle_exists(conn, plate):
            await fleet.add_vehicle(conn, plate, prefix=f"{i + 1:02d}", description="demo: simulated vehicle")
        if not await fleet.tracker_exists(conn, unique_id):
            known[unique_id] = (await fleet.add_tracker(conn, unique_id, plate))["token"]
        elif unique_id not in known:
            known[unique_id] = await fleet.rotate_token(conn, unique_id)
        creds.append((unique_id, known[unique_id]))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(known))
    os.chmod(path, 0o600)
    return creds


async def ensure_demo_admin(conn: Any, settings: Settings) -> tuple[str, str] | None:
    """On a database with no users, an `admin` whose password is kept in the data dir (0600); else None."""
    import secrets

    from telemetria.auth import store
    from telemetria.auth.roles import Role

    path = settings.data_dir / "demo-admin.txt"
    if await conn.fetchval("SELECT count(*) FROM users") == 0:
        password = os.environ.get("TELEMETRIA_PASSWORD") or secrets.token_urlsafe(12)
        await store.add_user(conn, "admin", password, Role.ADMIN, full_name="Demo admin")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(password + "\n")
        os.chmod(path, 0o600)
    if path.exists() and await conn.fetchval("SELECT 1 FROM users WHERE username = 'admin' AND active"):
        return "admin", path.read_text().strip()
    return None


async def run_simulator(
    url: str,
    creds: list[tuple[str, str]],
    *,
    interval_s: float,
    seed: int,
    speedup: float,
    duration_s: float | None = None,
    stop: asyncio.Event | None = None,
) -> None:
    from telemetria.sim.runner import run_fleet

    stats = await run_fleet(
        url, creds, interval_s=interval_s, seed=seed, speedup=speedup, duration_s=duration_s, stop=stop
    )
    print(stats.summary(), flush=True)


async def _report(pool: asyncpg.Pool, stop: asyncio.Event) -> None:
    while not stop.is_set():
        try:
            await asyncio.wait_for(stop.wait(), STATUS_EVERY_S)
        except TimeoutError:
            pass
        try:
            row = await pool.fetchrow(FIX_TOTALS)
        except (OSError, asyncpg.PostgresError) as e:
            print(f"[demo] database unreachable: {e}", flush=True)
            continue
        last = row["last"].astimezone(UTC).strftime("%H:%M:%S UTC") if row["last"] else "-"
        print(f"[demo] fixes stored: {row['n']} from {row['v']} vehicles, latest fix {last}", flush=True)


async def run_demo(settings: Settings, *, host: str, port: int, vehicles: int, speedup: float, seed: int) -> None:
    """Serve the app and drive the demo fleet against it until interrupted."""
    from telemetria.app import create_app

    conn = await asyncpg.connect(settings.dsn())
    try:
        await init_connection(conn)
        creds = await ensure_fleet(conn, settings, vehicles, prefix="DEM")
        admin = await ensure_demo_admin(conn, settings)
    finally:
        await conn.close()

    config = uvicorn_config(create_app(settings), settings, host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
            return
        await asyncio.sleep(0.05)
    url = f"http://{host}:{port}"
    print(f"\nTelemetria is running at {url}  (API docs: {url}/docs)", flush=True)
    if admin:
        print(f"Log in as {admin[0]} / {admin[1]}  (kept in {settings.data_dir / 'demo-admin.txt'})", flush=True)
    print(
        f"Demo fleet: {vehicles} simulated vehicles posting a fix every 30 s "
        f"(speedup {speedup:g}); started {datetime.now(UTC):%H:%M:%S} UTC. Ctrl-C stops.\n",
        flush=True,
    )
    stop = asyncio.Event()
    pool = await create_pool(settings, min_size=1, max_size=1)
    tasks = [
        asyncio.create_task(run_simulator(url, creds, interval_s=30.0, seed=seed, speedup=speedup, stop=stop)),
        asyncio.create_task(_report(pool, stop)),
    ]
    try:
        await serving
    finally:
        stop.set()
        await asyncio.gather(*tasks, return_exceptions=True)
        await pool.close()
