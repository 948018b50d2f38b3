"""The unpaved price through the real API and database (docs/contracts.md, "Unpaved price"): a contract with two
prices, a route on the simulator's grid driven by its vehicle; without a road network the boletim pays every km at
price_per_km, and with the grid imported as the network in force from before the month it pays each run's
unpaved share (recomputed here from the route's pavement profile) at price_per_km_unpaved."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from decimal import ROUND_HALF_EVEN
from decimal import Decimal as D
from typing import Any

import asyncpg
import httpx
import orjson

from telemetria.contracts.money import METRE, to_cents
from telemetria.measurement import plans
from telemetria.reports.analysis.engine import line as route_line
from telemetria.reports.analysis.roads import profile
from telemetria.reports.store import asof
from telemetria.roads import inforce, store
from telemetria.sim import TrackerParams, simulate_vehicle
from telemetria.sim.roadnet import grid_ways
from telemetria.sim.roads import make_grid
from telemetria.sim.vehicle import vehicle_route
from telemetria.sim.wire import body
from tests.db.conftest import People, register

SEED = 5
START = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)  # a Monday, 06:00 in Jaru
DAY = date(2026, 11, 23)
PRICE, UNPAVED = D("4.50"), D("6.10")


async def _setup(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> dict[str, int]:
    mon = people.auth("monitor")
    t = await register(conn, "UNP1A11", "unpaved-1", since=START - timedelta(days=3))
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id, t.vehicle_id)
    r = await client.put("/api/v1/school-years/2026", headers=mon, json={"start": "2026-02-02", "end": "2026-12-18"})
    assert r.status_code == 200, r.text
    r = await client.post("/api/v1/contracts", headers=mon, json={
        "contractor_id": people.contractor_id, "number": "021/2026", "lot": "1", "valid_from": "2026-02-01",
        "valid_to": "2026-12-31", "price_per_km": str(PRICE), "price_per_km_unpaved": str(UNPAVED)})  # fmt: skip
    assert r.status_code == 201, r.text
    k = r.json()["id"]
    sim = vehicle_route(SEED, 0)
    geometry = {"type": "LineString", "coordinates": [[float(x), float(y)] for x, y in
                                                      zip(sim.line.lon, sim.line.lat, strict=True)]}  # fmt: skip
    declared = round(sim.length_m / 1000, 3)
    route = await conn.fetchval(
        "INSERT INTO routes (code, name, school_year, geometry, length_m, declared_km, contract_id)"
        " VALUES ('G01', 'Linha da grade', 2026, $1, $2, $3, $4) RETURNING id",
        geometry, sim.length_m, declared, k,
    )  # fmt: skip
    await conn.execute(
        "INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, '2026-02-01')",
        route, t.vehicle_id,
    )  # fmt: skip
    run = simulate_vehicle(SEED, START, 30, tracker=TrackerParams(loss_per_hour=0.0))
    for u in run.uploads:
        r = await client.post("/api/v1/fixes", content=body(u.fixes), headers=t.auth)
        assert r.status_code == 200, r.text
    return {"k": k, "route": route}


async def _boletim(client: httpx.AsyncClient, people: People, k: int, **params: str) -> httpx.Response:
    q = {"contract_id": str(k), "from": str(DAY), "to": str(DAY), **params}
    r = await client.get("/api/v1/reports/measurement", params=q, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    return r


async def _import(conn: asyncpg.Connection, first_day: date, *, paved: bool = False) -> int:
    """The simulator's grid as the road network in force from `first_day` (every way paved when `paved`)."""
    ways = [replace(w, surface="asphalt") if paved else w for w in grid_ways(make_grid(SEED))]
    name = "paved-grid.osm.pbf" if paved else "grid.osm.pbf"
    net = await store.import_ways(conn, iter(ways), source=name, sha256=name[0] * 64, by="test",
                                  effective_from=first_day)  # fmt: skip
    return net.id


def _d(x: Any) -> D:
    return D(str(x))


async def _expected_shares(conn: asyncpg.Connection, route_id: int, network: int) -> dict[int, D]:
    """Run number → unpaved share, recomputed from the route version of the day and the network's profile."""
    route = (await asof.routes_on(conn, [route_id], DAY))[route_id]
    line = route_line(route)
    prof = profile(line, await inforce.roads(conn, network))
    out = {}
    for p in plans.plan_runs(route, line, DAY):
        _, unpaved_m = prof.split(p.m_from, p.m_to)
        u = D(repr(unpaved_m)) / D(repr(p.m_to - p.m_from))
        out[p.run_no] = min(max(u, D(0)), D(1)).quantize(D("0.000001"), rounding=ROUND_HALF_EVEN)
    return out


