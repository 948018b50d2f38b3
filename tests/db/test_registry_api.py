"""Registry API on the real database: validation naming fields, scoping, personal data, pagination."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta

import asyncpg
import httpx
import orjson
import pytest

from tests.db.conftest import People
from tests.db.world import World, make_world


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    return await make_world(conn, people)


async def test_a_contractor_sees_only_its_own_fleet(client: httpx.AsyncClient, world: World) -> None:
    h = world.people.auth("contractor")
    for path, own in [
        ("vehicles", "v1"), ("drivers", "d1"), ("routes", "r1"), ("trackers", "t1"),
        ("route-assignments", "ra1"), ("driver-assignments", "da1"), ("contractors", "c1"),
    ]:  # fmt: skip
        listed = (await client.get(f"/api/v1/{path}", headers=h)).json()
        assert [i["id"] for i in listed["items"]] == [world[own]], path
        assert listed["total"] == 1
    for path, other in [("vehicles", "v2"), ("drivers", "d2"), ("routes", "r2"), ("contractors", "c2")]:
        r = await client.get(f"/api/v1/{path}/{world[other]}", headers=h)
        assert r.status_code == 404, path
        assert "BBB2B22" not in r.text and "Condutor 2" not in r.text
    # Asking for the other contractor's vehicles by filter or plate finds nothing either.
    assert (await client.get(f"/api/v1/vehicles?contractor_id={world['c2']}", headers=h)).json()["items"] == []
    assert (await client.get("/api/v1/vehicles?plate=BBB-2B22", headers=h)).json()["items"] == []
    # The monitor sees both.
    assert (await client.get("/api/v1/vehicles", headers=world.people.auth("monitor"))).json()["total"] == 2


async def test_cpf_only_for_roles_that_need_it(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    for role, full in [("admin", True), ("monitor", True), ("auditor", False), ("contractor", False)]:
        d = (await client.get(f"/api/v1/drivers/{world['d1']}", headers=world.people.auth(role))).json()
        assert d["cpf_masked"] == "***.982.247-**"
        assert (d.get("cpf") == "52998224725") is full, role
        listed = await client.get("/api/v1/drivers", headers=world.people.auth(role))
        assert ("52998224725" in listed.text) is full, role
    r = await client.patch(
        f"/api/v1/drivers/{world['d1']}", json={"cpf": "111.444.777-35"}, headers=world.people.auth("monitor")
    )
    assert r.status_code == 409 and r.json()["field"] == "cpf"  # another driver has it
    await client.patch(f"/api/v1/drivers/{world['d1']}", json={"name": "Maria"}, headers=world.people.auth("monitor"))
    audit = await conn.fetch("SELECT detail::text AS d FROM audit_log WHERE action = 'registry.driver.update'")
    assert audit and all("Maria" not in a["d"] and "529" not in a["d"] for a in audit)


@pytest.mark.parametrize(
    ("path", "body", "status", "field"),
    [
        ("vehicles", {"plate": "12345"}, 422, "plate"),
        ("vehicles", {"plate": "AAA1A11"}, 409, "plate"),
        ("vehicles", {"plate": "CCC3C33", "contractor_id": 999}, 404, "contractor_id"),
        ("vehicles", {"plate": "CCC3C33", "capacity": 0}, 422, "capacity"),
        ("vehicles", {"plate": "CCC3C33", "kind": "caminhão"}, 422, "kind"),
        ("vehicles", {"plate": "CCC3C33", "colour": "amarelo"}, 422, "colour"),
        ("contractors", {"name": "X", "cnpj": "11.222.333/0001-82"}, 422, "cnpj"),
        ("drivers", {"name": "Ana", "cpf": "529.982.247-26", "cnh_category": "D"}, 422, "cpf"),
        ("drivers", {"name": "Ana", "cpf": "390.533.447-05", "cnh_category": "B"}, 422, "cnh_category"),
        ("drivers", {"name": "Ana", "cpf": "390.533.447-05", "cnh_category": "D", "card_id": "CARD1"}, 409, "card_id"),
        ("trackers", {"unique_id": "860000000000001", "vehicle_id": 1}, 409, "unique_id"),
        ("trackers", {"unique_id": "x", "vehicle_id": 999}, 400, "vehicle_id"),
        (
            "driver-assignments",
            {"driver_id": 1, "vehicle_id": 1, "valid_from": "2027-01-01T00:00:00Z"},
            409,
            "valid_from",
        ),
        ("driver-assignments", {"driver_id": 1, "vehicle_id": 1, "valid_from": "01/02/2027"}, 422, "valid_from"),
        (
            "route-assignments",
            {"route_id": 1, "vehicle_id": 1, "valid_from": "2026-02-01", "weekdays": [0]},
            422,
            "weekdays",
        ),
        ("route-assignments", {"route_id": 99, "vehicle_id": 1, "valid_from": "2026-02-01"}, 404, "route_id"),
        (
            "route-assignments",
            {"route_id": 1, "vehicle_id": 1, "valid_from": "2026-02-01", "valid_to": "2026-01-01"},
            400,
            "valid_to",
        ),
    ],
)
async def test_writes_validate_and_name_the_field(
    client: httpx.AsyncClient, world: World, path: str, body: dict[str, object], status: int, field: str
) -> None:
    r = await client.post(f"/api/v1/{path}", json=body, headers=world.people.auth("monitor"))
    assert r.status_code == status, r.text
    answer = r.json()
    named = answer.get("field") or " ".join(e["field"] for e in answer.get("errors", []))
    assert field in named, answer
    assert field in answer["detail"]


async def test_patch_changes_only_what_was_sent(client: httpx.AsyncClient, world: World) -> None:
    h = world.people.auth("monitor")
    r = await client.patch(f"/api/v1/vehicles/{world['v1']}", json={"capacity": 30, "kind": "onibus"}, headers=h)
    assert r.status_code == 200
    v = r.json()
    assert (v["plate"], v["capacity"], v["kind"], v["contractor_id"]) == ("AAA1A11", 30, "onibus", world["c1"])
    assert (await client.patch(f"/api/v1/vehicles/{world['v1']}", json={"plate": None}, headers=h)).status_code == 400
    assert (await client.patch(f"/api/v1/vehicles/{world['v1']}", json={}, headers=h)).status_code == 400
    assert (await client.patch("/api/v1/vehicles/999", json={"capacity": 3}, headers=h)).status_code == 404


async def test_lists_paginate(client: httpx.AsyncClient, world: World) -> None:
    h = world.people.auth("admin")
    for i in range(7):
        assert (await client.post("/api/v1/vehicles", json={"plate": f"PAG{i}A00"}, headers=h)).status_code == 201
    first = (await client.get("/api/v1/vehicles?limit=4", headers=h)).json()
    second = (await client.get("/api/v1/vehicles?limit=4&offset=4", headers=h)).json()
    assert first["total"] == second["total"] == 9
    assert len(first["items"]) == 4 and len(second["items"]) == 4
    assert not {v["id"] for v in first["items"]} & {v["id"] for v in second["items"]}
    assert (await client.get("/api/v1/vehicles?limit=501", headers=h)).status_code == 422


async def test_find_a_vehicle_by_plate_in_any_spelling(client: httpx.AsyncClient, world: World) -> None:
    r = await client.get("/api/v1/vehicles?plate=aaa-1a11", headers=world.people.auth("auditor"))
    assert [v["id"] for v in r.json()["items"]] == [world["v1"]]
    assert r.json()["items"][0]["tracker"] == "860000000000001" and r.json()["items"][0]["driver"] == "Condutor 1"
    bad = await client.get("/api/v1/vehicles?plate=ZZ", headers=world.people.auth("auditor"))
    assert bad.status_code == 400 and bad.json()["field"] == "plate"


async def test_a_tracker_registered_through_the_api_can_post_fixes(client: httpx.AsyncClient, world: World) -> None:
    h = world.people.auth("monitor")
    r = await client.post(
        "/api/v1/trackers", json={"unique_id": "359000000000009", "vehicle_id": world["v2"]}, headers=h
    )
    assert r.status_code == 201 and r.json()["plate"] == "BBB2B22"
    token = r.json()["token"]
    fix = {"ts": datetime.now(UTC).isoformat(), "lat": -10.44, "lon": -62.47}
    posted = await client.post("/api/v1/fixes", json=fix, headers={"Authorization": f"Bearer {token}"})
    assert posted.status_code == 200 and posted.json()["accepted"] == 1
    listed = (await client.get(f"/api/v1/trackers?vehicle_id={world['v2']}", headers=h)).json()["items"]
    assert all("token" not in t for t in listed)


async def test_a_rotated_token_stops_working_within_a_second(client: httpx.AsyncClient, world: World) -> None:
    h = world.people.auth("monitor")
    old = (await client.post(f"/api/v1/trackers/{world['t2']}/token", headers=h)).json()["token"]

    async def post(token: str, seconds_ago: int) -> int:
        fix = {"ts": (datetime.now(UTC) - timedelta(seconds=seconds_ago)).isoformat(), "lat": -10.44, "lon": -62.47}
        r = await client.post("/api/v1/fixes", json=fix, headers={"Authorization": f"Bearer {token}"})
        return r.status_code

    assert await post(old, 30) == 200  # now cached as tracker t2's
    new = (await client.post(f"/api/v1/trackers/{world['t2']}/token", headers=h)).json()["token"]
    await asyncio.sleep(1.1)  # the cache reads the registry epoch at most once a second
    assert await post(old, 20) == 401
    assert await post(new, 10) == 200


# Each fix's driver as reports and the live map find it: fix_driver() (migration 0004), by fix time.
FIX_DRIVERS = """
SELECT f.ts, f.driver_id AS card, fix_driver(f.vehicle_id, f.ts, f.driver_id) AS driver_id,
       CASE WHEN fix_driver(f.vehicle_id, f.ts, f.driver_id) IS DISTINCT FROM fix_driver(f.vehicle_id, f.ts, NULL)
            THEN 'card'
            WHEN fix_driver(f.vehicle_id, f.ts, NULL) IS NOT NULL THEN 'assignment' END AS source
