"""A trip still under way is marked as such: the vehicle left, has not stopped yet, and reported minutes ago."""

from __future__ import annotations

import csv
import io
from datetime import datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson

from telemetria.localtime import LOCAL_TZ
from tests.db.conftest import People, register

STEP = 250.0 / 111_320.0  # degrees of latitude in 30 s at 30 km/h


def _drive(start: datetime, moving: int, parked: int) -> list[dict[str, Any]]:
    """`moving` fixes 30 s apart heading north at 30 km/h, then `parked` fixes standing where it arrived."""
    fixes = []
    for i in range(moving + parked):
        lat = -10.5 + STEP * min(i, moving - 1)
        fixes.append({"ts": (start + timedelta(seconds=30 * i)).isoformat(), "lat": lat, "lon": -62.47,
                      "speed_kmh": 30.0 if i < moving else 0.0, "ignition": True})  # fmt: skip
    return fixes


async def test_the_last_trip_of_a_vehicle_still_on_its_way_is_in_progress(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    now = datetime.now(LOCAL_TZ)
    driving = await register(conn, "AND1A00", "in-progress-1", since=now - timedelta(days=1))
    arrived = await register(conn, "CHG1A00", "in-progress-2", since=now - timedelta(days=1))
    start = now - timedelta(minutes=12)
    for t, fixes in ((driving, _drive(start, 23, 0)), (arrived, _drive(start, 14, 9))):
        r = await client.post("/api/v1/fixes", json={"fixes": fixes}, headers=t.auth)
        assert r.status_code == 200 and not r.json()["rejected"], r.text
    today, yesterday = now.date().isoformat(), (now - timedelta(days=1)).date().isoformat()  # midnight-proof
    params = {"vehicle_id": [str(driving.vehicle_id), str(arrived.vehicle_id)], "from": yesterday, "to": today}
    r = await client.get("/api/v1/reports/trips", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    trips = {x["plate"]: x for x in orjson.loads(r.content)["trips"]}  # each vehicle's last trip
    assert trips["AND1A00"]["in_progress"] is True  # still moving at its newest fix, 30 s ago
    assert trips["CHG1A00"]["in_progress"] is False  # it reached a stop
    # A period that ended before now has no trip under way, even if the vehicle is driving.
    past = {**params, "to": (now - timedelta(minutes=2)).strftime("%Y-%m-%dT%H:%M")}
    r = await client.get("/api/v1/reports/trips", params=past, headers=people.auth("auditor"))
    assert not any(x["in_progress"] for x in orjson.loads(r.content)["trips"])
    r = await client.get("/api/v1/reports/trips", params={**params, "format": "csv"}, headers=people.auth("auditor"))
    rows = list(csv.DictReader(io.StringIO(r.content.decode("utf-8-sig")), delimiter=";"))
    assert {x["Placa"]: x["Em andamento"] for x in rows} == {"AND1A00": "Sim", "CHG1A00": "Não"}  # last rows
