"""The demo's past weeks (issue 36, item 7): the school days before `./dev run` started, filled in through the service's
own HTTP API once it is up, as a real installation gets them.

A newcomer's first screen must have something to act on. For every school day (Monday to Friday) from the demo
registry's first day (30 days before the first start) to the day before the first start (the live demo drives from then
on; a later start posts the same days again, never later ones), each demo vehicle drives its route once in the morning
(the simulator of sim/vehicle.py, the live demo's drivers: they speed now and then, halt away from the stops), and PLAN
changes a few route-days: a run turned round before the school (`partial`), a vehicle left in its garage (`not_made`,
ignition off, still reporting), and a run made by the contractor's reserve bus, the fleet's last, which has no route of
its own (`substitution`). The trackers post those fixes to /api/v1/fixes as after days out of signal (store-and-
forward); the service's detector and rollups then find the occurrences and seal the days as they do for any fix. Then,
as the Secretaria and the contractor would in the browser (the same endpoints, with API tokens of an hour): one not-made
run justified; occurrences taken through each step of the process (Lei 3.588/2023 Art. 41–42, the procedure of Lei
14.133/2021): confirmed, notified, defended, decided with a fine, under appeal; and the last full month closed (its
boletim frozen with its SHA-256).

Idempotent: fixes are stored exactly once (a second post answers duplicates), and nothing is done twice: the
justification, the process steps and the close each look first at what is already there; a second start posts the same
days again (seconds: all duplicates) and moves nothing on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import httpx
import numpy as np

from telemetria.contracts import calendar
from telemetria.fix import Fix
from telemetria.localtime import LOCAL_TZ
from telemetria.sim import wire
from telemetria.sim.month import PARKED_EVERY_S, TURN_AT, turned
from telemetria.sim.polyline import offset
from telemetria.sim.roads import Route
from telemetria.sim.tracker import TrackerParams
from telemetria.sim.vehicle import DEFAULT_MOTION, simulate_vehicle, vehicle_route

log = logging.getLogger("telemetria.demo")

MORNING = time(6, 0)  # local: when each route's run starts (plus a few minutes per vehicle)
TRACKER = TrackerParams(loss_per_hour=0.0)  # the stored days come whole; the live demo plants signal losses
BATCH = 500  # fixes per POST, as a tracker emptying its buffer
WAIT_S = 240.0  # at most this long for the detector to judge the posted days
FINE_KINDS = ("speeding", "unauthorized_stop", "route_deviation")  # kinds with an article of Art. 36–39


# The detector's marks (occurrences/detection/queries.py DIRTY): a vehicle's fixes from dirty_from on are still
# to judge.
DIRTY_BEFORE = "SELECT count(*) FROM latest_fixes WHERE vehicle_id = ANY($1::int[]) AND dirty_from < $2"


@dataclass(frozen=True, slots=True)
class Plant:
    """What happens to vehicle `vehicle`'s route on school day `day` (0: the registry's first school day)."""

    kind: str  # partial | not_made | substitution
    day: int
    vehicle: int


# Over the 21–22 school days of the 30 days before the first start, the last weeks (the closed month's end and the
# current month's start, which the first screen shows) get them all.
PLAN = (
    Plant("partial", 19, 0), Plant("not_made", 18, 1), Plant("substitution", 17, 2),
    Plant("not_made", 15, 3), Plant("partial", 13, 4), Plant("not_made", 12, 0), Plant("substitution", 10, 1),
)  # fmt: skip
JUSTIFIED = PLAN[1]  # the not-made run the Secretaria justifies ("the vehicle broke down")


@dataclass(frozen=True, slots=True)
class DemoIds:
    """What the backfill needs from the demo registry (sim/demo.py ensure_demo_registry)."""

    contract_id: int
    route_ids: Sequence[int]  # by fleet index
    first_day: date  # the registry's first day (its route assignments')
    until: date  # the first start's day: the backfill's days are before it (after it, the live demo drove)


@dataclass
class Done:
    fixes: int = 0
    duplicates: int = 0
    steps: list[str] | None = None


def school_days(first: date, today: date) -> list[date]:
    """The school days from `first` to the day before `today`: Monday to Friday but the national holidays, as the
    demo's school year counts them (a run planted on 20 November, Dia da Consciência Negra, would not be due: the
    demo then showed no substitution when the 30 days put one there)."""
    out, d = [], first
    while d < today:
        if calendar.why_not(d, calendar.holidays_by_day(d.year)) is None:
            out.append(d)
        d += timedelta(days=1)
    return out


def closed_month(today: date) -> date:
    """The month the backfill closes: the last one fully over."""
    return (today.replace(day=1) - timedelta(days=1)).replace(day=1)


def plan_of(days: Sequence[date]) -> dict[tuple[date, int], Plant]:
    """PLAN by (day, vehicle); plants past the last of `days` are dropped."""
    return {(days[p.day], p.vehicle): p for p in PLAN if p.day < len(days)}


def parked(route: Route, t0: datetime, rng: np.random.Generator) -> list[Fix]:
    """A parked tracker's heartbeats at the garage for three hours: ignition off, a few metres of noise."""
    lat0, lon0 = float(route.line.lat[0]), float(route.line.lon[0])
    out = []
    for i in range(3 * 3600 // PARKED_EVERY_S):
        lat, lon = offset(lat0, lon0, float(rng.uniform(0, 360)), float(rng.uniform(0, 8)))
        out.append(Fix(ts=(t0 + timedelta(seconds=i * PARKED_EVERY_S)).astimezone(UTC), lat=round(lat, 7),
                       lon=round(lon, 7), speed_kmh=0.0, heading_deg=0.0, ignition=False))  # fmt: skip
    return out


def day_fixes(seed: int, vehicles: int, day: date, plan: dict[tuple[date, int], Plant]) -> dict[int, list[Any]]:
    """Every demo tracker's fixes of one school day, by fleet index (pure, seeded by the day): the `vehicles`
    route vehicles', and the reserve's (index `vehicles`)."""
    out: dict[int, list[Any]] = {v: [] for v in range(vehicles + 1)}
    n = day.toordinal()
    for v in range(vehicles):
        p = plan.get((day, v))
        route = vehicle_route(seed, v)
        start = datetime.combine(day, MORNING, LOCAL_TZ) + timedelta(minutes=5 * v)
        if p is not None and p.kind in ("not_made", "substitution"):
            out[v] += parked(route, start - timedelta(minutes=30), np.random.default_rng([seed, n, v, 5]))
            if p.kind == "substitution":
                sim = simulate_vehicle(seed, start, vehicle=v, run=2 * n, route=route, tracker=TRACKER)
                out[vehicles] += [f for u in sim.uploads for f in u.fixes]
            continue
        if p is not None and p.kind == "partial":
            route = turned(route, TURN_AT * route.length_m)
        sim = simulate_vehicle(seed, start, vehicle=v, run=2 * n, route=route, motion=DEFAULT_MOTION, tracker=TRACKER)
        out[v] += [f for u in sim.uploads for f in u.fixes]
    return {v: sorted({f.ts: f for f in fs}.values(), key=lambda f: f.ts) for v, fs in out.items()}


async def post_fixes(client: httpx.AsyncClient, creds: Sequence[tuple[str, str]], fixes: dict[int, list[Any]],
                     done: Done) -> None:  # fmt: skip
    """Each tracker's stored fixes to /api/v1/fixes in batches, as after a long time out of signal."""
    for v, fs in fixes.items():
        headers = {"Authorization": f"Bearer {creds[v][1]}", "Content-Type": "application/json"}
        for i in range(0, len(fs), BATCH):
            r = await client.post("/api/v1/fixes", content=wire.body(fs[i : i + BATCH]), headers=headers)
            r.raise_for_status()
            got = r.json()
            done.fixes += int(got.get("accepted", 0))
            done.duplicates += int(got.get("duplicates", 0))


async def _items(client: httpx.AsyncClient, h: dict[str, str], first: date, last: date, **q: str) -> list[Any]:
    r = await client.get("/api/v1/occurrences", params={"from": first.isoformat(), "to": last.isoformat(),
                                                        "limit": "500", **q}, headers=h)  # fmt: skip
    r.raise_for_status()
    return list(r.json()["items"])


async def _ok(r: httpx.Response, what: str) -> None:
    if r.status_code >= 400:
        raise RuntimeError(f"{what}: {r.status_code} {r.text[:300]}")


ORDER = ("detected", "confirmed", "notified", "defense", "decided", "under_appeal")
# The oldest occurrences the backfill takes through the process, and how far: one fined (decision not appealed),
# one under appeal, one defended, one notified, one confirmed.
TARGETS = ("decided", "under_appeal", "defense", "notified", "confirmed")


async def run_process(client: httpx.AsyncClient, admin: dict[str, str], contractor: dict[str, str], first: date,
                      last: date, steps: list[str]) -> None:  # fmt: skip
    """Occurrences at each step of the process: each of the oldest ones moved on from where it stands to its
    TARGETS step (so a backfill stopped half-way goes on, and a finished one does nothing)."""
    found = await _items(client, admin, first, last, status=",".join(ORDER))
    picked = sorted((o for o in found if o["kind"] in FINE_KINDS), key=lambda o: (o["start"], o["id"]))
    if len(picked) < len(TARGETS):
        steps.append(f"only {len(picked)} occurrence(s) to take through the process")
    for o, upto in zip(picked, TARGETS, strict=False):
        if ORDER.index(o["status"]) < ORDER.index(upto):
            await _advance(client, admin, contractor, o, upto)
            steps.append(f"occurrence {o['id']} ({o['kind']}, {o['article']}): {upto}")


async def _advance(client: httpx.AsyncClient, admin: dict[str, str], contractor: dict[str, str], o: dict[str, Any],
                   upto: str) -> None:  # fmt: skip
    base = f"/api/v1/occurrences/{o['id']}"
    at = ORDER.index(o["status"])
    if at < ORDER.index("confirmed"):
        await _ok(await client.post(f"{base}/review", json={"decision": "confirm"}, headers=admin), "confirm")
    if upto == "confirmed":
        return
    if at < ORDER.index("notified"):
        await _ok(await client.post(f"{base}/notify", headers=admin), "notify")
    if upto == "notified":
        return
    if at < ORDER.index("defense"):
        defence = {"text": "O condutor foi orientado e o veículo revisado; pedimos a conversão em advertência.",
                   "final": upto != "defense"}  # fmt: skip
        await _ok(await client.post(f"{base}/defense", json=defence, headers=contractor), "defense")
    if upto == "defense":
        return
    if at < ORDER.index("decided"):
        motivation = ("As posições registradas e o Termo de Constatação comprovam a infração; a defesa não "
                      "trouxe fato novo (Lei 3.588/2023, Art. 42).")  # fmt: skip
        for penalty in ("fine", "warning_and_fine"):  # the article says which (Art. 36–39)
            r = await client.post(f"{base}/decision", json={"penalty": penalty, "motivation": motivation},
                                  headers=admin)  # fmt: skip
            if not (r.status_code == 409 and r.json().get("field") == "penalty"):
                break
        await _ok(r, "decision")
    if upto == "under_appeal" and at < ORDER.index("under_appeal"):
        appeal = {"text": "Recorremos: o trecho é de declive e o limitador de velocidade foi revisado "
                  "(Lei 14.133/2021, Art. 165)."}  # fmt: skip
        await _ok(await client.post(f"{base}/appeal", json=appeal, headers=contractor), "appeal")


async def justify(client: httpx.AsyncClient, admin: dict[str, str], route_id: int, day: date,
                  steps: list[str]) -> None:  # fmt: skip
    body = {
        "route_id": route_id,
        "date": day.isoformat(),
        "reason": "Veículo em manutenção (quebra do eixo); a empresa comunicou às 5h40 e não havia reserva.",
    }
    r = await client.post("/api/v1/run-justifications", json=body, headers=admin)  # fmt: skip
    if r.status_code == 409:  # already justified (a second run)
        return
    await _ok(r, "justification")
    steps.append(f"run of route {route_id} on {day} justified")


async def close_month(client: httpx.AsyncClient, admin: dict[str, str], contract_id: int, month: date,
                      steps: list[str]) -> None:  # fmt: skip
    r = await client.post(f"/api/v1/measurements/{contract_id}/{month:%Y-%m}/close", json={"confirm_early": True},
                          headers=admin)  # fmt: skip
    if r.status_code == 409 and r.json().get("field") == "month" and "já está fechado" in r.json().get("detail", ""):
        return  # closed by an earlier start of the demo
    await _ok(r, "close")
    got = r.json()
    steps.append(f"{month:%Y-%m} closed: {got['payable_km']} km, R$ {got['amount']}, sha256 {got['sha256'][:12]}…")


async def wait_judged(conn: Any, vehicle_ids: Sequence[int], today: date, timeout_s: float = WAIT_S) -> bool:
    """Until the detector has judged every posted fix of the days before `today` (the demo vehicles' dirty marks,
    if any, are the live fleet's of today), or `timeout_s`."""
    since = datetime.combine(today, time(), LOCAL_TZ)
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while loop.time() < end:
        dirty = await conn.fetchval(DIRTY_BEFORE, list(vehicle_ids), since)
        if dirty == 0:
            return True
        await asyncio.sleep(2.0)
    return False


SEALED_DAYS = "SELECT count(DISTINCT day) FROM day_seals WHERE vehicle_id = ANY($1::int[]) AND day = ANY($2::date[])"


async def wait_sealed(conn: Any, vehicle_ids: Sequence[int], days: Sequence[date], timeout_s: float = WAIT_S) -> int:
    """Until the rollups have sealed every day of `days` (they seal each closed day with fixes), or `timeout_s`;
    how many are."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout_s
    while (n := int(await conn.fetchval(SEALED_DAYS, list(vehicle_ids), list(days)))) < len(days):
        if loop.time() > end:
            break
        await asyncio.sleep(2.0)
    return n


async def backfill(url: str, conn: Any, *, seed: int, creds: Sequence[tuple[str, str]], ids: DemoIds,
                   vehicle_ids: Sequence[int], admin: dict[str, str], contractor: dict[str, str],
                   today: date | None = None, wait_s: float = WAIT_S) -> list[str]:  # fmt: skip
    """Fill in the demo's past school days through the service at `url` (see the module's text); what it did.

    creds: the trackers' (unique id, token), the route vehicles' in fleet order then the reserve's; vehicle_ids
    in the same order."""
    today = today or datetime.now(LOCAL_TZ).date()
    until = min(today, ids.until)
    month = closed_month(until)
    steps: list[str] = []
    days = school_days(ids.first_day, until)
    if not days:
        return steps
    plan = plan_of(days)
    done = Done()
    async with httpx.AsyncClient(base_url=url, timeout=120.0) as client:
        for day in days:
            fixes = await asyncio.to_thread(day_fixes, seed, len(creds) - 1, day, plan)
            await post_fixes(client, creds, fixes, done)
        steps.append(f"{len(days)} school days posted: {done.fixes} fixes stored ({done.duplicates} already there)")
        if not await wait_judged(conn, vehicle_ids, today, wait_s):
            steps.append("the detector had not judged every day yet: the process steps may find fewer occurrences")
        sealed = await wait_sealed(conn, vehicle_ids, days, wait_s)
        steps.append(f"{sealed} of {len(days)} school days sealed (a SHA-256 per vehicle and day)")
        jday = days[JUSTIFIED.day] if JUSTIFIED.day < len(days) else None
        if jday is not None:
            await justify(client, admin, ids.route_ids[JUSTIFIED.vehicle], jday, steps)
        await run_process(client, admin, contractor, days[0], days[-1], steps)
        if ids.first_day <= month + timedelta(days=27):
            await close_month(client, admin, ids.contract_id, month, steps)
    return steps
