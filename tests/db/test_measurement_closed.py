"""A closed month stays closed (issue 31): edits that reach it are refused naming the month, its boletim stays the
stored content with a digest that verifies, the audit log keeps old and new values; closing early needs
`confirm_early`; a month no school year can take is a 400, never a 500 (issue 33 item 6).

The week of tests/db/test_measurement_api.py (route L01, contract 012/2026, March 2026), its month closed.
"""

from __future__ import annotations

import hashlib
import json
from datetime import timedelta
from decimal import Decimal as D
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.measurement.api import local_today
from tests.db.conftest import People
from tests.db.test_measurement_api import _boletim, _setup, said


@pytest.fixture
async def closed(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> dict[str, Any]:
    world = await _setup(client, conn, people)
    r = await client.post(f"/api/v1/measurements/{world['k']}/2026-03/close", headers=people.auth("monitor"))
    assert r.status_code == 201, r.text
    return world | {"sha256": r.json()["sha256"], "before": await _boletim(client, people, contract_id=world["k"])}


async def test_a_contract_edit_reaching_a_closed_month_is_refused(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, closed: dict[str, Any]
) -> None:
    k = closed["k"]

    async def patch(body: dict[str, Any]) -> httpx.Response:
        return await client.patch(f"/api/v1/contracts/{k}", headers=people.auth("monitor"), json=body)

    for body, field in (({"valid_from": "2026-04-01"}, "valid_from"), ({"valid_to": "2026-03-15"}, "valid_to"),
                        ({"price_per_km": "9.99", "effective_from": "2026-03-20"}, "effective_from"),
                        ({"payment_rule": {"justified_paid": True}, "effective_from": "2026-02-20"},
                         "effective_from")):  # fmt: skip
        r = await patch(body)
        assert (r.status_code, r.json()["field"]) == (409, field), (body, r.text)
        assert "2026-03" in r.json()["detail"] and "reabra o mês" in r.json()["detail"], r.text
    frozen = await _boletim(client, people, contract_id=k)
    assert frozen == closed["before"] and frozen["contracts"][0]["amount"] > 0
    stored = await conn.fetchrow("SELECT content, sha256 FROM measurement_closures WHERE reopened_at IS NULL")
    assert hashlib.sha256(bytes(stored["content"])).hexdigest() == stored["sha256"] == closed["sha256"]
    stored_runs = json.loads(bytes(stored["content"]))["runs"]
    # The stored lines, as served (the answer's justification_id, null in a closed month, is not in the content).
    assert frozen["runs"] and all(r.pop("justification_id") is None for r in frozen["runs"])
    assert [r for r in stored_runs if r["date"] <= "2026-03-06"] == frozen["runs"]
    assert frozen["contracts"][0]["months"][0]["sha256"] == closed["sha256"]
    # what does not reach the closed month goes through, audited with old and new values
    r = await patch({"price_per_km": "5.10", "effective_from": "2026-04-01", "number": "012-A/2026"})
    assert r.status_code == 200, r.text
    (detail,) = [orjson.loads(a["detail"]) if isinstance(a["detail"], str) else a["detail"] for a in await conn.fetch(
        "SELECT detail FROM audit_log WHERE action = 'registry.contract.update'")]  # fmt: skip
    assert detail["old"] == {"number": "012/2026"} and detail["new"] == {"number": "012-A/2026"}
    assert D(detail["terms_old"]["price_per_km"]) == D("4.50") and D(detail["terms_new"]["price_per_km"]) == D("5.10")
    r = await client.post(f"/api/v1/measurements/{k}/2026-03/reopen", headers=people.auth("admin"),
                          json={"reason": "validade corrigida"})  # fmt: skip
    assert r.status_code == 200, r.text
    assert (await patch({"valid_from": "2026-03-02"})).status_code == 200  # reopened: the edit applies


async def test_a_registry_edit_reaching_a_closed_month_is_refused(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, closed: dict[str, Any]
) -> None:
    route, auth = closed["route"], people.auth("monitor")
    # the registry as it would be had it been entered in February (the fixture wrote it today)
    await conn.execute("UPDATE registry_versions SET valid_from = '2026-02-01'")
    r = await client.patch(f"/api/v1/routes/{route}", headers=auth,
                           json={"declared_km": 3.0, "effective_from": "2026-03-10"})  # fmt: skip
    assert (r.status_code, r.json()["field"]) == (409, "effective_from"), r.text
    assert "2026-03" in r.json()["detail"] and "reabra o mês" in r.json()["detail"]
    r = await client.post("/api/v1/route-assignments", headers=auth, json={
        "route_id": route, "vehicle_id": closed["b"].vehicle_id, "valid_from": "2026-03-01",
        "effective_from": "2026-03-05"})  # fmt: skip
    assert (r.status_code, r.json()["field"]) == (409, "effective_from"), r.text
    r = await client.patch(f"/api/v1/routes/{route}", headers=auth,
                           json={"declared_km": 3.0, "effective_from": "2026-04-01"})  # fmt: skip
    assert r.status_code == 200, r.text
    (detail,) = [a["detail"] for a in await conn.fetch(
        "SELECT detail FROM audit_log WHERE action = 'registry.route.update'")]  # fmt: skip
    detail = orjson.loads(detail) if isinstance(detail, str) else detail
    assert detail["fields"] == ["declared_km"] and D(str(detail["old"]["declared_km"])) == D("2.2")
    assert D(str(detail["new"]["declared_km"])) == D("3")
    assert (await _boletim(client, people, contract_id=closed["k"]))["runs"] == closed["before"]["runs"]


async def test_closing_before_the_grace_period_needs_confirm_early(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    today = local_today()
    last = today.replace(day=1) - timedelta(days=1)
    month = f"{last:%Y-%m}"
    r = await client.post("/api/v1/contracts", headers=people.auth("monitor"), json={
        "contractor_id": people.contractor_id, "number": "040/2026", "valid_from": f"{last:%Y-%m}-01",
        "valid_to": (today + timedelta(days=30)).isoformat(), "price_per_km": "4.50"})  # fmt: skip
    assert r.status_code == 201, r.text
    k = r.json()["id"]
    settings = client.app.state.settings  # type: ignore[attr-defined]
    client.app.state.settings = settings.model_copy(  # type: ignore[attr-defined]
        update={"measurement_close_grace_days": (today - last).days}
    )
    r = await client.post(f"/api/v1/measurements/{k}/{today:%Y-%m}/close", headers=people.auth("monitor"))
    assert (r.status_code, said(r)) == (409, f"o mês {today:%m/%Y} ainda não terminou: só se fecha um mês encerrado")
    earlier = last.replace(day=1) - timedelta(days=1)  # before the contract's validity
    r = await client.post(f"/api/v1/measurements/{k}/{earlier:%Y-%m}/close", headers=people.auth("monitor"))
    assert (r.status_code, said(r)) == (400, f"o mês {earlier:%m/%Y} está fora da vigência do contrato 040/2026")
    path = f"/api/v1/measurements/{k}/{month}/close"
    r = await client.post(path, headers=people.auth("monitor"))
    assert (r.status_code, r.json()["field"]) == (409, "confirm_early"), r.text
    ago, mm = (today - last).days, f"{last:%m/%Y}"
    assert said(r) == (  # issue 33: in Portuguese for the servidor; field kept for programs
        f"o mês {mm} terminou há {ago} dia{'s' if ago > 1 else ''}; posições dos últimos dias guardadas por um "
        f"rastreador sem sinal ainda podem chegar até {ago} dias depois do fim (Lei 3.588/2023 Art. 15 § 2º): "
        'confirme o fechamento antecipado ({"confirm_early": true}) para fechá-lo agora'
    )
    r = await client.post(path, headers=people.auth("monitor"), json={"confirm_early": False})
    assert r.status_code == 409
    assert await conn.fetchval("SELECT count(*) FROM measurement_closures") == 0
    r = await client.post(path, headers=people.auth("monitor"), json={"confirm_early": True})
    assert r.status_code == 201, r.text
    (detail,) = [
        a["detail"] for a in await conn.fetch("SELECT detail FROM audit_log WHERE action = 'measurement.close'")
    ]
    assert (orjson.loads(detail) if isinstance(detail, str) else detail)["early"] is True
    client.app.state.settings = settings.model_copy(  # type: ignore[attr-defined]
        update={"measurement_close_grace_days": (today - last).days - 1}
    )
    r = await client.post(f"/api/v1/measurements/{k}/{month}/reopen", headers=people.auth("admin"),
                          json={"reason": "teste"})  # fmt: skip
    assert r.status_code == 200, r.text
    assert (await client.post(path, headers=people.auth("monitor"))).status_code == 201  # past the grace period


@pytest.mark.parametrize("action", ["close", "reopen"])
async def test_a_month_out_of_range_is_a_400(client: httpx.AsyncClient, people: People, action: str) -> None:
    r = await client.post("/api/v1/contracts", headers=people.auth("monitor"), json={
        "contractor_id": people.contractor_id, "number": "041/2026", "valid_from": "2026-01-01",
        "valid_to": "2026-12-31", "price_per_km": "4.50"})  # fmt: skip
    k = r.json()["id"]
    for month in ("9999-12", "1999-12", "2101-01"):
        r = await client.post(f"/api/v1/measurements/{k}/{month}/{action}", headers=people.auth("admin"),
                              json={"reason": "x"} if action == "reopen" else None)  # fmt: skip
        assert (r.status_code, r.json()["field"]) == (400, "month"), r.text
        mm = f"{month[5:]}/{month[:4]}"
        assert said(r) == f"o mês {mm} está fora dos anos medidos (2000 a 2100)", r.text
