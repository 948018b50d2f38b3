"""The demo the README's run command starts: the service plus simulated vehicles posting real HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

import asyncpg
import orjson
import uvicorn

from telemetria.contracts import calendar
from telemetria.contracts import queries as contract_q
from telemetria.contracts import store as contract_store
from telemetria.contracts.schemas import ContractIn
from telemetria.db import create_pool, init_connection
from telemetria.ingest.queries import FIX_TOTALS
from telemetria.localtime import LOCAL_TZ
from telemetria.ops.backup import sha256_of
from telemetria.registry import fleet, routes, schemas, store
from telemetria.registry import queries as q
from telemetria.registry.documents import DocumentError, normalize_cnpj, normalize_cpf
from telemetria.registry.geocheck import RouteGeometry, StopIn, finish
from telemetria.roads import store as roads_store
from telemetria.roads.osmread import read_localities, read_ways
from telemetria.serve import uvicorn_config
from telemetria.settings import Settings
from telemetria.sim.backfill import WAIT_S, DemoIds, backfill
from telemetria.sim.motion import MotionParams
from telemetria.sim.osm import write_osm
from telemetria.sim.roadnet import grid_localities, grid_ways
from telemetria.sim.roads import Route, make_grid
from telemetria.sim.tracker import TrackerParams
from telemetria.sim.vehicle import DEFAULT_MOTION, DEFAULT_TRACKER, vehicle_route

if TYPE_CHECKING:
    from pathlib import Path

    from telemetria.sim.runner import RunSetup

log = logging.getLogger("telemetria.demo")

STATUS_EVERY_S = 10.0
DEMO_PREFIX = "DEM"
DEMO_CONTRACTOR = "Transportes Escolares Demo Ltda"
DEMO_CNPJ_BODY = "101010100001"  # invented root 10.101.010, branch 0001; check digits computed below
# The sped-up simulator replays past days (see sim.runner.default_start); reports over them need the registry too.
DEMO_SINCE_DAYS = 30
# Planted in the demo's runs so that the alerts panel and the occurrence pages have something to show (issue 18):
# every run may speed (DEFAULT_MOTION's drivers knowingly exceed the limit now and then); every third run of a
# vehicle also halts 4–6 min somewhere along the road (an unauthorised stop, Art. 38 IX); every fourth loses
# the signal for 10–15 min now and then, the tracker sending what it stored once it returns (a live "silent
# tracker" alert, withdrawn when the stored fixes fill the gap).
LONG_HALT = replace(DEFAULT_MOTION, halt_s=(240.0, 360.0))
SIGNAL_LOSS = replace(DEFAULT_TRACKER, loss_per_hour=4.0, loss_s=(600.0, 900.0))


def demo_run(vehicle: int, run: int) -> tuple[MotionParams, TrackerParams | None]:
    """How run `run` (0, 1, ...) of demo vehicle `vehicle` is driven and tracked: see LONG_HALT, SIGNAL_LOSS."""
    k = vehicle + run  # vehicles take turns, so some event is under way most of the time
    return (LONG_HALT if k % 3 == 2 else DEFAULT_MOTION), (SIGNAL_LOSS if k % 4 == 1 else None)


def _plate(prefix: str, i: int) -> str:
    # Mercosul-style plates: SIM1A00, SIM1A01, ... SIM1A99, SIM1B00, ... (unique for i < 23,400)
    return f"{prefix[:3].upper()}{1 + i // 2600}{chr(65 + (i // 100) % 26)}{i % 100:02d}"


def demo_plates(vehicles: int) -> list[str]:
    """The plates of the demo fleet in simulator order: plate i is the simulator's vehicle i."""
    return [_plate(DEMO_PREFIX, i) for i in range(vehicles)]


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


def _with_check_digits(body: str, normalize: Callable[[str], str]) -> str:
    """`body` followed by the two check digits that `normalize` accepts (exactly one pair of the 100 is right)."""
    for k in range(100):
        with contextlib.suppress(DocumentError):
            return normalize(f"{body}{k:02d}")
    raise ValueError(f"no check digits make {body!r} valid")


def _demo_stops(route: Route, code: str) -> list[StopIn]:
    """The garage at the line's start, then the simulator's stops: boarding points, the school, the same points back."""
    school = next(j for j, s in enumerate(route.stops) if s.kind == "school")

    def name(j: int) -> str:
        if j < school:
            return f"Ponto {j + 1}"
        # Pupils are dropped on the way back where they boarded: the same points in reverse order.
        return f"Escola Municipal da linha {code}" if j == school else f"Ponto {2 * school - j + 1} (volta)"

    garage = StopIn("Garagem", float(route.line.lat[0]), float(route.line.lon[0]), "garage")
    return [garage, *(StopIn(name(j), s.lat, s.lon, s.kind) for j, s in enumerate(route.stops))]


