"""The demo's registry: what `./dev run` registers for its simulated fleet matches what the simulator drives."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

import asyncpg

from telemetria.registry.documents import normalize_cnpj, normalize_cpf
from telemetria.sim.demo import DEMO_PREFIX, demo_plates, ensure_demo_registry, ensure_fleet
from telemetria.sim.vehicle import vehicle_route
from tests.conftest import ScratchDb

SEED = 5
NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)
TABLES = (
    "contractors",
    "drivers",
    "driver_assignments",
    "routes",
    "route_stops",
    "route_assignments",
    "contracts",
    "school_years",
)


async def _counts(conn: asyncpg.Connection) -> dict[str, int]:
    return {t: await conn.fetchval(f"SELECT count(*) FROM {t}") for t in TABLES}


async def test_demo_registry_matches_the_simulator_and_registers_once(
    conn: asyncpg.Connection, clean: None, test_db: ScratchDb, tmp_path: Path
) -> None:
    settings = test_db.settings(data_dir=tmp_path)
    plates = demo_plates(3)
    counts = []
    for _ in range(2):
        await ensure_fleet(conn, settings, 3, prefix=DEMO_PREFIX)
        await ensure_demo_registry(conn, SEED, plates, now=NOW)
        counts.append(await _counts(conn))

    sim = [vehicle_route(SEED, i) for i in range(3)]
    assert counts[0] == {
        "contractors": 1,
        "drivers": 3,
        "driver_assignments": 3,
        "routes": 3,
        "route_stops": sum(len(r.stops) + 1 for r in sim),  # the simulator's stops and the garage
        "route_assignments": 3,
        "contracts": 1,
        "school_years": 1,
    }
    assert counts[1] == counts[0]

    contractor = await conn.fetchrow("SELECT id, cnpj FROM contractors")
    assert normalize_cnpj(contractor["cnpj"]) == contractor["cnpj"]
    # the boletim page has a contract to show: the demo routes' contract, per km, the default rule, a school year
    contract = await conn.fetchrow("SELECT id, contractor_id, number, valid_from, valid_to FROM contracts")
    assert (contract["contractor_id"], contract["number"]) == (contractor["id"], "DEMO-2026")
    assert (contract["valid_from"], contract["valid_to"]) == (date(2026, 1, 1), date(2026, 12, 31))
    assert await conn.fetchval("SELECT price_per_km FROM contract_terms WHERE contract_id = $1", contract["id"]) > 0
    assert {r["contract_id"] for r in await conn.fetch("SELECT contract_id FROM routes")} == {contract["id"]}
    year = await conn.fetchrow("SELECT start_date, end_date FROM school_years WHERE year = 2026")
    assert year["start_date"] <= date(2026, 2, 8) <= NOW.date() <= year["end_date"]
    vehicles = await conn.fetch("SELECT id, plate, contractor_id, kind FROM vehicles ORDER BY plate")
    assert [v["plate"] for v in vehicles] == plates
    assert {(v["contractor_id"], v["kind"]) for v in vehicles} == {(contractor["id"], "onibus")}
    for d in await conn.fetch("SELECT cpf, cnh_category, card_id FROM drivers"):
        assert normalize_cpf(d["cpf"]) == d["cpf"] and d["cnh_category"] == "D" and d["card_id"].startswith("DEMO-")

    for i, (route, vehicle) in enumerate(zip(sim, vehicles, strict=True)):
        row = await conn.fetchrow(
            "SELECT r.id, r.geometry, r.length_m, r.school_year, a.valid_from, a.valid_to, a.weekdays"
            " FROM routes r JOIN route_assignments a ON a.route_id = r.id WHERE r.code = $1 AND a.vehicle_id = $2",
            f"DEMO-{i + 1:02d}",
            vehicle["id"],
        )
        coords = row["geometry"]["coordinates"]
        assert coords[0] == [route.line.lon[0], route.line.lat[0]]
        assert coords[-1] == [route.line.lon[-1], route.line.lat[-1]]
        assert abs(row["length_m"] - route.length_m) < 1.0
        assert row["school_year"] == 2026
        assert (row["valid_from"], row["valid_to"], row["weekdays"]) == (date(2026, 2, 8), None, [1, 2, 3, 4, 5, 6, 7])
        stops = await conn.fetch(
            "SELECT name, kind, lat, lon FROM route_stops WHERE route_id = $1 ORDER BY seq", row["id"]
        )
        assert (stops[0]["name"], stops[0]["kind"]) == ("Garagem", "garage")
        assert [(s["kind"], s["lat"], s["lon"]) for s in stops[1:]] == [(s.kind, s.lat, s.lon) for s in route.stops]
        driver = await conn.fetchval(
            "SELECT d.card_id FROM driver_assignments a JOIN drivers d ON d.id = a.driver_id"
            " WHERE a.vehicle_id = $1 AND a.during @> $2::timestamptz",
            vehicle["id"],
            NOW,
        )
        assert driver == f"DEMO-{i + 1:04d}"
