"""Contracts: creation, exact money, the payment rule, dated price versions and their history, scope, bad input."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import asyncpg
import httpx
import pytest

from telemetria.contracts.api import local_today
from tests.db.conftest import People
from tests.db.world import LINE

RULE = {"made_min_coverage_pct": 95.0, "partial_min_coverage_pct": 50.0, "partial_pay": "proportional",
        "off_route_km_paid": False, "justified_paid": False}  # fmt: skip


def contract(people: People, **change: Any) -> dict[str, Any]:
    return {"contractor_id": people.contractor_id, "number": "012/2026", "lot": "3", "valid_from": "2026-02-01",
            "valid_to": "2026-12-31", "price_per_km": 4.35} | change  # fmt: skip


async def _post(client: httpx.AsyncClient, people: People, **change: Any) -> httpx.Response:
    return await client.post("/api/v1/contracts", json=contract(people, **change), headers=people.auth("monitor"))


async def test_create_then_read_with_exact_money_and_the_default_rule(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    r = await _post(client, people, price_per_km_unpaved="5.1")
    assert r.status_code == 201, r.text
    assert b'"price_per_km":4.35,' in r.content and b'"price_per_km_unpaved":5.10,' in r.content
    got = r.json()
    assert isinstance(got["id"], int)
    assert {k: got[k] for k in ("contractor_id", "number", "lot", "valid_from", "valid_to")} == {
        "contractor_id": people.contractor_id, "number": "012/2026", "lot": "3", "valid_from": "2026-02-01",
        "valid_to": "2026-12-31",
    }  # fmt: skip
    assert got["contractor"] == "Transportes Jaru Ltda" and got["payment_rule"] == RULE
    assert got["terms_valid_from"] == "2026-02-01" and got["routes"] == 0
    again = await client.get(f"/api/v1/contracts/{got['id']}", headers=people.auth("auditor"))
    assert again.json() == got
    listed = (await client.get("/api/v1/contracts", headers=people.auth("auditor"))).json()
    assert listed["total"] == 1 and listed["items"] == [got]
    stored = await conn.fetchrow("SELECT price_per_km, price_per_km_unpaved FROM contract_terms")
    assert stored["price_per_km"] == Decimal("4.35") and stored["price_per_km_unpaved"] == Decimal("5.10")
    audit = await conn.fetchrow("SELECT username, target FROM audit_log WHERE action = 'registry.contract.create'")
    assert audit["username"] == "monitor" and audit["target"] == f"contract:{got['id']}"


async def test_a_rule_of_its_own(client: httpx.AsyncClient, people: People) -> None:
    rule = {"made_min_coverage_pct": 90, "partial_min_coverage_pct": 60.5, "partial_pay": "declared_km",
            "off_route_km_paid": True, "justified_paid": True}  # fmt: skip
    r = await _post(client, people, payment_rule=rule)
    assert r.status_code == 201, r.text
    assert r.json()["payment_rule"] == rule
    assert b'"made_min_coverage_pct":90.00,"partial_min_coverage_pct":60.50' in r.content


@pytest.mark.parametrize(
    ("change", "status", "field"),
    [
        ({"price_per_km": 0}, 422, "body.price_per_km"),
        ({"price_per_km": -4.35}, 422, "body.price_per_km"),
        ({"price_per_km": 4.355}, 422, "body.price_per_km"),
        ({"price_per_km": "NaN"}, 422, "body.price_per_km"),
        ({"price_per_km": 1e30}, 422, "body.price_per_km"),
        ({"price_per_km_unpaved": 0}, 422, "body.price_per_km_unpaved"),
        ({"valid_to": "2026-01-31"}, 400, "valid_to"),
        ({"valid_to": "9999-12-31"}, 400, "valid_to"),  # a typo would lock months no one closes (issue 33)
        ({"valid_to": "2036-02-02"}, 400, "valid_to"),  # over 10 years (Lei 14.133/2021, Art. 107)
        ({"valid_from": "1999-12-31"}, 400, "valid_from"),
        ({"contractor_id": 999999}, 404, "contractor_id"),
        ({"number": " "}, 400, "number"),
        ({"number": None}, 422, "body.number"),
        ({"payment_rule": {"made_min_coverage_pct": 40}}, 422, "body.payment_rule"),
        ({"payment_rule": {"made_min_coverage_pct": 101}}, 422, "body.payment_rule.made_min_coverage_pct"),
        ({"payment_rule": {"partial_pay": "half"}}, 422, "body.payment_rule.partial_pay"),
        ({"id": 3}, 422, "body.id"),
    ],
)
async def test_bad_input_names_the_field_and_stores_nothing(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, change: dict[str, Any], status: int,
    field: str,
) -> None:  # fmt: skip
    r = await _post(client, people, **change)
    assert r.status_code == status, r.text
    answer = r.json()
    assert field in [answer.get("field")] + [e["field"] for e in answer.get("errors", [])], answer
    assert await conn.fetchval("SELECT count(*) FROM contracts") == 0
    assert await conn.fetchval("SELECT count(*) FROM contract_terms") == 0


async def test_a_duplicate_number_is_a_conflict(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    assert (await _post(client, people)).status_code == 201
    r = await _post(client, people, contractor_id=people.other_contractor_id)
    assert r.status_code == 409 and r.json()["field"] == "number"
    assert await conn.fetchval("SELECT count(*) FROM contract_terms") == 1


async def test_contractors_see_only_their_own_contracts(client: httpx.AsyncClient, people: People) -> None:
    mine = (await _post(client, people)).json()
    theirs = (await _post(client, people, number="77/2026", contractor_id=people.other_contractor_id)).json()
    auth = people.auth("contractor")
    listed = (await client.get("/api/v1/contracts", headers=auth)).json()
    assert [c["id"] for c in listed["items"]] == [mine["id"]] and listed["total"] == 1
    asked = await client.get(f"/api/v1/contracts?contractor_id={people.other_contractor_id}", headers=auth)
    assert asked.json()["items"] == []
    for path in (f"/api/v1/contracts/{theirs['id']}", f"/api/v1/contracts/{theirs['id']}/history"):
        assert (await client.get(path, headers=auth)).status_code == 404
    assert (await client.get(f"/api/v1/contracts/{mine['id']}/history", headers=auth)).status_code == 200
    every = (await client.get("/api/v1/contracts", headers=people.auth("auditor"))).json()
    assert {c["id"] for c in every["items"]} == {mine["id"], theirs["id"]}


async def test_a_price_change_is_a_new_version_from_its_date_with_history(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    cid = (await _post(client, people)).json()["id"]
    auth = people.auth("admin")
    r = await client.patch(f"/api/v1/contracts/{cid}", json={"price_per_km": 4.8, "effective_from": "2026-07-01"},
                           headers=auth)  # fmt: skip
    assert r.status_code == 200, r.text
    r = await client.patch(
        f"/api/v1/contracts/{cid}",
        json={"payment_rule": {"justified_paid": True}, "effective_from": "2026-09-01"},
        headers=people.auth("monitor"),
    )
    assert r.status_code == 200, r.text
    history = (await client.get(f"/api/v1/contracts/{cid}/history", headers=people.auth("contractor"))).json()
    versions = history["versions"]
    assert history["contract_id"] == cid and history["number"] == "012/2026"
    assert [(v["valid_from"], v["valid_to"]) for v in versions] == [
        ("2026-02-01", "2026-06-30"), ("2026-07-01", "2026-08-31"), ("2026-09-01", None),
    ]  # fmt: skip
    assert [v["price_per_km"] for v in versions] == [4.35, 4.8, 4.8]
    assert [v["payment_rule"]["justified_paid"] for v in versions] == [False, False, True]
    assert [v["changed"] for v in versions][1:] == [["price_per_km"], ["justified_paid"]]
    assert [v["created_by"] for v in versions] == ["monitor", "admin", "monitor"]
    assert all(v["in_force"] and v["created_at"] for v in versions)
    # Each past day is priced by the version then in force.
    on = (
        "SELECT price_per_km, justified_paid FROM contract_terms_in_force WHERE contract_id = $1 AND during @> $2::date"
    )
    for day, price, justified in (("2026-02-01", "4.35", False), ("2026-06-30", "4.35", False),
                                  ("2026-07-01", "4.80", False), ("2026-09-15", "4.80", True)):  # fmt: skip
        row = await conn.fetchrow(on, cid, date.fromisoformat(day))
        assert (row["price_per_km"], row["justified_paid"]) == (Decimal(price), justified), day
    audit = await conn.fetch(
        "SELECT username, detail FROM audit_log WHERE action = 'registry.contract.update' ORDER BY at"
    )
    assert [a["username"] for a in audit] == ["admin", "monitor"]
    assert audit[0]["detail"]["effective_from"] == "2026-07-01" and audit[0]["detail"]["changed"] == ["price_per_km"]


async def test_a_second_edit_for_the_same_day_supersedes_the_first_and_both_stay_in_history(
    client: httpx.AsyncClient, people: People
) -> None:
    cid = (await _post(client, people)).json()["id"]
    auth = people.auth("monitor")
    for price in (4.8, 4.75):
        r = await client.patch(f"/api/v1/contracts/{cid}", json={"price_per_km": price, "effective_from": "2026-07-01"},
                               headers=auth)  # fmt: skip
        assert r.status_code == 200, r.text
    versions = (await client.get(f"/api/v1/contracts/{cid}/history", headers=auth)).json()["versions"]
    assert [(v["valid_from"], v["price_per_km"], v["in_force"]) for v in versions] == [
        ("2026-02-01", 4.35, True), ("2026-07-01", 4.8, False), ("2026-07-01", 4.75, True),
    ]  # fmt: skip
    assert versions[1]["superseded_at"] is not None and versions[1]["valid_to"] is None


async def test_an_edit_without_a_date_applies_from_today_in_porto_velho(
    client: httpx.AsyncClient, people: People
) -> None:
    today = local_today()
    body = contract(people, valid_from=str(today - timedelta(days=30)), valid_to=str(today + timedelta(days=30)))
    cid = (await client.post("/api/v1/contracts", json=body, headers=people.auth("monitor"))).json()["id"]
    r = await client.patch(f"/api/v1/contracts/{cid}", json={"price_per_km": "5.00"}, headers=people.auth("monitor"))
    assert r.status_code == 200, r.text
    assert r.json()["price_per_km"] == 5.0 and r.json()["terms_valid_from"] == today.isoformat()


async def test_an_edit_that_changes_nothing_makes_no_version(client: httpx.AsyncClient, people: People) -> None:
    cid = (await _post(client, people)).json()["id"]
    r = await client.patch(f"/api/v1/contracts/{cid}", json={"price_per_km": 4.35, "effective_from": "2026-05-01"},
                           headers=people.auth("monitor"))  # fmt: skip
    assert r.status_code == 200
    versions = (await client.get(f"/api/v1/contracts/{cid}/history", headers=people.auth("monitor"))).json()["versions"]
    assert len(versions) == 1


async def test_own_fields_change_in_place(client: httpx.AsyncClient, people: People) -> None:
    cid = (await _post(client, people)).json()["id"]
    body = {"lot": None, "number": "12/2026-A", "valid_to": "2027-01-31"}
    r = await client.patch(f"/api/v1/contracts/{cid}", json=body, headers=people.auth("monitor"))
    assert r.status_code == 200, r.text
    got = r.json()
    assert (got["lot"], got["number"], got["valid_to"]) == (None, "12/2026-A", "2027-01-31")


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({}, 400, None),
        ({"effective_from": "2026-05-01"}, 400, "effective_from"),
        ({"price_per_km": 4.9, "effective_from": "2027-03-01"}, 400, "effective_from"),
        ({"price_per_km": 4.9, "effective_from": "2026-01-31"}, 400, "effective_from"),
        ({"price_per_km": 0, "effective_from": "2026-05-01"}, 422, "body.price_per_km"),
        ({"price_per_km": None, "effective_from": "2026-05-01"}, 400, "price_per_km"),
        ({"payment_rule": {"partial_min_coverage_pct": 96}, "effective_from": "2026-05-01"}, 400,
         "payment_rule.partial_min_coverage_pct"),
        ({"payment_rule": {"partial_pay": None}, "effective_from": "2026-05-01"}, 400, "partial_pay"),
        ({"valid_to": "2026-01-01"}, 400, "valid_to"),
        ({"valid_from": "2027-01-01"}, 400, "valid_to"),
        ({"valid_from": None}, 400, "valid_from"),
        ({"number": "99/2026"}, 409, "number"),
        ({"contractor_id": 1}, 422, "body.contractor_id"),
    ],
)  # fmt: skip
async def test_a_bad_edit_names_the_field_and_changes_nothing(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, body: dict[str, Any], status: int,
    field: str | None,
) -> None:  # fmt: skip
    cid = (await _post(client, people)).json()["id"]
    assert (await _post(client, people, number="99/2026")).status_code == 201
    before = (await client.get(f"/api/v1/contracts/{cid}", headers=people.auth("monitor"))).json()
    r = await client.patch(f"/api/v1/contracts/{cid}", json=body, headers=people.auth("monitor"))
    assert r.status_code == status, r.text
    answer = r.json()
    if field is not None:
        assert field in [answer.get("field")] + [e["field"] for e in answer.get("errors", [])], answer
    assert (await client.get(f"/api/v1/contracts/{cid}", headers=people.auth("monitor"))).json() == before
    assert await conn.fetchval("SELECT count(*) FROM contract_terms WHERE contract_id = $1", cid) == 1
    assert await conn.fetchval("SELECT count(*) FROM audit_log WHERE action = 'registry.contract.update'") == 0


async def test_unknown_contract_is_404(client: httpx.AsyncClient, people: People) -> None:
    for method, path in (("GET", "/api/v1/contracts/4242"), ("PATCH", "/api/v1/contracts/4242"),
                         ("GET", "/api/v1/contracts/4242/history")):  # fmt: skip
        r = await client.request(method, path, json={"lot": "1"}, headers=people.auth("admin"))
        assert r.status_code == 404, (method, path, r.text)


# --- routes belong to a contract ----------------------------------------------------------------


async def _vehicle_of(conn: asyncpg.Connection, contractor_id: int, plate: str) -> int:
    return int(await conn.fetchval("INSERT INTO vehicles (plate, contractor_id) VALUES ($1, $2) RETURNING id",
                                   plate, contractor_id))  # fmt: skip


async def test_a_route_takes_its_contract_and_declared_km(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    mine = (await _post(client, people)).json()["id"]
    theirs = (await _post(client, people, number="8/2026", contractor_id=people.other_contractor_id)).json()["id"]
    auth = people.auth("monitor")
    body = {"code": "L4", "name": "Linha 4", "geometry": LINE, "contract_id": mine, "declared_km": 1.2}
    r = await client.post("/api/v1/routes", json=body, headers=auth)
    assert r.status_code == 201, r.text
    route = r.json()
    assert (route["contract_id"], route["declared_km"]) == (mine, 1.2)
    # A contractor's users see the routes of their contracts, even before any vehicle is assigned.
    seen = await client.get(f"/api/v1/routes/{route['id']}", headers=people.auth("contractor"))
    assert seen.status_code == 200 and seen.json()["contract_id"] == mine
    assert (await client.get(f"/api/v1/contracts/{mine}", headers=auth)).json()["routes"] == 1
    # Run by the contractor's vehicle, the route cannot be given another contractor's contract.
    vid = await _vehicle_of(conn, people.contractor_id, "CTR1A11")
    await conn.execute("INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, '2026-02-02')",
                       route["id"], vid)  # fmt: skip
    r = await client.patch(f"/api/v1/routes/{route['id']}", json={"contract_id": theirs}, headers=auth)
    assert r.status_code == 409 and r.json()["field"] == "contract_id" and "Transportes Jaru" in r.json()["detail"]
    r = await client.patch(
        f"/api/v1/routes/{route['id']}", json={"contract_id": None, "declared_km": 1.3}, headers=auth
    )
    assert r.status_code == 200 and (r.json()["contract_id"], r.json()["declared_km"]) == (None, 1.3)
    r = await client.patch(f"/api/v1/routes/{route['id']}", json={"contract_id": mine}, headers=auth)
    assert r.status_code == 200 and r.json()["contract_id"] == mine
    # Nor, once it has one, be assigned to another contractor's vehicle.
    other = await _vehicle_of(conn, people.other_contractor_id, "OTH2B22")
    body = {"route_id": route["id"], "vehicle_id": other, "valid_from": "2026-03-02"}
    r = await client.post("/api/v1/route-assignments", json=body, headers=auth)
    assert r.status_code == 409 and r.json()["field"] == "vehicle_id" and "012/2026" in r.json()["detail"]
    r = await client.post("/api/v1/route-assignments", json=body | {"vehicle_id": vid}, headers=auth)
    assert r.status_code == 201, r.text


@pytest.mark.parametrize(
    ("body", "status", "field"),
    [
        ({"contract_id": 4242}, 404, "contract_id"),
        ({"contract_id": 0}, 422, "contract_id"),
        ({"declared_km": 0}, 422, "declared_km"),
        ({"declared_km": -3}, 422, "declared_km"),
    ],
)
async def test_bad_route_contract_fields(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, body: dict[str, Any], status: int, field: str
) -> None:
    auth = people.auth("monitor")
    new = {"code": "L9", "name": "Linha 9", "geometry": LINE} | body
    r = await client.post("/api/v1/routes", json=new, headers=auth)
    assert r.status_code == status, r.text
    assert _names(r.json(), field)
    assert await conn.fetchval("SELECT count(*) FROM routes") == 0
    rid = (
        await client.post("/api/v1/routes", json={"code": "L9", "name": "Linha 9", "geometry": LINE}, headers=auth)
    ).json()["id"]
    r = await client.patch(f"/api/v1/routes/{rid}", json=body, headers=auth)
    assert r.status_code == status, r.text
    assert _names(r.json(), field)
    row = await conn.fetchrow("SELECT contract_id, declared_km FROM routes WHERE id = $1", rid)
    assert (row["contract_id"], row["declared_km"]) == (None, None)


def _names(answer: dict[str, Any], field: str) -> bool:
    """The error answer names `field` (as `field`, or as FastAPI's `body.field`)."""
    named = [answer.get("field")] + [e["field"] for e in answer.get("errors", [])]
    return any(f in (field, f"body.{field}") for f in named)
