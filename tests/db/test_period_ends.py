"""A period's end is the last day, minute or second included, in every report and in the audit log.

The history page asks for `to=…T23:59`: that minute is part of the period, so a whole day asked for
by minutes gives exactly what the day asked for as a date gives.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson

from telemetria.localtime import LOCAL_TZ
from tests.db.conftest import People, register

DAY = "2026-10-14"


def _fixes() -> list[dict[str, Any]]:
    """Two fixes a minute before the day's last minute, four inside it (23:59:00 to 23:59:59), one the next day."""
    base = datetime.fromisoformat(f"{DAY}T23:58:00").replace(tzinfo=LOCAL_TZ)
    seconds = [0, 30, 60, 75, 90, 119, 125]
    return [
        {"ts": (base + timedelta(seconds=s)).isoformat(), "lat": -10.44 + i * 1e-4, "lon": -62.47, "speed_kmh": 20.0}
        for i, s in enumerate(seconds)
    ]


async def _positions(client: httpx.AsyncClient, people: People, vid: int, start: str, end: str) -> list[str]:
    params = {"vehicle_id": str(vid), "from": start, "to": end}
    r = await client.get("/api/v1/reports/track", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    return [p["time"] for p in orjson.loads(r.content)["positions"]]


async def test_the_last_minute_named_by_to_is_part_of_the_period(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    t = await register(conn, "END1A59", "period-end-1")
    r = await client.post("/api/v1/fixes", json={"fixes": _fixes()}, headers=t.auth)
    assert r.status_code == 200 and not r.json()["rejected"], r.text

    whole_day = await _positions(client, people, t.vehicle_id, DAY, DAY)
    by_minutes = await _positions(client, people, t.vehicle_id, f"{DAY}T00:00", f"{DAY}T23:59")
    assert len(whole_day) == 6  # the seventh is the next day's
    assert by_minutes == whole_day
    last_minute = await _positions(client, people, t.vehicle_id, f"{DAY}T23:59", f"{DAY}T23:59")
    assert [p[11:19] for p in last_minute] == ["23:59:00", "23:59:15", "23:59:30", "23:59:59"]
    # Seconds name a second: up to 23:59:30 includes the fix at 23:59:30 and nothing after.
    to_second = await _positions(client, people, t.vehicle_id, f"{DAY}T23:59:00", f"{DAY}T23:59:30")
    assert [p[11:19] for p in to_second] == ["23:59:00", "23:59:15", "23:59:30"]


async def test_the_audit_log_takes_local_dates_with_the_same_rule(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    late = datetime.fromisoformat(f"{DAY}T23:59:40").replace(tzinfo=LOCAL_TZ)
    await conn.execute(
        "INSERT INTO audit_log (at, username, role, action) VALUES ($1, 'auditor', 'auditor', 'test.period_end')", late
    )
    for start, end in ((DAY, DAY), (f"{DAY}T00:00", f"{DAY}T23:59")):
        r = await client.get(
            "/api/v1/audit", params={"from": start, "to": end, "action": "test"}, headers=people.auth("admin")
        )
        assert r.status_code == 200, r.text
        assert [e["action"] for e in r.json()["items"]] == ["test.period_end"], (start, end)
    r = await client.get("/api/v1/audit", params={"from": "14/10/2026"}, headers=people.auth("admin"))
    assert r.status_code == 400 and r.json()["field"] == "from"