FROM fixes f WHERE f.vehicle_id = $1 AND f.ts >= $2 AND f.ts < $3 ORDER BY f.ts"""


async def test_driver_of_a_fix_is_its_card_else_the_assignment(
    client: httpx.AsyncClient, world: World, conn: asyncpg.Connection
) -> None:
    """Vehicle 1 is assigned driver 1; driver 3 of the same contractor badges in with CARD3 for one fix; contractor
    2's card (CARD2) and an unknown card fall back alike: another company's card names none of its drivers."""
    d3 = await conn.fetchval(
        "INSERT INTO drivers (name, cpf, cnh_category, card_id, contractor_id) VALUES ('Condutor 3', '39053344705',"
        " 'D', 'CARD3', $1) RETURNING id",
        world["c1"],
    )
    t0 = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    token = (await client.post(f"/api/v1/trackers/{world['t1']}/token", headers=world.people.auth("admin"))).json()[
        "token"
    ]
    fixes = [
        {"ts": (t0 + timedelta(seconds=30 * i)).isoformat(), "lat": -10.44, "lon": -62.47, "driver_id": card}
        for i, card in enumerate([None, "CARD3", "CARD2", "UNKNOWN9"])
    ]
    r = await client.post("/api/v1/fixes", json={"fixes": fixes}, headers={"Authorization": f"Bearer {token}"})
    assert r.json()["accepted"] == 4
    # Before the assignment began nobody is known to drive: move it to start after the first fix.
    await conn.execute(
        "UPDATE driver_assignments SET during = tstzrange($1, NULL) WHERE id = $2",
        t0 + timedelta(seconds=1),
        world["da1"],
    )
    got = await conn.fetch(FIX_DRIVERS, world["v1"], t0, t0 + timedelta(minutes=5))
    assert [(d["card"], d["driver_id"], d["source"]) for d in got] == [
        (None, None, None),
        ("CARD3", d3, "card"),
        ("CARD2", world["d1"], "assignment"),
        ("UNKNOWN9", world["d1"], "assignment"),
    ]


async def test_openapi_documents_every_api_route_without_dangling_refs(client: httpx.AsyncClient) -> None:
    schema = (await client.get("/openapi.json")).json()
    text = orjson.dumps(schema).decode()
    refs = set(re.findall(r"#/components/schemas/([A-Za-z0-9_]+)", text))
    assert refs <= set(schema["components"]["schemas"])
    assert {"/api/v1/vehicles", "/api/v1/routes", "/api/v1/auth/login", "/api/v1/audit"} <= set(schema["paths"])
    assert set(schema["paths"]["/api/v1/routes"]["post"]["requestBody"]["content"]) == {
        "application/json",
        "multipart/form-data",
    }


async def test_times_without_an_offset_are_local(client: httpx.AsyncClient, world: World) -> None:
    """People type local times; Rondônia is UTC−4 all year."""
    h = world.people.auth("monitor")
    body = {
        "driver_id": world["d2"],
        "vehicle_id": world["v2"],
        "valid_from": "2025-03-01",
        "valid_to": "2025-03-01T12:30",
    }
    r = await client.post("/api/v1/driver-assignments", json=body, headers=h)
    assert r.status_code == 201, r.text
    got = r.json()
    assert datetime.fromisoformat(got["valid_from"]) == datetime(2025, 3, 1, 4, tzinfo=UTC)
    assert datetime.fromisoformat(got["valid_to"]) == datetime(2025, 3, 1, 16, 30, tzinfo=UTC)


async def test_every_operation_has_a_summary_in_portuguese(client: httpx.AsyncClient) -> None:
    from telemetria.apidocs import SUMMARIES

    schema = (await client.get("/openapi.json")).json()
    ops = {(m.upper(), p): op for p, methods in schema["paths"].items() for m, op in methods.items()}
    assert set(ops) == set(SUMMARIES), "apidocs.SUMMARIES must name exactly the operations the API has"
    assert all(op["summary"] == SUMMARIES[key] for key, op in ops.items())
