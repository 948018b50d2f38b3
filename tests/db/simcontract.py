"""The simulated contract's registry (sim/month.py routes) through the real API, shared by the month and week tests."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import date, time
from typing import Any

import asyncpg
import httpx

from telemetria.app import create_app
from telemetria.sim.month import PRICE_PER_KM, MonthRoute
from tests.conftest import ScratchDb
from tests.db.conftest import People, register


@dataclass
class Ids:
    contract: int  # the first contract
    routes: list[int]  # by route index
    vehicles: list[int]  # by fleet index
    auth: list[dict[str, str]]  # tracker auth by fleet index
    trackers: list[int]  # tracker id by fleet index
    contracts: list[int] = field(default_factory=list)  # by contract index (MonthRoute.contract)


@asynccontextmanager
async def app_client(db: ScratchDb, **settings: Any) -> AsyncIterator[httpx.AsyncClient]:
    """The real application on `db`, in-process, its rollup refresher off (the test runs it)."""
    app = create_app(db.settings(rollup_interval_s=0, **settings))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            c.app = app  # type: ignore[attr-defined]
            yield c


def ok(r: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert r.status_code == status, r.text
    return dict(r.json())


async def set_up(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, routes: Sequence[MonthRoute],
    no_school: Sequence[date], fleet: int, plate: str = "MES", unique_id: str = "sim-month",
    morning_only: Sequence[date] = (), dismissals: Sequence[tuple[date, time]] = (),
) -> Ids:  # fmt: skip
    """Vehicles with trackers, the contract, the school year, the routes with their stops, the assignments.

    Fleet vehicle i has plate f"{plate}{1 + i}A{i:02d}" and tracker f"{unique_id}-{i}", all the contractor's;
    route k is assigned to fleet vehicle routes[k].vehicle on weekdays from the school year's start, and belongs
    to contract routes[k].contract (017/2026, then 018/2026...). The school year marks `no_school` days, the
    `morning_only` days (no school in the tarde and noite shifts) and the early `dismissals` (tarde runs due from).
    """
    mon = people.auth("monitor")
    trackers = [await register(conn, f"{plate}{1 + i}A{i:02d}", f"{unique_id}-{i}") for i in range(fleet)]
    for t in trackers:
        ok(await client.patch(f"/api/v1/vehicles/{t.vehicle_id}", json={"contractor_id": people.contractor_id},
                                     headers=mon))  # fmt: skip
    cids = []
    for n in range(1 + max(r.contract for r in routes)):
        contract = {"contractor_id": people.contractor_id, "number": f"{17 + n:03d}/2026", "lot": "1",
                    "valid_from": "2026-02-01", "valid_to": "2026-12-31",
                    "price_per_km": str(PRICE_PER_KM)}  # fmt: skip
        cids.append((ok(await client.post("/api/v1/contracts", json=contract, headers=mon), 201))["id"])
    year = {
        "start": "2026-02-02",
        "end": "2026-12-18",
        "extra_school_days": [],
        "no_school_days": [{"date": d.isoformat(), "reason": "Chuva fechou as estradas"} for d in no_school]
        + [{"date": d.isoformat(), "reason": "Conselho de classe à tarde", "shifts": ["tarde", "noite"]}
           for d in morning_only],
        "schedule_changes": [{"date": d.isoformat(), "shift": "tarde", "runs_due_from": t.isoformat("minutes"),
                              "reason": "Saída antecipada"} for d, t in dismissals],
    }  # fmt: skip
    ok(await client.put("/api/v1/school-years/2026", json=year, headers=mon))
    route_ids = []
    for r in routes:
        line = r.route.line
        route = {
            "code": r.code, "name": f"Linha {r.code}", "school_year": 2026, "shift": "matutino",
            "contract_id": cids[r.contract], "declared_km": float(r.declared_km),
            # registered at the school year's start, as the Secretaria does: its first version is in force from then
            "effective_from": "2026-02-02",
            "geometry": {"type": "LineString", "coordinates": [[float(x), float(y)] for x, y in
                                                               zip(line.lon, line.lat, strict=True)]},
            "stops": [{"name": s.name, "kind": s.kind, "lat": s.lat, "lon": s.lon,
                       "scheduled_time": s.scheduled.isoformat("minutes")} for s in r.stops],
        }  # fmt: skip
        rid = (ok(await client.post("/api/v1/routes", json=route, headers=mon), 201))["id"]
        route_ids.append(rid)
        assign = {"route_id": rid, "vehicle_id": trackers[r.vehicle].vehicle_id, "valid_from": "2026-02-02",
                  "weekdays": [1, 2, 3, 4, 5], "effective_from": "2026-02-02"}  # fmt: skip
        ok(await client.post("/api/v1/route-assignments", json=assign, headers=mon), 201)
    return Ids(cids[0], route_ids, [t.vehicle_id for t in trackers], [t.auth for t in trackers],
               [t.id for t in trackers], cids)  # fmt: skip
