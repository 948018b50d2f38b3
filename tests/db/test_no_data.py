"""A vehicle with no positions is not one that did not move, and a day that has not begun is not a row."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson

from telemetria.localtime import LOCAL_TZ
from tests.db.conftest import People, register


def _parked(day: datetime) -> list[dict[str, Any]]:
    """Ten minutes standing still at noon of `day`: positions, and no movement."""
    noon = day.replace(hour=12)
    return [
        {"ts": (noon + timedelta(seconds=30 * i)).isoformat(), "lat": -10.44, "lon": -62.47, "speed_kmh": 0.0}
        for i in range(20)
    ]


async def test_a_vehicle_without_positions_reads_differently_from_one_that_stood_still(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    today = datetime.now(LOCAL_TZ).replace(hour=0, minute=0, second=0, microsecond=0)
    yesterday = today - timedelta(days=1)
    parked = await register(conn, "PRK1A00", "no-data-parked", since=yesterday - timedelta(days=1))
    silent = await register(conn, "SIL1A00", "no-data-silent", since=yesterday - timedelta(days=1))
    r = await client.post("/api/v1/fixes", json={"fixes": _parked(yesterday)}, headers=parked.auth)
    assert r.status_code == 200 and not r.json()["rejected"], r.text

    first, last = yesterday.date().isoformat(), (today + timedelta(days=2)).date().isoformat()
    params = {"vehicle_id": [str(parked.vehicle_id), str(silent.vehicle_id)], "from": first, "to": last, "by": "day"}
    r = await client.get("/api/v1/reports/km", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    rows = orjson.loads(r.content)["vehicles"]
    # Yesterday and today only: the two days ahead are not rows.
    assert sorted((x["plate"], x["date"]) for x in rows) == sorted(
        (p, d.date().isoformat()) for p in ("PRK1A00", "SIL1A00") for d in (yesterday, today)
    )
    methods = {(x["plate"], x["date"]): x["method"] for x in rows}
    assert methods[("PRK1A00", first)] == "none"  # positions, no movement
    assert methods[("SIL1A00", first)] == "no_fixes"  # nothing at all
    assert methods[("PRK1A00", today.date().isoformat())] == "no_fixes"

    r = await client.get("/api/v1/reports/km", params={**params, "format": "csv"}, headers=people.auth("auditor"))
    header, *lines = r.content.decode("utf-8-sig").splitlines()
    names = header.split(";")
    cells = [dict(zip(names, line.split(";"), strict=True)) for line in lines]
    by_row = {(c["Placa"], c["Data"]): c for c in cells}
    dmy = yesterday.strftime("%d/%m/%Y")
    assert (by_row[("PRK1A00", dmy)]["Km"], by_row[("PRK1A00", dmy)]["Método"]) == ("0,00", "sem deslocamento")
    assert (by_row[("SIL1A00", dmy)]["Km"], by_row[("SIL1A00", dmy)]["Método"]) == ("", "sem posições")
    assert len(cells) == 5  # four vehicle-days and the TOTAL

    params.pop("by")
    r = await client.get("/api/v1/reports/reporting", params=params, headers=people.auth("auditor"))
    days = {x["date"] for x in orjson.loads(r.content)["days"]}
    assert days <= {first, today.date().isoformat()}