async def test_the_unpaved_share_is_paid_at_the_second_price_once_a_network_is_in_force(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    ids = await _setup(client, conn, people)
    before = orjson.loads((await _boletim(client, people, ids["k"])).content)
    assert before["runs"] and all(r["status"] == "made" for r in before["runs"])
    for r in before["runs"]:  # no network: today's figures
        assert r["unpaved_km"] == 0 and r["price_per_km_unpaved"] == 6.1 and r["price_per_km"] == 4.5
        assert _d(r["amount"]) == to_cents(_d(r["payable_km"]) * PRICE)
    (k0,) = before["contracts"]
    assert k0["price_per_km_unpaved"] == 6.1 and k0["unpaved_km"] == 0 and k0["routes"][0]["unpaved_km"] == 0
    assert k0["road_networks"] == []

    await _import(conn, DAY + timedelta(days=1))  # in force only from the next day: the day is paid as before
    assert orjson.loads((await _boletim(client, people, ids["k"])).content) == before
    network = await _import(conn, date(2026, 11, 1))  # back-dated to before the month
    shares = await _expected_shares(conn, ids["route"], network)
    assert all(D(0) < u < D(1) for u in shares.values()), shares  # the grid's roads are partly unpaved

    after = orjson.loads((await _boletim(client, people, ids["k"])).content)
    assert len(after["runs"]) == len(before["runs"])
    for r, b in zip(after["runs"], before["runs"], strict=True):
        payable = _d(r["payable_km"])
        assert payable == _d(b["payable_km"]) and payable > 0
        unpaved = (payable * shares[r["run_no"]]).quantize(METRE, rounding=ROUND_HALF_EVEN)
        assert _d(r["unpaved_km"]) == unpaved > 0
        assert _d(r["amount"]) == to_cents((payable - unpaved) * PRICE + unpaved * UNPAVED) > _d(b["amount"])
    (k1,) = after["contracts"]
    assert _d(k1["unpaved_km"]) == _d(k1["routes"][0]["unpaved_km"]) == sum(_d(r["unpaved_km"]) for r in after["runs"])
    assert _d(k1["amount"]) == sum(_d(r["amount"]) for r in after["runs"])
    assert [(n["network_id"], n["source"], n["effective_from"]) for n in k1["road_networks"]] == [
        (network, "grid.osm.pbf", "2026-11-01")
    ]  # the boletim names the network its unpaved km rest on
    again = await _boletim(client, people, ids["k"])
    assert orjson.loads(again.content) == after  # the same fixes, registry and network: the same figures

    text = (await _boletim(client, people, ids["k"], format="csv")).content.decode("utf-8")
    rows = list(csv.DictReader(io.StringIO(text[1:]), delimiter=";"))
    first = after["runs"][0]
    assert _d(rows[0]["Km não pavimentados (pagos)"].replace(",", ".")) == _d(first["unpaved_km"])
    assert rows[0]["Preço por km não pavimentado (R$)"] == "6,10"
    assert _d(rows[-1]["Km não pavimentados (pagos)"].replace(",", ".")) == _d(k1["unpaved_km"])


async def test_a_closed_month_keeps_its_unpaved_km_when_the_network_changes(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    ids = await _setup(client, conn, people)
    first_network = await _import(conn, date(2026, 11, 1))
    month = {"from": "2026-11-01", "to": "2026-11-30"}
    live = orjson.loads((await _boletim(client, people, ids["k"], **month)).content)
    made = [r for r in live["runs"] if r["status"] == "made"]
    assert made and all(r["unpaved_km"] > 0 for r in made)
    r = await client.post(f"/api/v1/measurements/{ids['k']}/2026-11/close", headers=people.auth("monitor"),
                          json={"confirm_early": True})  # a recent month: within the grace period  # fmt: skip
    assert r.status_code == 201, r.text

    await _import(conn, date(2026, 11, 1), paved=True)  # a corrected network: every way paved, back-dated
    frozen = orjson.loads((await _boletim(client, people, ids["k"], **month)).content)
    assert frozen["runs"] == live["runs"] and frozen["contracts"][0]["amount"] == live["contracts"][0]["amount"]
    assert frozen["contracts"][0]["unpaved_km"] == live["contracts"][0]["unpaved_km"] > 0
    closed = await conn.fetchval("SELECT content FROM measurement_closures WHERE contract_id = $1", ids["k"])
    names = orjson.loads(bytes(closed))["contract"]["road_networks"]
    assert [n["network_id"] for n in names] == [first_network]  # the closed boletim keeps what it rested on
    assert frozen["contracts"][0]["road_networks"] == names  # and says so, not the network in force now

    r = await client.post(f"/api/v1/measurements/{ids['k']}/2026-11/reopen", headers=people.auth("admin"),
                          json={"reason": "malha corrigida"})  # fmt: skip
    assert r.status_code == 200, r.text
    again = orjson.loads((await _boletim(client, people, ids["k"], **month)).content)
    for r2 in again["runs"]:  # every way paved: every km at the main price
        assert r2["unpaved_km"] == 0 and _d(r2["amount"]) == to_cents(_d(r2["payable_km"]) * PRICE)
