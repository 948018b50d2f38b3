"""Reports with an imported road network (issue 20), through the real API and database: a vehicle with no route
assigned drives the simulator's grid, which is imported as the network; its km go along the roads, split paved and
unpaved, its positions and places name the roads, and the rollup keeps the same figures. A network applies from
its first day: importing one leaves the days before it as they were, a back-dated one recomputes them."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import openpyxl
import orjson
import pytest

from telemetria.reports.store import rollup
from telemetria.roads import api as roads_api
from telemetria.roads import store
from telemetria.sim import TrackerParams, simulate_vehicle
from telemetria.sim.roadnet import grid_localities, grid_ways
from telemetria.sim.roads import make_grid
from telemetria.sim.wire import body
from tests.db.conftest import People, make_people, register

SEED = 5
START = datetime(2026, 11, 23, 10, 0, tzinfo=UTC)  # a Monday, 06:00 in Jaru
DAY = date(2026, 11, 23)


@pytest.fixture
async def people(conn: asyncpg.Connection, clean: None) -> People:
    return await make_people(conn)


async def km_row(client: httpx.AsyncClient, people: People, vehicle_id: int, kind: str = "km") -> dict[str, Any]:
    params = {"vehicle_id": str(vehicle_id), "from": str(DAY), "to": str(DAY)}
    r = await client.get(f"/api/v1/reports/{kind}", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    return dict(orjson.loads(r.content))


async def import_grid(conn: asyncpg.Connection, first_day: date, name: str = "grid.osm.pbf") -> int:
    grid = make_grid(SEED)
    network = await store.import_ways(
        conn, iter(grid_ways(grid)), source=name, sha256=name * 2, by="test", effective_from=first_day,
        localities=grid_localities(grid),
    )  # fmt: skip
    return network.id


async def drive(client: httpx.AsyncClient, conn: asyncpg.Connection, plate: str) -> tuple[int, float]:
    """A vehicle with no route driving the simulator's run on its grid; its id and the true km."""
    run = simulate_vehicle(SEED, START, 30, tracker=TrackerParams(loss_per_hour=0.0))
    t = await register(conn, plate, f"road-{plate}", since=START - timedelta(days=3))
    for u in run.uploads:
        r = await client.post("/api/v1/fixes", content=body(u.fixes), headers=t.auth)
        assert r.status_code == 200, r.text
    return t.vehicle_id, run.truth.distance_m / 1000


async def test_a_vehicle_off_any_route_is_measured_along_the_roads_and_its_places_are_named(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, people: People
) -> None:
    vehicle_id, true_km = await drive(client, conn, "ROD1A11")
    before = (await km_row(client, people, vehicle_id))["vehicles"][0]
    assert before["method"] == "chord" and before["road_km"] == 0 and before["paved_km"] == 0

    assert "road_networks" not in await km_row(client, people, vehicle_id)  # no network: the answer as before
    network_id = await import_grid(conn, DAY)
    answer = await km_row(client, people, vehicle_id)
    assert answer["road_networks"] == [
        {"network_id": network_id, "source": "grid.osm.pbf", "sha256": "grid.osm.pbf" * 2, "effective_from": str(DAY)}
    ]
    row = answer["vehicles"][0]
    assert row["method"] == "road+chord" or row["method"] == "road"
    assert row["km"] == pytest.approx(true_km, rel=0.01)
    assert abs(row["km"] - true_km) < abs(before["km"] - true_km)  # the corners chords cut are given back
    assert row["road_km"] >= 0.95 * row["km"]
    assert row["paved_km"] > 0 and row["unpaved_km"] > 0
    assert row["paved_km"] + row["unpaved_km"] == pytest.approx(row["road_km"], abs=0.01)

    track = await km_row(client, people, vehicle_id, "track")
    named = [p["road"] for p in track["positions"] if p["used"]]
    assert sum(r is not None for r in named) >= 0.9 * len(named)
    assert any(r and r.startswith("Linha ") for r in named) or any(r and r.startswith("Travessão") for r in named)
    roads = [p for p in track["places"] if p["kind"] == "road"]
    assert len(roads) >= 3 and all(p["road"] == p["name"] and p["end"] >= p["time"] for p in roads)
    assert sum(p["km"] for p in roads) == pytest.approx(row["road_km"], rel=0.05)
    xlsx = await client.get(
        "/api/v1/reports/km", params={"vehicle_id": str(vehicle_id), "from": str(DAY), "to": str(DAY),
                                      "format": "xlsx"}, headers=people.auth("auditor"),
    )  # fmt: skip
    assert xlsx.status_code == 200
    sheet = openpyxl.load_workbook(io.BytesIO(xlsx.content), read_only=True)["Consulta"]
    query = {row[0]: row[1] for row in sheet.iter_rows(values_only=True) if row and row[0]}
    assert "grid.osm.pbf, em vigor desde 23/11/2026" in str(query["Malha viária (OpenStreetMap)"])
    # The run ends at Jaru's school: the places near the town say so, and a trip's end place names it.
    assert {p["locality"] for p in track["places"]} >= {"Jaru"}
    trips = (await km_row(client, people, vehicle_id, "trips"))["trips"]
    assert any("Jaru (a " in (t["end_place"] or "") for t in trips), [t["end_place"] for t in trips]
    stops = (await km_row(client, people, vehicle_id, "stops"))["stops"]
    assert stops and all("road" in s for s in stops) and any(s["road"] for s in stops)

    # The closed day's rollup holds the same figures (the network is part of its basis).
    assert await rollup.refresh(pool, now=START + timedelta(days=2)) >= 1
    rolled = await km_row(client, people, vehicle_id)
    assert rolled["vehicle_days"] == {"from_rollups": 1, "computed_live": 0}
    assert rolled["vehicles"][0] == row


