"""The UPFM's value per year kept in the registry (issue 36): the setting only seeds missing years, an admin sets
a year's value (audited old → new), and a fine for a year with no value is refused in Portuguese naming the year
and where to set it (not the generic "Já existe um registro…")."""

from __future__ import annotations

from collections.abc import AsyncIterator
from decimal import Decimal

import asyncpg
import httpx
import pytest

from telemetria.app import create_app
from tests.conftest import ScratchDb
from tests.db.conftest import People
from tests.db.test_occurrences_api import auth, occurrence, post, to_notified
from tests.db.world import World, make_world


@pytest.fixture
async def api(test_db: ScratchDb) -> AsyncIterator[httpx.AsyncClient]:
    # The setting knows 2025 only; the occurrences below are of 2026.
    app = create_app(test_db.settings(rollup_interval_s=0, upfm_brl="2025=4.52", defense_days=5))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            yield c


@pytest.fixture
async def world(conn: asyncpg.Connection, people: People) -> World:
    return await make_world(conn, people)


async def decided_fine(api: httpx.AsyncClient, w: World, oid: int) -> httpx.Response:
    body = {"penalty": "fine", "motivation": "Art. 42: provado."}
    return await post(api, w, "admin", oid, "decision", json=body)


async def test_a_fine_without_the_years_value_is_refused_then_set_in_the_registry(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    oid = await occurrence(conn, world)  # 2 March 2026, média (20 UPFM)
    await to_notified(api, world, oid)
    await post(api, world, "contractor", oid, "defense", json={"text": "defesa", "final": True})
    r = await decided_fine(api, world, oid)
    assert r.status_code == 409, r.text
    detail = r.json()["detail"]
    assert detail.startswith("Não há valor da UPFM cadastrado para 2026"), detail
    assert "Administração › Valor da UPFM" in detail and "Já existe" not in detail
    assert r.json()["message"] == detail and (r.json()["year"], r.json()["field"]) == (2026, "year")
    assert (await conn.fetchval("SELECT status FROM occurrences WHERE id = $1", oid)) == "defense"  # nothing done

    # Only an admin sets it; bad values name the field.
    url = "/api/v1/upfm-values/2026"
    assert (await api.put(url, json={"brl": "4.71"}, headers=auth(world, "monitor"))).status_code == 403
    for bad in ("0", "-1", "abc", "100000"):
        r = await api.put(url, json={"brl": bad}, headers=auth(world, "admin"))
        assert r.status_code == 422 and "brl" in r.text, (bad, r.text)
    r = await api.put("/api/v1/upfm-values/1999", json={"brl": "1"}, headers=auth(world, "admin"))
    assert r.status_code == 422
    r = await api.put(url, json={"brl": "4.71"}, headers=auth(world, "admin"))
    assert r.status_code == 200 and (r.json()["old"], r.json()["brl"]) == (None, "4.71"), r.text

    r = await decided_fine(api, world, oid)
    assert r.status_code == 200, r.text
    assert (Decimal(str(r.json()["fine_upfm"])), Decimal(str(r.json()["fine_brl"]))) == (Decimal(20), Decimal("94.20"))

    # A correction is audited with the old and the new value.
    r = await api.put(url, json={"brl": "4.8"}, headers=auth(world, "admin"))
    assert r.status_code == 200 and (r.json()["old"], r.json()["brl"]) == ("4.71", "4.8")
    logged = await conn.fetch("SELECT username, target, detail FROM audit_log WHERE action = 'upfm.update' ORDER BY id")
    assert [(x["username"], x["target"], x["detail"]["old"], x["detail"]["new"]) for x in logged] == [
        ("admin", "upfm:2026", None, "4.71"), ("admin", "upfm:2026", "4.71", "4.8")
    ]  # fmt: skip


async def test_the_setting_only_seeds_years_the_registry_lacks(
    api: httpx.AsyncClient, conn: asyncpg.Connection, world: World
) -> None:
    r = await api.get("/api/v1/upfm-values", headers=auth(world, "auditor"))
    assert r.status_code == 200
    assert [(i["year"], i["brl"], i["updated_by"]) for i in r.json()["items"]] == [(2025, "4.52", None)]
    r = await api.put("/api/v1/upfm-values/2025", json={"brl": "5.00"}, headers=auth(world, "admin"))
    assert r.status_code == 200 and r.json()["old"] == "4.52"
    # The setting still says 4.52: it seeds missing years only, never overwrites the registry.
    items = (await api.get("/api/v1/upfm-values", headers=auth(world, "admin"))).json()["items"]
    assert [(i["year"], i["brl"], i["updated_by"]) for i in items] == [(2025, "5", "admin")]
