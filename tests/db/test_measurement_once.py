"""One drive is paid once, whatever is asked: the boletim of each contract, a single route's justification and
the coming days (issue 31), through the real API and database.

Three routes along the same ~2.2 km road: L01 (contract 021/2026, vehicle A), L03 (021/2026, vehicle C) and L02
(022/2026, vehicle B), all of one contractor. On Wednesday 4 March 2026 only A drives, along L01: B and C stay at
the garage. A's drive is L01's run; it is no substitution for L02 (another contract) nor for L03 (the route next
door), so both are `not_made`, and L03 can be justified.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal as D
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.measurement.api import local_today
from tests.db.conftest import People, register
from tests.db.test_measurement_api import LINE, PRICE, _drive, _garage, _post_fixes

DAY = "2026-03-04"


async def _contract(client: httpx.AsyncClient, people: People, number: str, first: str, last: str) -> int:
    r = await client.post("/api/v1/contracts", headers=people.auth("monitor"), json={
        "contractor_id": people.contractor_id, "number": number, "lot": "1", "valid_from": first,
        "valid_to": last, "price_per_km": str(PRICE)})  # fmt: skip
    assert r.status_code == 201, r.text
    return int(r.json()["id"])


async def _route(conn: asyncpg.Connection, code: str, contract: int, vehicle: int, since: str) -> int:
    rid = await conn.fetchval(
        "INSERT INTO routes (code, name, school_year, geometry, length_m, declared_km, contract_id)"
        " VALUES ($1, $1, $2, $3, 2190, 2.2, $4) RETURNING id",
        code, int(since[:4]), LINE, contract,
    )  # fmt: skip
    await conn.execute(
        "INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, $3)",
        rid, vehicle, date.fromisoformat(since),
    )  # fmt: skip
    return int(rid)


async def _boletim(client: httpx.AsyncClient, people: People, cid: int, first: str, last: str) -> Any:
    r = await client.get("/api/v1/reports/measurement", headers=people.auth("auditor"),
                         params={"contract_id": cid, "from": first, "to": last})  # fmt: skip
    assert r.status_code == 200, r.text
    return orjson.loads(r.content)


@pytest.fixture
async def world(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> dict[str, Any]:
    ts = [await register(conn, p, f"86100000000010{n}") for n, p in enumerate(("AAA1A11", "BBB2B22", "CCC3C33"))]
    for t in ts:
        await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id, t.vehicle_id)
    r = await client.put("/api/v1/school-years/2026", headers=people.auth("monitor"),
                         json={"start": "2026-02-02", "end": "2026-12-18"})  # fmt: skip
    assert r.status_code == 200, r.text
    k1 = await _contract(client, people, "021/2026", "2026-02-01", "2026-12-31")
    k2 = await _contract(client, people, "022/2026", "2026-02-01", "2026-12-31")
    a, b, c = ts
    routes = {
        "L01": await _route(conn, "L01", k1, a.vehicle_id, "2026-02-01"),
        "L02": await _route(conn, "L02", k2, b.vehicle_id, "2026-02-01"),
        "L03": await _route(conn, "L03", k1, c.vehicle_id, "2026-02-01"),
    }
    day = date.fromisoformat(DAY)
    await _post_fixes(client, a, _drive(day))
    await _post_fixes(client, b, _garage(day))
    await _post_fixes(client, c, _garage(day))
    return {"k1": k1, "k2": k2, "a": a, "b": b, "c": c, **routes}


def _by_code(got: Any) -> dict[str, dict[str, Any]]:
    return {r["code"]: r for r in got["runs"]}


async def test_one_drive_is_paid_once_across_contracts(
    client: httpx.AsyncClient, people: People, world: dict[str, Any]
) -> None:
    one = _by_code(await _boletim(client, people, world["k1"], DAY, DAY))
    assert (one["L01"]["status"], one["L01"]["vehicle_id"], one["L01"]["substitution"]) == (
        "made", world["a"].vehicle_id, False)  # fmt: skip
    two = await _boletim(client, people, world["k2"], DAY, DAY)
    (l02,) = two["runs"]
    assert (l02["status"], l02["vehicle_id"], l02["substitution"]) == ("not_made", world["b"].vehicle_id, False)
    assert l02["payable_km"] == 0 and two["contracts"][0]["amount"] == 0
    assert one["L03"]["status"] == "not_made" and one["L03"]["substitution"] is False


async def test_a_justification_agrees_with_the_boletim(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, world: dict[str, Any]
) -> None:
    assert _by_code(await _boletim(client, people, world["k1"], DAY, DAY))["L03"]["status"] == "not_made"
    r = await client.post("/api/v1/run-justifications", headers=people.auth("monitor"),
                          json={"route_id": world["L03"], "date": DAY, "reason": "ônibus quebrado"})  # fmt: skip
    assert r.status_code == 201, r.text
    assert _by_code(await _boletim(client, people, world["k1"], DAY, DAY))["L03"]["status"] == "justified"
    r = await client.post("/api/v1/run-justifications", headers=people.auth("monitor"),
                          json={"route_id": world["L01"], "date": DAY, "reason": "ônibus quebrado"})  # fmt: skip
    assert (r.status_code, r.json()["field"]) == (400, "date")  # L01 was made: nothing to justify


async def test_the_coming_days_are_pending_and_not_counted(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    today = local_today()
    last = today + timedelta(days=7)
    for year in sorted({today.year, last.year}):
        r = await client.put(f"/api/v1/school-years/{year}", headers=people.auth("monitor"),
                             json={"start": f"{year}-01-02", "end": f"{year}-12-31"})  # fmt: skip
        assert r.status_code == 200, r.text
    t = await register(conn, "DDD4D44", "861000000000199")
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id, t.vehicle_id)
    k = await _contract(client, people, "030/2026", (today - timedelta(days=40)).isoformat(),
                        (today + timedelta(days=40)).isoformat())  # fmt: skip
    await _route(conn, "L09", k, t.vehicle_id, (today - timedelta(days=40)).isoformat())
    got = await _boletim(client, people, k, today.isoformat(), last.isoformat())
    runs = got["runs"]
    assert runs and {r["status"] for r in runs} == {"pending"}
    assert all(r["payable_km"] == 0 and r["amount"] == 0 for r in runs)
    (c,) = got["contracts"]
    assert (c["runs_due"], c["runs_not_made"], c["runs_pending"]) == (0, 0, len(runs))
    assert c["amount"] == 0 and c["contracted_km"] == 0
    assert D(str(c["pending_km"])) == D("2.2") * len(runs)


async def test_a_routes_contract_is_a_dated_version(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, world: dict[str, Any]
) -> None:
    """L02 moves from 022/2026 to 021/2026 from 5 March: its 4 March run stays 022's, its 5 March run is 021's."""
    await conn.execute("UPDATE registry_versions SET valid_from = '2026-02-01'")  # entered in February
    await _post_fixes(client, world["b"], _drive(date(2026, 3, 5)))
    r = await client.patch(f"/api/v1/routes/{world['L02']}", headers=people.auth("monitor"),
                           json={"contract_id": world["k1"], "effective_from": "2026-03-05"})  # fmt: skip
    assert r.status_code == 200, r.text
    one = await _boletim(client, people, world["k1"], "2026-03-04", "2026-03-05")
    two = await _boletim(client, people, world["k2"], "2026-03-04", "2026-03-05")
    assert [(x["code"], x["date"]) for x in two["runs"]] == [("L02", "2026-03-04")]
    assert ("L02", "2026-03-05") in [(x["code"], x["date"]) for x in one["runs"]]
    assert ("L02", "2026-03-04") not in [(x["code"], x["date"]) for x in one["runs"]]
    assert [t["code"] for t in two["contracts"][0]["routes"]] == ["L02"]  # it belonged to 022/2026 in the period
    # a justification goes to the contract the route had that day
    r = await client.post("/api/v1/run-justifications", headers=people.auth("monitor"),
                          json={"route_id": world["L02"], "date": DAY, "reason": "pneu furado"})  # fmt: skip
    assert r.status_code == 201, r.text
    again = await _boletim(client, people, world["k2"], DAY, DAY)
    assert again["runs"][0]["status"] == "justified"


async def test_one_drive_is_one_substitution_across_contracts(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    """L11 (contract 061/2026, vehicle A) and L12 (062/2026, vehicle B) run along the same road; on 4 March both
    stay at the garage and the spare vehicle S drives the road once: it stands in for one run, never two."""
    ts = [await register(conn, p, f"86100000000030{n}") for n, p in enumerate(("AAA6A11", "BBB6B22", "SSS6S33"))]
    for t in ts:
        await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id, t.vehicle_id)
    r = await client.put("/api/v1/school-years/2026", headers=people.auth("monitor"),
                         json={"start": "2026-02-02", "end": "2026-12-18"})  # fmt: skip
    assert r.status_code == 200, r.text
    k1 = await _contract(client, people, "061/2026", "2026-02-01", "2026-12-31")
    k2 = await _contract(client, people, "062/2026", "2026-02-01", "2026-12-31")
    a, b, s = ts
    l11 = await _route(conn, "L11", k1, a.vehicle_id, "2026-02-01")
    l12 = await _route(conn, "L12", k2, b.vehicle_id, "2026-02-01")
    day = date.fromisoformat(DAY)
    for t in (a, b):
        await _post_fixes(client, t, _garage(day))
    await _post_fixes(client, s, _drive(day))
    (one,) = (await _boletim(client, people, k1, DAY, DAY))["runs"]
    (two,) = (await _boletim(client, people, k2, DAY, DAY))["runs"]
    assert (one["status"], one["substitution"], one["vehicle_id"]) == ("made", True, s.vehicle_id)  # the first claim
    assert (two["status"], two["substitution"]) == ("not_made", False)
    assert two["payable_km"] == 0
    # the second route alone gives the same answer: its justification is accepted
    r = await client.post("/api/v1/run-justifications", headers=people.auth("monitor"),
                          json={"route_id": l12, "date": DAY, "reason": "ônibus quebrado"})  # fmt: skip
    assert r.status_code == 201, r.text
    r = await client.post("/api/v1/run-justifications", headers=people.auth("monitor"),
                          json={"route_id": l11, "date": DAY, "reason": "ônibus quebrado"})  # fmt: skip
    assert (r.status_code, r.json()["field"]) == (400, "date")