async def test_a_network_applies_from_its_first_day_and_a_back_dated_one_recomputes(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, people: People
) -> None:
    vehicle_id, _ = await drive(client, conn, "ROD2B22")
    await import_grid(conn, DAY + timedelta(days=1), "next-day.osm.pbf")  # from the day after: DAY keeps chords
    row = (await km_row(client, people, vehicle_id))["vehicles"][0]
    assert row["method"] == "chord" and row["road_km"] == 0
    assert await rollup.refresh(pool, now=START + timedelta(days=2)) >= 1
    assert (await km_row(client, people, vehicle_id))["vehicle_days"]["from_rollups"] == 1

    # Imported again from DAY on: that day is marked, recomputed along the roads, the earlier network superseded.
    await import_grid(conn, DAY, "from-day.osm.pbf")
    assert await conn.fetchval("SELECT count(*) FROM road_networks WHERE superseded") == 1
    row = (await km_row(client, people, vehicle_id))["vehicles"][0]
    assert row["method"] in ("road", "road+chord") and row["road_km"] > 0
    assert await rollup.refresh(pool, now=START + timedelta(days=2)) >= 1
    rolled = await km_row(client, people, vehicle_id)
    assert rolled["vehicle_days"]["from_rollups"] == 1 and rolled["vehicles"][0] == row


async def test_the_offline_base_layer_and_the_status(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, monkeypatch: pytest.MonkeyPatch
) -> None:
    auth = people.auth("auditor")
    assert (await client.get("/api/v1/roads/status", headers=auth)).json() == {"network": None}
    box = "-62.60,-10.55,-62.35,-10.30"
    empty = (await client.get("/api/v1/roads", params={"bbox": box}, headers=auth)).json()
    assert empty["features"] == [] and empty["network_id"] is None
    network_id = await import_grid(conn, DAY)
    status = (await client.get("/api/v1/roads/status", headers=auth)).json()["network"]
    assert status["network_id"] == network_id and status["effective_from"] == str(DAY) and status["ways"] == 1200
    near = (await client.get("/api/v1/roads", params={"bbox": box, "zoom": "14"}, headers=auth)).json()
    assert near["network_id"] == network_id and not near["truncated"]
    labels = {f["properties"]["road"] for f in near["features"]}
    assert "BR-364" in labels and any(x and x.startswith("Linha ") for x in labels)
    far = (await client.get("/api/v1/roads", params={"bbox": box, "zoom": "8"}, headers=auth)).json()
    assert {f["properties"]["highway"] for f in far["features"]} == {"trunk"}  # from afar, the highway only
    monkeypatch.setattr(roads_api, "MAX_FEATURES", 10)  # more ways in the box than an answer carries
    few = (await client.get("/api/v1/roads", params={"bbox": box, "zoom": "14"}, headers=auth)).json()
    assert few["truncated"] and len(few["features"]) == 10
    for bad in ("1,2,3", "a,b,c,d", "-62,-10,-63,-9", "-70,-20,-60,-5"):
        r = await client.get("/api/v1/roads", params={"bbox": bad}, headers=auth)
        assert r.status_code == 400 and r.json()["field"] == "bbox", bad
    assert (await client.get("/api/v1/roads", params={"bbox": box})).status_code == 401