async def _ensure_driver(conn: Any, n: int, contractor_id: int, vehicle_id: int, since: datetime) -> None:
    """Demo driver number n (card DEMO-000n), assigned to the vehicle from `since` on unless either has one."""
    card = f"DEMO-{n:04d}"
    if row := await conn.fetchrow(q.GET_DRIVER, None, False, None, card, None):
        did = row["id"]
    else:
        cpf = _with_check_digits(f"9{n:07d}2", normalize_cpf)  # ninth digit 2: the fiscal region of Rondônia
        driver = schemas.DriverIn(
            name=f"Condutor Demo {n:02d}", cpf=cpf, cnh_category="D", card_id=card, contractor_id=contractor_id
        )
        did = await store.insert(conn, q.INSERT_DRIVER, q.DRIVER_COLUMNS, driver.model_dump())
    for args in ((vehicle_id, None), (None, did)):
        if await conn.fetchrow(q.GET_DRIVER_ASSIGNMENT, None, None, *args):
            return
    await store.guarded(lambda: conn.fetchval(q.INSERT_DRIVER_ASSIGNMENT, did, vehicle_id, since, None))


async def _ensure_contract(conn: Any, contractor_id: int, today: date) -> int:
    """The demo contract of this year (paid per km, the default rule) and the school year, unless they exist."""
    year = today.year
    if await contract_store.school_year(conn, year) is None:
        start = max(date(year, 1, 1), min(date(year, 2, 2), today - timedelta(days=DEMO_SINCE_DAYS)))
        await contract_store.put_school_year(
            conn, calendar.SchoolYear(year, start, max(date(year, 12, 18), today)), "demo"
        )
    number = f"DEMO-{year}"
    if cid := await conn.fetchval(contract_q.CONTRACT_BY_NUMBER, number):
        return int(cid)
    body = ContractIn(
        contractor_id=contractor_id, number=number, lot="Lote demo", valid_from=date(year, 1, 1),
        valid_to=date(year, 12, 31), price_per_km=Decimal("4.35"),
    )  # fmt: skip
    return await contract_store.create_contract(conn, body, "demo")


async def _ensure_route(conn: Any, route: Route, n: int, school_year: int, contract_id: int) -> int:
    """Route DEMO-0n of the school year with the simulated line and stops, registered unless it exists; its id."""
    code = f"DEMO-{n:02d}"
    if row := await conn.fetchrow(q.GET_ROUTE, None, None, school_year, None, code):
        return int(row["id"])
    # finish() runs the checks (and the length) an uploaded route line gets.
    coords, length_m = finish([(float(x), float(y)) for x, y in zip(route.line.lon, route.line.lat, strict=True)])
    fields = schemas.RouteFields(
        code=code, name=f"Linha demo {n:02d}: garagem, escola, garagem", school_year=school_year, shift="matutino",
        speed_limit_kmh=DEFAULT_MOTION.speed_limit_kmh, contract_id=contract_id,
    )  # fmt: skip
    return await routes.create_route(
        conn, fields.model_dump(), RouteGeometry(coords, length_m, _demo_stops(route, code))
    )


async def ensure_demo_registry(conn: Any, seed: int, plates: Sequence[str], *, now: datetime | None = None) -> None:
    """Register once what reports need about the demo fleet, where plates[i] is the simulator's vehicle i.

    A contractor owning the vehicles, its contract paid per km for this year and the school year (so the
    boletim page has something to show); per vehicle a driver assigned to it, and the route the simulator drives
    (`vehicle_route(seed, i)`) with its stops, assigned to it every day. What exists is left as it is.
    """
    today = (now or datetime.now(UTC)).astimezone(LOCAL_TZ).date()
    since = today - timedelta(days=DEMO_SINCE_DAYS)
    weekdays = [1, 2, 3, 4, 5, 6, 7]  # the demo runs every day
    async with conn.transaction():
        cnpj = _with_check_digits(DEMO_CNPJ_BODY, normalize_cnpj)
        if row := await conn.fetchrow(q.GET_CONTRACTOR, None, None, cnpj):
            cid = row["id"]
        else:
            contractor = schemas.ContractorIn(name=DEMO_CONTRACTOR, cnpj=cnpj, contract_number="DEMO")
            cid = await store.insert(conn, q.INSERT_CONTRACTOR, q.CONTRACTOR_COLUMNS, contractor.model_dump())
        contract_id = await _ensure_contract(conn, cid, today)
        for i, plate in enumerate(plates):
            vid = await fleet.vehicle_id(conn, plate)
            vehicle = await conn.fetchrow(q.GET_VEHICLE, None, vid, None, None, None)
            if vehicle["contractor_id"] is None:
                # Its limit is the one the simulated drivers knowingly exceed now and then.
                patch = schemas.VehiclePatch(
                    contractor_id=cid, kind="onibus", capacity=44, speed_limit_kmh=DEFAULT_MOTION.speed_limit_kmh
                )
                await store.patch(conn, q.PATCH_VEHICLE, q.VEHICLE_COLUMNS, vid, schemas.changes(patch))
            await _ensure_driver(conn, i + 1, cid, vid, datetime.combine(since, time(), LOCAL_TZ))
            rid = await _ensure_route(conn, vehicle_route(seed, i), i + 1, today.year, contract_id)
            if not await conn.fetchrow(q.GET_ROUTE_ASSIGNMENT, None, None, rid, vid, None):
                await conn.fetchval(q.INSERT_ROUTE_ASSIGNMENT, rid, vid, since, None, weekdays)


