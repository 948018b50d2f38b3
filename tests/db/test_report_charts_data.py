"""What the charts draw besides the tables' figures: planned route km in the km report, the limit per position."""

from __future__ import annotations

import csv
import io
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.sim import TrackerParams
from tests.db.conftest import People, make_people
from tests.db.test_reports_accuracy import DAY, _post, _register, _run

KM_FIELDS = {"vehicle_id", "plate", "prefix", "contractor", "km", "method", "route_km", "chord_km", "gap_km",
             "odometer_km", "fixes", "fixes_used", "driving_s", "max_kmh", "first_fix", "last_fix"}  # fmt: skip


@pytest.fixture
async def people(conn: asyncpg.Connection, clean: None) -> People:
    return await make_people(conn)


@pytest.fixture
async def vehicle(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> Any:
    """The recorded run of one vehicle, its route assigned every day from the day before (22/11)."""
    run = _run(2, tracker=TrackerParams(loss_per_hour=0.0))
    t = await _register(conn, people, run, "PLA1N00", "sim-planned")
    await _post(client, t, [[f for u in run.uploads for f in u.fixes]])
    return t


async def _get(client: httpx.AsyncClient, people: People, kind: str, **params: str) -> httpx.Response:
    r = await client.get(f"/api/v1/reports/{kind}", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    return r


async def test_km_by_day_carries_the_km_the_assigned_routes_plan(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, vehicle: Any
) -> None:
    week = {"vehicle_id": str(vehicle.vehicle_id), "from": "2026-11-20", "to": DAY}
    length_km = await conn.fetchval("SELECT length_m / 1000 FROM routes")
    doc = orjson.loads((await _get(client, people, "km", by="day", **week)).content)
    rows = {r["date"]: r for r in doc["vehicles"]}
    assert set(rows) == {"2026-11-20", "2026-11-21", "2026-11-22", "2026-11-23"}
    assert all(KM_FIELDS <= set(r) for r in rows.values())  # the fields there were stay as they were
    assert rows["2026-11-20"]["planned_km"] is None and rows["2026-11-21"]["planned_km"] is None  # no route yet
    assert rows["2026-11-22"]["planned_km"] == pytest.approx(length_km, abs=0.001)  # the line's length
    assert rows["2026-11-22"]["method"] == "no_fixes"  # planned, not run: the chart shows the planned bar alone
    assert rows["2026-11-23"]["km"] > 10

    # The declared km wins over the line's length; a second route on Mondays adds its km on Mondays only.
    await conn.execute("UPDATE routes SET declared_km = 41.5")
    route_id = await conn.fetchval(
        "INSERT INTO routes (code, name, school_year, geometry, length_m, declared_km)"
        " SELECT 'R-2', 'Segunda', 2026, geometry, 1000, 10 FROM routes LIMIT 1 RETURNING id"
    )
    await conn.execute(
        "INSERT INTO route_assignments (route_id, vehicle_id, valid_from, weekdays)"
        " VALUES ($1, $2, '2026-11-01', '{1}')",
        route_id, vehicle.vehicle_id,
    )  # fmt: skip
    doc = orjson.loads((await _get(client, people, "km", by="day", **week)).content)
    planned = {r["date"]: r["planned_km"] for r in doc["vehicles"]}
    assert planned == {"2026-11-20": None, "2026-11-21": None, "2026-11-22": 41.5, "2026-11-23": 51.5}
    assert doc["total_planned_km"] == 93.0

    whole = orjson.loads((await _get(client, people, "km", **week)).content)
    assert whole["vehicles"][0]["planned_km"] == 93.0 and whole["total_planned_km"] == 93.0

    # The CSV carries it too, as its last column, blank where no route was assigned; the TOTAL row sums it.
    text = (await _get(client, people, "km", by="day", format="csv", **week)).content.decode("utf-8-sig")
    table = list(csv.reader(io.StringIO(text, newline=""), delimiter=";"))
    assert table[0][-1] == "Km planejado (rotas)"
    assert [r[-1] for r in table[1:]] == ["", "", "41,50", "51,50", "93,00"]


async def test_no_route_assigned_plans_nothing(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, vehicle: Any
) -> None:
    await conn.execute("DELETE FROM route_assignments")
    day = {"vehicle_id": str(vehicle.vehicle_id), "from": DAY, "to": DAY}
    doc = orjson.loads((await _get(client, people, "km", **day)).content)
    assert doc["vehicles"][0]["planned_km"] is None and doc["total_planned_km"] is None


async def test_each_position_carries_the_limit_speeding_is_judged_by(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, vehicle: Any
) -> None:
    await conn.execute("UPDATE routes SET speed_limit_kmh = 55")
    day = {"vehicle_id": str(vehicle.vehicle_id), "from": DAY, "to": DAY}
    positions = orjson.loads((await _get(client, people, "track", **day)).content)["positions"]
    episodes = orjson.loads((await _get(client, people, "speeding", **day)).content)["episodes"]
    assert {p["limit_kmh"] for p in positions} == {55.0, 60.0}  # on the route, and off it (the detour): the default
    assert episodes
    for e in episodes:  # the limit of each episode is the one its top speed's position carries
        inside = [p for p in positions if e["start"] <= p["time"] <= e["end"] and p["speed_kmh"] == e["max_kmh"]]
        assert inside and inside[0]["limit_kmh"] == e["limit_kmh"]
