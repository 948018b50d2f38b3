"""The Traccar gateway end to end on the real database: captured bodies, duplicates, reordering, scope, overload."""

from __future__ import annotations

import asyncio
import os
import random
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from urllib.parse import parse_qsl

import httpx
import orjson
import pytest
from defusedxml import ElementTree

from telemetria.app import create_app
from telemetria.traccar import gateways
from tests.db.conftest import Tracker, register

PAYLOADS = Path(__file__).parents[1] / "payloads" / "traccar"
ROOT = Path(__file__).parents[2]
PATH = "/api/v1/traccar/positions"
T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)


def body(name: str, ts: datetime, *, fmt: str = "%Y-%m-%dT%H:%M:%S.000+00:00", **position: object) -> bytes:
    """A captured body moved to `ts`, written in the version's own date format."""
    doc = orjson.loads((PAYLOADS / name).read_bytes())
    doc["position"]["fixTime"] = doc["position"]["deviceTime"] = ts.strftime(fmt)
    doc["position"].update(position)
    return orjson.dumps(doc)


@pytest.fixture
async def gateway(conn, clean) -> dict[str, str]:
    row = await gateways.add_gateway(conn, "traccar da Secretaria")
    return {"Authorization": f"Bearer {row['token']}", "Content-Type": "application/json"}


async def rows(conn) -> list[dict]:
    return [dict(r) for r in await conn.fetch("SELECT * FROM fixes ORDER BY ts")]


async def test_v6_body_is_stored_in_our_units(client, tracker: Tracker, gateway, conn) -> None:
    r = await client.post(PATH, content=body("v6_json_gt06.json", T0), headers=gateway)
    assert r.status_code == 200, r.text
    assert r.json() == {"stored": 1}
    [row] = await rows(conn)
    assert row["vehicle_id"] == tracker.vehicle_id and row["tracker_id"] == tracker.id
    assert row["ts"] == T0  # position.fixTime
    assert row["speed_kmh"] == pytest.approx(21.598272 * 1.852, rel=1e-6)  # knots × 1.852 (real column)
    assert row["ignition"] is True and row["odometer_m"] == 152340 and row["satellites"] == 9
    assert row["driver_id"] == "0012AB34CD"  # the card: resolved by fix_driver at read time, as OsmAnd's
    assert row["attributes"]["alarm"] == "sos" and row["valid"] is True


async def test_a_resend_is_a_duplicate_stored_once(client, tracker, gateway, conn) -> None:
    b = body("v6_json_gt06.json", T0)
    assert (await client.post(PATH, content=b, headers=gateway)).json() == {"stored": 1}
    r = await client.post(PATH, content=b, headers=gateway)
    assert r.status_code == 200 and r.json() == {"stored": 0, "duplicate": True}
    assert len(await rows(conn)) == 1


async def test_duplicates_and_reordering_as_traccar_sends_them(client, tracker, gateway, conn) -> None:
    """Each position is sent alone without waiting for the previous one: all at once, shuffled, twice over."""
    times = [T0 + timedelta(seconds=30 * i) for i in range(20)]
    sends = [body("v6_json_gt06.json", t, speed=float(i)) for i, t in enumerate(times)] * 2
    random.Random(35).shuffle(sends)
    answers = await asyncio.gather(*(client.post(PATH, content=b, headers=gateway) for b in sends))
    assert [a.status_code for a in answers if a.status_code != 200] == [], [a.text for a in answers][:3]
    assert sum(a.json()["stored"] for a in answers) == 20
    assert sum(a.json().get("duplicate", False) for a in answers) == 20
    stored = await rows(conn)
    assert [r["ts"] for r in stored] == times
    assert [r["speed_kmh"] for r in stored] == pytest.approx([i * 1.852 for i in range(20)], rel=1e-6)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("v4_10_json_suntech.json", "%Y-%m-%dT%H:%M:%S.000+0000"), ("v5_json_teltonika_many_io.json", None)],
)
async def test_every_versions_body(client, tracker, gateway, conn, name: str, fmt: str | None) -> None:
    kw = {"fmt": fmt} if fmt else {}
    r = await client.post(PATH, content=body(name, T0, **kw), headers=gateway)
    assert r.status_code == 200 and r.json() == {"stored": 1}, r.text
    [row] = await rows(conn)
    assert row["ts"] == T0
    if name.startswith("v4"):
        assert row["valid"] is False  # kept, marked; left out of km by the reports' cleaning
    else:
        assert len(row["attributes"]) <= 64  # 89 io attributes trimmed, the fix kept