async def ensure_reserve(conn: Any, plate: str, like: str) -> None:
    """The contractor's reserve bus `plate`: the same contractor as vehicle `like`, no route of its own."""
    vid = await fleet.vehicle_id(conn, plate)
    vehicle = await conn.fetchrow(q.GET_VEHICLE, None, vid, None, None, None)
    if vehicle["contractor_id"] is None:
        owner = await conn.fetchval("SELECT contractor_id FROM vehicles WHERE plate = $1", like)
        patch = schemas.VehiclePatch(
            contractor_id=owner, kind="onibus", capacity=44, speed_limit_kmh=DEFAULT_MOTION.speed_limit_kmh
        )
        await store.patch(conn, q.PATCH_VEHICLE, q.VEHICLE_COLUMNS, vid, schemas.changes(patch))


async def ensure_demo_roads(conn: Any, seed: int, data_dir: Path) -> None:
    """Import the simulator's grid as the road network, as an installation imports its extract: the grid and its
    localities written as an OpenStreetMap file in the data dir (sim/osm.py), read back by the import's reader and
    recorded with the file's SHA-256; unless one was imported. In force from the demo registry's first day (its
    whole history is simulated): the demo's pages then name the roads and localities, draw them offline and
    measure off-route km along them."""
    if await roads_store.current(conn) is not None:
        return
    grid = make_grid(seed)
    path = data_dir / f"demo-roads-{seed}.osm.pbf"
    await asyncio.to_thread(write_osm, grid_ways(grid), path, grid_localities(grid))
    first = datetime.now(LOCAL_TZ).date() - timedelta(days=DEMO_SINCE_DAYS)
    await roads_store.import_ways(
        conn, read_ways(path), source=path.name, sha256=await asyncio.to_thread(sha256_of, path), by="demo",
        effective_from=first, localities=read_localities(path),
    )  # fmt: skip


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
        path.write_text(f"# Telemetria demo: log in at the service's address with\nuser: admin\npassword: {password}\n")
        os.chmod(path, 0o600)
    if path.exists() and await conn.fetchval("SELECT 1 FROM users WHERE username = 'admin' AND active"):
        return "admin", demo_password(path.read_text())
    return None


def demo_password(text: str) -> str:
    """The password in demo-admin.txt: its `password:` line (files written before it had only the password)."""
    for line in text.splitlines():
        if line.startswith("password:"):
            return line.removeprefix("password:").strip()
    return text.strip()


def clock(at: datetime) -> str:
    """A time as the pages show it: local (America/Porto_Velho, UTC−4), naming the zone."""
    return f"{at.astimezone(LOCAL_TZ):%H:%M:%S} (local time, America/Porto_Velho)"


def banner(
    url: str, admin: tuple[str, str] | None, admin_file: Any, vehicles: int, speedup: float, now: datetime
) -> str:
    """What `./dev run` prints once the service is up: where to go, how to log in, what the demo fleet does."""
    lines = [f"\nTelemetria is running: open {url}/ in a browser (the login page; API docs: {url}/docs)"]
    if admin:
        lines.append(f"Log in with user {admin[0]!r} and password {admin[1]!r}  (both kept in {admin_file})")
    lines += [
        f"Demo fleet: {vehicles} simulated vehicles posting a fix every 30 s (speedup {speedup:g}); "
        f"started {clock(now)}. Ctrl-C stops.",
        "Like real trackers, they store fixes while they have no signal and send them when it returns "
        "(store-and-forward, Art. 15 §3): a vehicle can show 'Nunca transmitiu' or 'Sem sinal' on the live map "
        "for minutes and then deliver positions that are minutes old. The reports count them by fix time.\n",
    ]
    return "\n".join(lines)


