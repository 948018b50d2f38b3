"""The SETE import against the SETE double on the real database: first run, re-run, local edits, SETE edits."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import threading
from datetime import date, timedelta
from pathlib import Path

import httpx
import orjson
import pytest
import uvicorn

from telemetria.sete import importer
from telemetria.sete.client import SeteClient, SeteError
from tests.sete_double import IBGE, PASSWORD, USER, SeteDouble

ROOT = Path(__file__).parents[2]
YEAR = date.today().year


@pytest.fixture(autouse=True)
async def no_links(pool) -> None:
    """The links outlive `clean` (they reference no table, so its CASCADE does not reach them)."""
    await pool.execute("TRUNCATE sete_links")


async def run(
    conn, double: SeteDouble, *, dry_run: bool = False, effective_from: date | None = None, pupils: bool = False
) -> dict:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=double.app), base_url="http://sete") as http:
        client = SeteClient(http, IBGE)
        await client.login(USER, PASSWORD)
        snap = await client.snapshot(pupil_counts=pupils)
    items = importer.items_of(snap, YEAR)
    actions = await importer.plan(conn, IBGE, items, YEAR)
    if not dry_run:
        await importer.apply(conn, IBGE, actions, f"sete:{USER}", effective_from)
    return importer.report(IBGE, actions, dry_run)


def by_label(report: dict) -> dict[str, dict]:
    return {i["label"]: i for i in report["items"]}


async def test_first_run_brings_routes_vehicles_drivers_and_schools(conn, clean) -> None:
    report = await run(conn, SeteDouble())
    assert report["summary"] == {"new": 3, "changed": 0, "unchanged": 0, "conflict": 0, "linked": 0, "skipped": 2}
    items = by_label(report)
    assert items["Linha BR-364 km 40"]["status"] == "skipped" and "shape" in items["Linha BR-364 km 40"]["reason"]
    route = await conn.fetchrow("SELECT * FROM routes WHERE code = 'SETE-101'")
    assert route["name"] == "Linha Ramal 12 - Setor Chacareiro" and str(route["declared_km"]) == "18.400"
    assert route["shift"] == "matutino" and route["school_year"] == YEAR
    lon, lat = route["geometry"]["coordinates"][0]
    assert abs(lon - -62.48) < 1e-5 and abs(lat - -10.45) < 1e-5  # 3857 → 4326, within ~1 m
    [stop] = await conn.fetch("SELECT * FROM route_stops WHERE route_id = $1", route["id"])
    assert stop["kind"] == "school" and "INEP 11006340" in stop["name"]
    vehicle = await conn.fetchrow("SELECT plate, capacity, kind FROM vehicles")
    assert dict(vehicle) == {"plate": "NEA1234", "capacity": 29, "kind": "micro-onibus"}
    driver = await conn.fetchrow("SELECT name, cpf, cnh_category FROM drivers")
    assert dict(driver) == {"name": "José da Silva", "cpf": "52998224725", "cnh_category": "AD"}
    # the B-category driver is reported, not registered; the CPF only masked in the report
    assert "52998224725" not in orjson.dumps(report).decode() and "11144477735" not in orjson.dumps(report).decode()
    assert await conn.fetchval("SELECT count(*) FROM drivers") == 1
    # pupils: nothing of them anywhere, not even the point SETE drew at a home
    dump = orjson.dumps([dict(r) for r in await conn.fetch("SELECT * FROM sete_links")]).decode()
    assert "Aluno" not in dump and "52998224725" not in dump


async def test_pupils_are_not_read_unless_counted(conn, clean) -> None:
    double = SeteDouble()
    await run(conn, double)
    assert not any(p.endswith("/alunos") for p in double.requests)


async def test_pupils_are_only_counted_when_asked(conn, clean) -> None:
    double = SeteDouble()
    report = await run(conn, double, pupils=True)
    assert by_label(report)["Linha Ramal 12 - Setor Chacareiro"]["sete"]["pupils"] == 2
    stored = orjson.dumps([dict(r) for r in await conn.fetch("SELECT * FROM sete_links")]).decode()
    assert '"pupils":2' in stored and "Aluno" not in stored and "-10.4483" not in stored


async def test_a_second_run_changes_nothing(conn, clean) -> None:
    double = SeteDouble()
    await run(conn, double)
    versions = await conn.fetchval("SELECT count(*) FROM registry_versions")
    report = await run(conn, double)
    assert report["summary"]["unchanged"] == 3 and report["summary"]["new"] == 0, report
    assert report["summary"]["changed"] == 0 and report["summary"]["conflict"] == 0
    assert await conn.fetchval("SELECT count(*) FROM registry_versions") == versions


async def test_a_local_edit_is_kept_and_a_sete_change_becomes_a_dated_version(conn, clean) -> None:
    double = SeteDouble()
    await run(conn, double)
    await conn.execute("UPDATE vehicles SET capacity = 27")  # the servidor corrected the capacity here
    double.data["veiculos"]["data"][0]["capacidade"] = 31  # and SETE changed it too: a conflict
    double.data["rotas"]["data"][0]["km"] = 19.1  # SETE changed the km only: an update
    day = date.today() + timedelta(days=3)
    report = await run(conn, double, effective_from=day)
    items = by_label(report)
    assert items["NEA1234"]["status"] == "conflict" and items["NEA1234"]["conflicts"] == ["capacity"]
    assert await conn.fetchval("SELECT capacity FROM vehicles") == 27  # ours kept
    route = items["Linha Ramal 12 - Setor Chacareiro"]
    assert route["status"] == "changed" and route["changed"] == ["declared_km"]
    # dated 3 days ahead: today's route keeps its km until that day (issue 33: the current tables show what is in
    # force today), and the version carries SETE's from the day
    assert str(await conn.fetchval("SELECT declared_km FROM routes")) == "18.400"
    newest = await conn.fetchrow(
        "SELECT valid_from, created_by, changed FROM registry_versions WHERE kind = 'route' ORDER BY id DESC LIMIT 1"
    )
    assert newest["valid_from"] == day and newest["created_by"] == f"sete:{USER}"
    assert newest["changed"] == ["declared_km"]
    # once SETE agrees with us again, the next run has nothing to report but the local edit
    double.data["veiculos"]["data"][0]["capacidade"] = 29
    again = by_label(await run(conn, double))
    assert again["NEA1234"]["status"] == "unchanged" and again["NEA1234"]["local_edits"] == ["capacity"]
    assert again["Linha Ramal 12 - Setor Chacareiro"]["status"] == "unchanged"  # the dated change is not made twice
    assert await conn.fetchval("SELECT capacity FROM vehicles") == 27


async def test_dry_run_writes_nothing_and_nothing_is_deleted(conn, clean) -> None:
    double = SeteDouble()
    report = await run(conn, double, dry_run=True)
    assert report["dry_run"] and report["summary"]["new"] == 3
    assert await conn.fetchval("SELECT count(*) FROM routes") == 0
    await run(conn, double)
    double.data["rotas"]["data"].pop(0)  # gone from SETE
    double.data["veiculos"]["data"] = []
    await run(conn, double)
    assert await conn.fetchval("SELECT count(*) FROM routes") == 1
    assert await conn.fetchval("SELECT count(*) FROM vehicles") == 1


async def test_an_existing_vehicle_is_linked_not_duplicated(conn, clean) -> None:
    await conn.execute("INSERT INTO vehicles (plate, capacity) VALUES ('NEA1234', 28)")
    items = by_label(await run(conn, SeteDouble()))
    assert items["NEA1234"]["status"] == "linked" and items["NEA1234"]["conflicts"] == ["capacity", "kind"]
    assert await conn.fetchval("SELECT count(*) FROM vehicles") == 1


async def test_wrong_password_is_an_error(conn, clean) -> None:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=SeteDouble().app), base_url="http://s") as http:
        with pytest.raises(SeteError):
            await SeteClient(http, IBGE).login(USER, "wrong")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_cli_exit_codes_and_dry_run(test_db, conn, clean) -> None:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(SeteDouble().app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:  # noqa: ASYNC110 (a thread sets it; uvicorn offers no event to wait on)
        await asyncio.sleep(0.01)
    env = {**os.environ, "TELEMETRIA_DATABASE_URL": test_db.dsn, "TELEMETRIA_SETE_PASSWORD": PASSWORD}
    base = [sys.executable, "-m", "telemetria.cli", "sete", "import", "--ibge", IBGE, "--user", USER]

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*base, *args], env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)

    try:
        dry = await asyncio.to_thread(cli, "--url", f"http://127.0.0.1:{port}", "--dry-run")
        assert dry.returncode == 0, dry.stderr
        assert orjson.loads(dry.stdout)["summary"]["new"] == 3
        assert await conn.fetchval("SELECT count(*) FROM routes") == 0
        done = await asyncio.to_thread(cli, "--url", f"http://127.0.0.1:{port}")
        assert done.returncode == 0 and await conn.fetchval("SELECT count(*) FROM routes") == 1
        bad = await asyncio.to_thread(cli, "--url", f"http://127.0.0.1:{port}", "--ibge", "1100015")
        assert bad.returncode == 1 and "SETE" in bad.stderr
    finally:
        server.should_exit = True
        thread.join(5)
    gone = await asyncio.to_thread(cli, "--url", f"http://127.0.0.1:{_free_port()}")
    assert gone.returncode == 2 and "unreachable" in gone.stderr


async def test_the_page_imports_from_the_configured_address_only(test_db, conn, clean, people) -> None:
    """POST /api/v1/sete/import (the Rotas page's "Importar do SETE"): a servidor's call, from TELEMETRIA_SETE_URL."""
    from telemetria.app import create_app

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(SeteDouble().app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:  # noqa: ASYNC110 (a thread sets it; uvicorn offers no event to wait on)
        await asyncio.sleep(0.01)
    app = create_app(test_db.settings(rollup_interval_s=0, sete_url=f"http://127.0.0.1:{port}"))
    body = {"ibge": IBGE, "user": USER, "password": PASSWORD}
    try:
        async with app.router.lifespan_context(app):
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
                r = await c.post("/api/v1/sete/import", json={**body, "url": "http://elsewhere"},
                                 headers=people.auth("monitor"))  # fmt: skip
                assert r.status_code == 422  # no address from the request, ever
                r = await c.post("/api/v1/sete/import", json=body, headers=people.auth("auditor"))
                assert r.status_code == 403
                r = await c.post("/api/v1/sete/import", json=body, headers=people.auth("monitor"))
                assert r.status_code == 200 and r.json()["dry_run"] and r.json()["summary"]["new"] == 3, r.text
                assert await conn.fetchval("SELECT count(*) FROM routes") == 0
                r = await c.post("/api/v1/sete/import", json={**body, "dry_run": False}, headers=people.auth("monitor"))
                assert r.status_code == 200 and await conn.fetchval("SELECT count(*) FROM routes") == 1
                r = await c.post("/api/v1/sete/import", json={**body, "password": "no"}, headers=people.auth("monitor"))
                assert r.status_code == 422 and "refused" in r.json()["detail"]
    finally:
        server.should_exit = True
        thread.join(5)
