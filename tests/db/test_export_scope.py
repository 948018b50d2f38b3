"""Every export format of every report keeps a contractor inside its own fleet (the access matrix asks JSON only)."""

from __future__ import annotations

from datetime import datetime, timedelta

import asyncpg
import httpx
import pytest

from telemetria.localtime import LOCAL_TZ
from tests.db.conftest import People
from tests.db.world import World, make_world

KINDS = ("km", "summary", "speeding", "trips", "route-deviation", "stops", "track", "reporting", "schedule")
FORMATS = [(kind, "csv") for kind in KINDS] + [("track", f) for f in ("geojson", "gpx", "kml")]


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    w = await make_world(conn, people)
    start = datetime.combine(datetime.now(LOCAL_TZ).date() - timedelta(days=2), datetime.min.time(), LOCAL_TZ)
    for n in (1, 2):  # a short drive of each contractor's vehicle, two days ago
        await conn.executemany(
            "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon, speed_kmh) VALUES ($1, $2, $3, $4, $5, 40)",
            [(w[f"v{n}"], w[f"t{n}"], start + timedelta(hours=7, seconds=30 * i), -10.44 + i * 3e-4, -62.46)
             for i in range(20)],
        )  # fmt: skip
    w.ids["day"] = (start.date() - datetime(1970, 1, 1).date()).days
    return w


def _params(w: World, fmt: str, **select: int) -> dict[str, str]:
    day = str(datetime(1970, 1, 1).date() + timedelta(days=w["day"]))
    return {"from": day, "to": day, "format": fmt, **{k: str(v) for k, v in select.items()}}


@pytest.mark.parametrize(("kind", "fmt"), FORMATS)
async def test_a_contractor_exports_only_its_own_fleet(
    client: httpx.AsyncClient, world: World, kind: str, fmt: str
) -> None:
    mine = world.people.auth("contractor")
    url = f"/api/v1/reports/{kind}"
    for other in ({"vehicle_id": world["v2"]}, {"contractor_id": world["c2"]}):
        r = await client.get(url, params=_params(world, fmt, **other), headers=mine)
        assert r.status_code == 404, (kind, fmt, other, r.text)
        assert "BBB2B22" not in r.text
    own = await client.get(url, params=_params(world, fmt), headers=mine)
    assert own.status_code == 200, own.text
    assert "BBB2B22" not in own.text
    everyone = await client.get(url, params=_params(world, fmt), headers=world.people.auth("auditor"))
    assert everyone.status_code == 200
    if kind in ("km", "summary", "track", "reporting"):  # reports with a row per vehicle that drove
        assert "AAA1A11" in own.text and "BBB2B22" in everyone.text
    assert (await client.get(url, params=_params(world, fmt))).status_code == 401
