"""A drive across local midnight: its km fall on the local days (America/Porto_Velho, UTC−4) the fixes belong to.

Local midnight is 04:00 UTC. The same figures come out computed from the fixes and from the
rollups, and whether the day after arrived first or last.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
from pyproj import Geod

from telemetria.localtime import LOCAL_TZ
from telemetria.reports.store import rollup
from tests.db.conftest import People, register

STEP_S, KMH = 30, 36.0  # heading north
GEOD = Geod(ellps="WGS84")


def _drive(midnight: datetime) -> list[dict[str, Any]]:
    """20 minutes at 36 km/h due north, from 10 minutes before local midnight to 10 after (41 fixes, ~298 m apart)."""
    start = midnight - timedelta(minutes=10)
    m_per_deg = 111_320.0
    return [
        {"ts": (start + timedelta(seconds=STEP_S * i)).isoformat(), "lat": -10.6 + i * 300.0 / m_per_deg,
         "lon": -62.47, "speed_kmh": KMH, "heading_deg": 0, "ignition": True}
        for i in range(41)
    ]  # fmt: skip


async def _km_by_day(client: httpx.AsyncClient, people: People, vid: int, first: str, last: str) -> dict[str, Any]:
    params = {"vehicle_id": str(vid), "from": first, "to": last, "by": "day"}
    r = await client.get("/api/v1/reports/km", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    return dict(orjson.loads(r.content))


def _unnamed(row: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in ("vehicle_id", "plate")}


async def test_km_of_a_drive_across_local_midnight_fall_on_each_local_day(
    client: httpx.AsyncClient, conn: asyncpg.Connection, pool: asyncpg.Pool, people: People
) -> None:
    today = datetime.now(LOCAL_TZ).date()
    day = today - timedelta(days=3)  # closed: rollups may hold it
    midnight = datetime.combine(day + timedelta(days=1), datetime.min.time(), LOCAL_TZ)
    assert midnight.astimezone(UTC).hour == 4
    fixes = _drive(midnight)
    t = await register(conn, "MDN1A23", "midnight-1", since=midnight - timedelta(days=2))
    after, before = fixes[20:], fixes[:21]  # the day after arrives first; the fix at midnight twice
    for batch in (after, before):
        r = await client.post("/api/v1/fixes", json={"fixes": batch}, headers=t.auth)
        assert r.status_code == 200 and not r.json()["rejected"], r.text

    first, last = str(day), str(day + timedelta(days=1))
    live = await _km_by_day(client, people, t.vehicle_id, first, last)
    rows = {r["date"]: r for r in live["vehicles"]}
    assert set(rows) == {first, last}
    # 10 minutes at 36 km/h on each side; the segment ending at 04:00:00Z belongs to the day before.
    # A fix at local midnight is the new day's, and each day owns the segments that end in it: the day
    # before gets the 19 segments up to 23:59:30, the day after the 21 from there to 00:10:00.
    step_km = GEOD.inv(-62.47, -10.6, -62.47, -10.6 + 300.0 / 111_320.0)[2] / 1000.0
    assert math.isclose(rows[first]["km"], 19 * step_km, rel_tol=1e-3)
    assert math.isclose(rows[last]["km"], 21 * step_km, rel_tol=1e-3)
    assert (rows[first]["fixes"], rows[last]["fixes"]) == (20, 21)
    assert rows[first]["last_fix"] == f"{first}T23:59:30-04:00"
    assert rows[last]["first_fix"] == f"{last}T00:00:00-04:00"

    # A twin vehicle that got the same fixes in the other order has the same days.
    twin = await register(conn, "MDN1A24", "midnight-2", since=midnight - timedelta(days=2))
    for batch in (before, after):
        assert (await client.post("/api/v1/fixes", json={"fixes": batch}, headers=twin.auth)).status_code == 200
    twin_rows = (await _km_by_day(client, people, twin.vehicle_id, first, last))["vehicles"]
    assert [_unnamed(r) for r in twin_rows] == [_unnamed(r) for r in live["vehicles"]]

    assert await rollup.refresh(pool) >= 2
    rolled = await _km_by_day(client, people, t.vehicle_id, first, last)
    assert rolled["vehicle_days"]["computed_live"] == 0
    assert rolled["vehicles"] == live["vehicles"]