def status_line(n: int, vehicles: int, last: datetime | None) -> str:
    """The line printed every STATUS_EVERY_S: fixes stored so far and the newest fix's time, local."""
    return f"[demo] fixes stored: {n} from {vehicles} vehicles, latest fix {clock(last) if last else '-'}"


async def run_simulator(
    url: str,
    creds: list[tuple[str, str]],
    *,
    interval_s: float,
    seed: int,
    speedup: float,
    duration_s: float | None = None,
    stop: asyncio.Event | None = None,
    plan: RunSetup | None = None,
    loss_per_hour: float | None = None,
) -> None:
    from telemetria.sim.runner import run_fleet

    stats = await run_fleet(
        url,
        creds,
        interval_s=interval_s,
        seed=seed,
        speedup=speedup,
        duration_s=duration_s,
        stop=stop,
        plan=plan,
        tracker=None if loss_per_hour is None else replace(DEFAULT_TRACKER, loss_per_hour=loss_per_hour),
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
        print(status_line(row["n"], row["v"], row["last"]), flush=True)


# The UPFM's value in R$ the demo decides its fines with when none is set for the year (setting upfm_brl,
# TELEMETRIA_UPFM_BRL): an example value, said so on the console; a real installation sets the published one.
DEMO_UPFM_BRL = Decimal("4.71")


def with_demo_upfm(settings: Settings, year: int) -> tuple[Settings, str | None]:
    """`settings` with the demo's UPFM value for `year` added unless one is set, and the console's note on it."""
    values = settings.upfm_values
    if year in values:
        return settings, None
    text = ",".join([*(f"{y}={v}" for y, v in sorted(values.items())), f"{year}={DEMO_UPFM_BRL}"])
    note = (f"UPFM {year}: R$ {str(DEMO_UPFM_BRL).replace('.', ',')}, an example value for the demo's fines "
            f"(TELEMETRIA_UPFM_BRL={year}=VALUE sets the municipality's)\n")  # fmt: skip
    return settings.model_copy(update={"upfm_brl": text}), note


async def demo_ids(conn: Any, plates: Sequence[str]) -> tuple[DemoIds, list[int]]:
    """The demo registry's contract, routes and first day (sim/backfill.py's DemoIds), and the vehicles' ids."""
    vids = [await fleet.vehicle_id(conn, p) for p in plates]
    rows = [await conn.fetchrow(DEMO_ASSIGNMENT, v) for v in vids[:-1]]  # the last: the reserve, no route
    first = min(r["valid_from"] for r in rows)
    ids = DemoIds(rows[0]["contract_id"], [r["route_id"] for r in rows], first, first + timedelta(DEMO_SINCE_DAYS))
    return ids, vids


DEMO_ASSIGNMENT = """
SELECT a.route_id, r.contract_id, a.valid_from FROM route_assignments a JOIN routes r ON r.id = a.route_id
WHERE a.vehicle_id = $1 AND r.code LIKE 'DEMO-%' ORDER BY a.valid_from LIMIT 1"""
DEMO_CONTRACTOR_USER = "empresa.demo"


async def backfill_tokens(conn: Any, settings: Settings, contractor_id: int) -> tuple[str, str]:
    """API tokens of an hour for the demo's admin and its contractor's user (created once, its password kept in
    the data dir like the admin's), which the backfill acts as."""
    import secrets

    from telemetria.auth import store as auth
    from telemetria.auth.roles import Role

    user = await conn.fetchrow("SELECT id FROM users WHERE username = $1", DEMO_CONTRACTOR_USER)
    if user is None:
        password = secrets.token_urlsafe(12)
        user = await auth.add_user(conn, DEMO_CONTRACTOR_USER, password, Role.CONTRACTOR, contractor_id,
                                   full_name=DEMO_CONTRACTOR)  # fmt: skip
        path = settings.data_dir / "demo-contractor.txt"
        path.write_text(
            f"# Telemetria demo: the contractor's user\nuser: {DEMO_CONTRACTOR_USER}\npassword: {password}\n"
        )
        os.chmod(path, 0o600)
    admin = await conn.fetchval("SELECT id FROM users WHERE username = 'admin' AND active")
    until = datetime.now(UTC) + timedelta(hours=1)
    tokens = [(await auth.create_token(conn, uid, "demo backfill", until))["token"] for uid in (admin, user["id"])]
    return tokens[0], tokens[1]


async def _backfill(settings: Settings, url: str, seed: int, creds: list[tuple[str, str]],
                    plates: Sequence[str]) -> None:  # fmt: skip
    """The demo's past school days, in the background once the service is up (sim/backfill.py); said on the
    console when it starts and when it is done."""
    import time as clock_

    t0 = clock_.perf_counter()
    conn = await asyncpg.connect(settings.dsn())
    try:
        await init_connection(conn)
        ids, vids = await demo_ids(conn, plates)
        if await conn.fetchval("SELECT 1 FROM users WHERE username = 'admin' AND active") is None:
            print("[demo] no active 'admin' user: the past weeks are not filled in", flush=True)
            return
        contractor = await conn.fetchval("SELECT contractor_id FROM vehicles WHERE id = $1", vids[0])
        admin, company = await backfill_tokens(conn, settings, contractor)
        print(f"[demo] filling in the school days since {ids.first_day:%d/%m/%Y} in the background (runs made, "
              "partial and not made, occurrences, a closed month); the pages fill as it goes", flush=True)  # fmt: skip
        judged = settings.detector_interval_s > 0 and settings.rollup_interval_s > 0  # else nobody to wait for
        steps = await backfill(url, conn, seed=seed, creds=creds, ids=ids, vehicle_ids=vids,
                               admin={"Authorization": f"Bearer {admin}"},
                               contractor={"Authorization": f"Bearer {company}"},
                               wait_s=WAIT_S if judged else 0.0)  # fmt: skip
        for s in steps:
            print(f"[demo] {s}", flush=True)
        print(f"[demo] past weeks filled in ({clock_.perf_counter() - t0:.0f} s)", flush=True)
    except Exception as e:  # the live demo goes on without its past
        log.exception("demo backfill failed")
        print(f"[demo] filling in the past weeks failed: {e}", flush=True)
    finally:
        await conn.close()


async def run_demo(settings: Settings, *, host: str, port: int, vehicles: int, speedup: float, seed: int) -> None:
    """Serve the app and drive the demo fleet against it until interrupted."""
    from telemetria.app import create_app

    conn = await asyncpg.connect(settings.dsn())
    try:
        await init_connection(conn)
        # The route vehicles and, last, the contractor's reserve (no route: it stands in for the past weeks' runs).
        creds = await ensure_fleet(conn, settings, vehicles + 1, prefix=DEMO_PREFIX)
        # run_fleet drives creds[i] (the vehicle with plate i) along vehicle_route(seed, i): the same seed here.
        await ensure_demo_registry(conn, seed, demo_plates(vehicles))
        await ensure_reserve(conn, demo_plates(vehicles + 1)[-1], demo_plates(1)[0])
        admin = await ensure_demo_admin(conn, settings)
    finally:
        await conn.close()

    if "public_enabled" not in settings.model_fields_set:  # the demo shows the public area unless told not to
        settings = settings.model_copy(update={"public_enabled": True})
    settings, upfm_note = with_demo_upfm(settings, datetime.now(LOCAL_TZ).year)
    config = uvicorn_config(create_app(settings), settings, host=host, port=port, log_level="warning")
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        if serving.done():
            serving.result()
            return
        await asyncio.sleep(0.05)
    roads = await asyncpg.connect(settings.dsn())  # only once serving: a demo that could not start imports nothing
    try:
        await ensure_demo_roads(roads, seed, settings.data_dir)
    finally:
        await roads.close()
    url = f"http://{host}:{port}"
    text = banner(url, admin, settings.data_dir / "demo-admin.txt", vehicles, speedup, datetime.now(UTC))
    print(text, flush=True)
    if settings.public_enabled:
        print(f"Public area (no login; TELEMETRIA_PUBLIC_ENABLED=false turns it off): {url}/publico\n", flush=True)
    if upfm_note:
        print(upfm_note, flush=True)
    stop = asyncio.Event()
    pool = await create_pool(settings, min_size=1, max_size=1)
    tasks = [
        asyncio.create_task(_backfill(settings, url, seed, creds, demo_plates(vehicles + 1))),
        asyncio.create_task(
            run_simulator(url, creds[:vehicles], interval_s=30.0, seed=seed, speedup=speedup, stop=stop, plan=demo_run)
        ),
        asyncio.create_task(_report(pool, stop)),
    ]
    try:
        await serving
    finally:
        stop.set()
        tasks[0].cancel()  # the backfill, if still under way: each step is idempotent, the next start goes on
        await asyncio.gather(*tasks, return_exceptions=True)
        await pool.close()