async def test_unknown_device_is_404_naming_the_field(client, tracker, gateway, conn) -> None:
    doc = orjson.loads(body("v6_json_gt06.json", T0))
    doc["device"]["uniqueId"] = "999999999999999"
    r = await client.post(PATH, content=orjson.dumps(doc), headers=gateway)
    assert r.status_code == 404
    assert r.json()["field"] == "device.uniqueId" and "device.uniqueId" in r.json()["detail"]
    assert await rows(conn) == []


async def test_tokens(client, tracker, gateway, conn) -> None:
    b = body("v6_json_gt06.json", T0)
    assert (await client.post(PATH, content=b)).status_code == 401
    assert (await client.post(PATH, content=b, headers=tracker.auth)).status_code == 401  # a tracker's is not one
    gid = (await conn.fetchrow("SELECT id FROM traccar_gateways"))["id"]
    await gateways.set_active(conn, gid, False)
    await asyncio.sleep(1.1)  # the auth cache reads the registry epoch at most once a second
    assert (await client.post(PATH, content=b, headers=gateway)).status_code == 401


async def test_bad_body_is_400_naming_the_field(client, tracker, gateway, conn) -> None:
    r = await client.post(PATH, content=body("v6_json_gt06.json", T0, speed="fast"), headers=gateway)
    assert r.status_code == 400 and r.json()["field"] == "position.speed"
    r = await client.post(PATH, content=body("v6_json_gt06.json", T0 + timedelta(days=2)), headers=gateway)
    assert r.status_code == 422 and "future" in r.json()["detail"]
    assert await rows(conn) == []


async def test_url_mode(client, tracker, gateway, conn) -> None:
    line = next(x for x in (PAYLOADS / "url_mode.txt").read_text().splitlines() if x and not x.startswith("#"))
    params = dict(parse_qsl(line)) | {"fixTime": str(int(T0.timestamp() * 1000))}
    r = await client.get(PATH, params=params, headers={"Authorization": gateway["Authorization"]})
    assert r.status_code == 200 and r.json() == {"stored": 1}, r.text
    [row] = await rows(conn)
    assert row["ts"] == T0 and row["speed_kmh"] == pytest.approx(40.0, abs=1e-3)
    assert row["driver_id"] == "0012AB34CD" and row["ignition"] is True


async def test_a_contractors_gateway_speaks_only_for_its_fleet(client, conn, clean) -> None:
    mine = await conn.fetchval("INSERT INTO contractors (name, cnpj) VALUES ('A', '11222333000181') RETURNING id")
    other = await conn.fetchval("INSERT INTO contractors (name, cnpj) VALUES ('B', '11444777000161') RETURNING id")
    t1 = await register(conn, "ABC1D23", "860000000000001")
    t2 = await register(conn, "XYZ9K88", "860000000000002")
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", mine, t1.vehicle_id)
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", other, t2.vehicle_id)
    token = (await gateways.add_gateway(conn, "traccar da empresa A", mine))["token"]
    h = {"Authorization": f"Bearer {token}"}
    assert (await client.post(PATH, content=body("v6_json_gt06.json", T0), headers=h)).json() == {"stored": 1}
    doc = orjson.loads(body("v6_json_gt06.json", T0))
    doc["device"]["uniqueId"] = t2.unique_id
    r = await client.post(PATH, content=orjson.dumps(doc), headers=h)
    assert r.status_code == 403 and r.json()["field"] == "device.uniqueId"
    assert len(await rows(conn)) == 1


async def test_overload_is_503_with_retry_after_and_nothing_read(test_db, tracker, gateway, conn) -> None:
    app = create_app(test_db.settings(writer_max_pending_rows=1, rollup_interval_s=0))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            app.state.ingest.waiting_rows = 1  # the writer's queue is full
            r = await c.post(PATH, content=body("v6_json_gt06.json", T0), headers=gateway)
            assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
            app.state.ingest.waiting_rows = 0
            assert (await c.post(PATH, content=body("v6_json_gt06.json", T0), headers=gateway)).status_code == 200
    assert len(await rows(conn)) == 1


