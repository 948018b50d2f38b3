"""The public area through the real app and database: off → 404 everywhere; on → itineraries and monthly service
without a login, nothing personal in them (the registry's real plates, drivers' names and CPFs looked for in every
answer), cacheable (ETag, 304), and the month's figures those of the measurement (the boletim) route by route."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime, timedelta

import asyncpg
import httpx
import pytest

from telemetria.localtime import LOCAL_TZ
from telemetria.publication.grid import snap
from telemetria.sim.demo import ensure_demo_registry
from tests.conftest import ScratchDb
from tests.db.conftest import People, register
from tests.db.simcontract import app_client

PLATES = ("PUB1A01", "PUB2B02", "PUB3C03")


def today() -> date:
    return datetime.now(UTC).astimezone(LOCAL_TZ).date()


@pytest.fixture
async def demo(conn: asyncpg.Connection, people: People) -> None:
    """The demo registry (drivers with names and CPFs, routes with stops, the contract, the school year)."""
    for i, plate in enumerate(PLATES):
        await register(conn, plate, f"pub-{i}", datetime.now(UTC) - timedelta(days=3))
    await ensure_demo_registry(conn, 1, list(PLATES))


@pytest.fixture
async def public(test_db: ScratchDb) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(test_db, public_enabled=True, public_boarding_precision_m=100) as c:
        yield c


@pytest.fixture
async def private(test_db: ScratchDb) -> AsyncIterator[httpx.AsyncClient]:
    async with app_client(test_db) as c:  # public_enabled: its default, off
        yield c


def _public_paths(client: httpx.AsyncClient) -> list[str]:
    """Every /public/... and /publico... address the app serves (the seals' ones too), parameters filled in."""
    app = client.app  # type: ignore[attr-defined]
    fill = {"date": "2026-03-02", "rest": "qualquer", "day": "2026-03-02"}
    out = []
    routes = [r for top in app.routes for r in getattr(getattr(top, "original_router", None), "routes", [top])]
    for route in routes:
        path = getattr(route, "path", "")
        if path.startswith(("/public/", "/publico")) and "GET" in getattr(route, "methods", ()):
            out.append(re.sub(r"\{(\w+)(:\w+)?\}", lambda m: fill.get(m.group(1), "1"), path))
    return out


async def test_off_every_public_address_answers_404(private: httpx.AsyncClient, demo: None) -> None:
    paths = _public_paths(private)
    assert {"/public/itineraries", "/public/service", "/publico", "/publico/servico", "/publico/selos"} <= set(paths)
    for path in paths:
        r = await private.get(path, params={"month": "2026-03", "format": "csv"})
        assert r.status_code == 404, (path, r.status_code)
        assert "Cache-Control" not in r.headers or "public" not in r.headers["Cache-Control"]
    page = await private.get("/publico")
    assert "text/html" in page.headers["content-type"] and "não existe" in page.text  # a page, not the login


async def _personal(conn: asyncpg.Connection) -> list[str]:
    """What identifies someone in the registry: plates, drivers' names and CPFs, trackers' ids."""
    rows = await conn.fetch(
        "SELECT plate AS v FROM vehicles UNION ALL SELECT name FROM drivers UNION ALL SELECT cpf FROM drivers"
        " UNION ALL SELECT unique_id FROM trackers"
    )
    found = [r["v"] for r in rows if r["v"]]
    assert len(found) >= 3 * len(PLATES)
    return found


async def test_on_the_itineraries_of_the_year_in_force_without_login(
    public: httpx.AsyncClient, conn: asyncpg.Connection, demo: None
) -> None:
    r = await public.get("/public/itineraries")
    assert r.status_code == 200, r.text
    data = r.json()
    assert data["school_year"] == today().year and data["boarding_precision_m"] == 100
    codes = [x["code"] for x in data["routes"]]
    assert codes == sorted(await conn.fetchval("SELECT array_agg(code) FROM routes"))
    stops = await conn.fetch(
        "SELECT r.code, s.seq, s.name, s.lat, s.lon, s.kind FROM route_stops s JOIN routes r ON r.id = s.route_id"
        " ORDER BY r.code, s.seq"
    )
    for route in data["routes"]:
        mine = [s for s in stops if s["code"] == route["code"] and s["kind"] != "garage"]
        assert [s["kind"] for s in route["stops"]] == [s["kind"] for s in mine]
        for got, reg in zip(route["stops"], mine, strict=True):
            if reg["kind"] == "boarding":  # on the grid, nameless
                assert (got["lat"], got["lon"]) == snap([reg["lat"]], [reg["lon"]], 100)[0]
                assert got["name"] is None
            else:
                assert got["name"] == reg["name"]
                assert (got["lat"], got["lon"]) == (round(reg["lat"], 6), round(reg["lon"], 6))
        assert route["schools"] == [f"Escola Municipal da linha {route['code']}"]
        assert len(route["line"]) >= 2 and route["km_basis"] == "traced" and route["km"] == route["length_km"] > 0
    for text in await _personal(conn):
        assert text not in r.text


async def test_itineraries_as_csv_and_cacheable(
    public: httpx.AsyncClient, conn: asyncpg.Connection, demo: None
) -> None:
    r = await public.get("/public/itineraries", params={"format": "csv"})
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/csv")
    assert r.headers["content-disposition"] == f'attachment; filename="itinerarios_{today().year}.csv"'
    assert r.content.startswith("\ufeff".encode()) and r.text.lstrip("\ufeff").startswith("Ano letivo;Rota;")
    assert r.headers["cache-control"] == "public, max-age=300"
    for text in await _personal(conn):
        assert text not in r.text
    again = await public.get("/public/itineraries", params={"format": "csv"},
                             headers={"If-None-Match": r.headers["etag"]})  # fmt: skip
    assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == r.headers["etag"]
    j = await public.get("/public/itineraries")
    assert j.headers["etag"] != r.headers["etag"] and j.headers["cache-control"] == "public, max-age=300"
    assert (await public.get("/public/itineraries", headers={"If-None-Match": '"stale"'})).status_code == 200
    # an edit changes the content, and so the validator
    await conn.execute("UPDATE routes SET name = 'Linha nova' WHERE code = 'DEMO-01'")
    changed = await public.get("/public/itineraries", headers={"If-None-Match": j.headers["etag"]})
    assert changed.status_code == 200 and "Linha nova" in changed.text


async def test_precision_zero_publishes_boarding_places_as_registered(
    test_db: ScratchDb, conn: asyncpg.Connection, demo: None
) -> None:
    async with app_client(test_db, public_enabled=True, public_boarding_precision_m=0) as c:
        data = (await c.get("/public/itineraries")).json()
    reg = await conn.fetchrow(
        "SELECT s.name, s.lat, s.lon FROM route_stops s JOIN routes r ON r.id = s.route_id"
        " WHERE r.code = 'DEMO-01' AND s.kind = 'boarding' ORDER BY s.seq LIMIT 1"
    )
    first = next(s for s in data["routes"][0]["stops"] if s["kind"] == "boarding")
    assert (first["name"], first["lat"], first["lon"]) == (reg["name"], round(reg["lat"], 6), round(reg["lon"], 6))


async def test_the_service_of_a_month_is_the_measurements(
    public: httpx.AsyncClient, conn: asyncpg.Connection, people: People, demo: None
) -> None:
    yesterday = today() - timedelta(days=1)
    month = f"{yesterday:%Y-%m}"
    r = await public.get("/public/service", params={"month": month})
    assert r.status_code == 200, r.text
    data = r.json()
    assert (data["from"], data["to"]) == (f"{month}-01", yesterday.isoformat())
    assert data["complete"] == ((yesterday + timedelta(days=1)).month != yesterday.month)
    boletim = await public.get("/api/v1/reports/measurement", headers=people.auth("auditor"),
                               params={"from": data["from"], "to": data["to"]})  # fmt: skip
    assert boletim.status_code == 200, boletim.text
    want = {t["code"]: t for k in boletim.json()["contracts"] for t in k["routes"]}
    got = {x["code"]: x for x in data["routes"]}
    assert set(got) == set(want) and len(got) == len(PLATES)
    for code, t in want.items():
        assert (got[code]["runs_due"], got[code]["runs_made"], got[code]["km_made"]) == (
            t["runs_due"], t["runs_made"], t["realized_km"])  # fmt: skip
        assert got[code]["runs_due"] > 0 and got[code]["name"].startswith("Linha demo")
    assert data["totals"]["runs_due"] == sum(x["runs_due"] for x in data["routes"])
    csv = await public.get("/public/service", params={"month": month, "format": "csv"})
    assert csv.status_code == 200
    assert csv.headers["content-disposition"] == f'attachment; filename="servico_{month}.csv"'
    header = "Linha;Mês;Rota;Nome da rota;Corridas devidas;Corridas realizadas;Km realizado;Contado até"
    assert csv.text.lstrip("\ufeff").splitlines()[0] == header
    for text in await _personal(conn):
        assert text not in r.text and text not in csv.text
    assert (await public.get("/public/service", params={"month": month},
                             headers={"If-None-Match": r.headers["etag"]})).status_code == 304  # fmt: skip


@pytest.mark.parametrize("month", ["2026-13", "2026-3", "março", "2026-03-01", "0000-01", "9999-12", "1899-01"])
async def test_a_month_that_is_not_one_is_refused_naming_it(public: httpx.AsyncClient, month: str) -> None:
    r = await public.get("/public/service", params={"month": month})
    assert r.status_code in (400, 422) and "month" in r.text


async def test_a_month_not_begun_is_refused_naming_it(public: httpx.AsyncClient) -> None:
    later = today().replace(day=28) + timedelta(days=10)
    r = await public.get("/public/service", params={"month": f"{later:%Y-%m}"})
    assert r.status_code == 400 and r.json()["field"] == "month"
    assert (await public.get("/public/service")).status_code == 422