async def test_cli_prints_the_token_that_works(test_db, client, tracker, conn) -> None:
    env = {**os.environ, "TELEMETRIA_DATABASE_URL": test_db.dsn}
    cmd = [sys.executable, "-m", "telemetria.cli", "gateway", "add", "--name", "traccar 2"]
    proc = await asyncio.to_thread(subprocess.run, cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    out = orjson.loads(proc.stdout)
    assert out["name"] == "traccar 2" and out["contractor_id"] is None and len(out["token"]) >= 40
    h = {"Authorization": f"Bearer {out['token']}"}
    assert (await client.post(PATH, content=body("v6_json_gt06.json", T0), headers=h)).json() == {"stored": 1}


async def test_the_documented_traccar_xml_works(client, tracker, conn, clean) -> None:
    """docs/trackers.md's traccar.xml, read as Traccar reads it: its keys exist in the versions named, its URL is
    this route, and its header, split as PositionForwarderJson splits it, authenticates a captured body."""
    doc = (ROOT / "docs" / "trackers.md").read_text()
    snippet = re.search(r"```xml\n(.*?)```", doc, re.S)
    assert snippet is not None
    entries = {e.get("key"): e.text for e in ElementTree.fromstring(f"<properties>{snippet[1]}</properties>")}
    assert entries["forward.type"] == "json"  # Keys.FORWARD_TYPE, Traccar 5.5+; "url" is the default
    assert set(entries) <= {"forward.type", "forward.url", "forward.header"} | {
        f"forward.retry.{k}" for k in ("enable", "delay", "count", "limit")
    }  # Keys.java at 5.5 and 6.x
    assert entries["forward.url"].endswith(PATH)
    token = (await gateways.add_gateway(conn, "documented"))["token"]
    headers = {}
    for line in re.split(r"\r?\n", entries["forward.header"].replace("GATEWAY_TOKEN", token)):
        name, value = line.split(":", 1)  # as PositionForwarderJson: split(":", 2), each part trimmed
        headers[name.strip()] = value.strip()
    headers["Content-Type"] = "application/json"
    r = await client.post(PATH, content=body("v6_json_gt06.json", T0), headers=headers)
    assert r.status_code == 200 and r.json() == {"stored": 1}


async def test_the_page_api_creates_a_gateway_whose_token_works(client, tracker, people, conn) -> None:
    """What the page (/gateways-traccar) calls: admins only; the token comes back once and then works."""
    r = await client.post("/api/v1/traccar/gateways", json={"name": "traccar 3"}, headers=people.auth("monitor"))
    assert r.status_code == 403
    r = await client.post("/api/v1/traccar/gateways", json={"name": "traccar 3"}, headers=people.auth("admin"))
    assert r.status_code == 201, r.text
    created = r.json()
    listed = (await client.get("/api/v1/traccar/gateways", headers=people.auth("admin"))).json()
    assert [g["name"] for g in listed["items"]] == ["traccar 3"] and "token" not in listed["items"][0]
    h = {"Authorization": f"Bearer {created['token']}"}
    assert (await client.post(PATH, content=body("v6_json_gt06.json", T0), headers=h)).json() == {"stored": 1}
    r = await client.post(f"/api/v1/traccar/gateways/{created['id']}/token", headers=people.auth("admin"))
    assert r.status_code == 200 and r.json()["token"] != created["token"]
    await asyncio.sleep(1.1)  # the auth cache reads the registry epoch at most once a second
    assert (await client.post(PATH, content=body("v6_json_gt06.json", T0), headers=h)).status_code == 401
    r = await client.post("/api/v1/traccar/gateways", json={"name": "traccar 3"}, headers=people.auth("admin"))
    assert r.status_code == 409 and r.json()["field"] == "name"


async def test_an_invalid_fix_is_kept_but_not_used_for_km(client, tracker, gateway, people, conn) -> None:
    """valid: false (no GPS fix; Traccar repeats or invents coordinates) is stored, marked, and left out of km."""
    from telemetria.localtime import LOCAL_TZ

    day = datetime.now(LOCAL_TZ).date() - timedelta(days=1)
    start = datetime(day.year, day.month, day.day, 10, tzinfo=LOCAL_TZ)
    for i in range(11):  # ~200 m a step eastwards along -10.44, 30 s apart: 2 km in all
        # Fixes 4-7 without a GPS fix, 300 m off the road at a bus's speed: only `valid` tells them apart.
        invalid = 4 <= i <= 7
        b = body("v6_json_gt06.json", start + timedelta(seconds=30 * i), latitude=-10.4373 if invalid else -10.44,
                 longitude=-62.47 + i * 0.00183, speed=13.0, valid=not invalid)  # fmt: skip
        assert (await client.post(PATH, content=b, headers=gateway)).json() == {"stored": 1}
    assert await conn.fetchval("SELECT count(*) FROM fixes WHERE NOT valid") == 4
    params = {"vehicle_id": str(tracker.vehicle_id), "from": day.isoformat(), "to": day.isoformat()}
    r = await client.get("/api/v1/reports/km", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    assert r.json()["total_km"] == pytest.approx(2.0, abs=0.1), r.json()  # not the 2.6 km through the invalid fixes
