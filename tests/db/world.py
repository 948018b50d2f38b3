"""A small registered world for access tests: two contractors, each with a vehicle, tracker, driver, route, contract."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import asyncpg

from telemetria.registry import fleet
from tests.db.conftest import People

LINE = {"type": "LineString", "coordinates": [[-62.4700, -10.4400], [-62.4650, -10.4400], [-62.4650, -10.4350]]}
ZONE = {
    "type": "Polygon",
    "coordinates": [[[-62.47, -10.44], [-62.46, -10.44], [-62.46, -10.43], [-62.47, -10.43], [-62.47, -10.44]]],
}
CPFS = ("52998224725", "11144477735")  # valid check digits


@dataclass
class World:
    people: People
    ids: dict[str, int]

    def __getitem__(self, key: str) -> int:
        return self.ids[key]


async def make_world(conn: asyncpg.Connection, people: People) -> World:
    ids: dict[str, int] = {}
    for n, (cid, plate) in enumerate(((people.contractor_id, "AAA1A11"), (people.other_contractor_id, "BBB2B22")), 1):
        v = await fleet.add_vehicle(conn, plate)
        await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", cid, v["id"])
        t = await fleet.add_tracker(conn, f"86000000000000{n}", plate)
        d = await conn.fetchval(
            "INSERT INTO drivers (name, cpf, cnh_category, card_id, contractor_id) VALUES ($1, $2, 'D', $3, $4)"
            " RETURNING id",
            f"Condutor {n}",
            CPFS[n - 1],
            f"CARD{n}",
            cid,
        )
        r = await conn.fetchval(
            "INSERT INTO routes (code, name, school_year, geometry, length_m) VALUES ($1, $2, 2026, $3, 1100)"
            " RETURNING id",
            f"R{n}",
            f"Linha {n}",
            LINE,
        )
        ra = await conn.fetchval(
            "INSERT INTO route_assignments (route_id, vehicle_id, valid_from)"
            " VALUES ($1, $2, '2026-02-01') RETURNING id",
            r,
            v["id"],
        )
        da = await conn.fetchval(
            "INSERT INTO driver_assignments (driver_id, vehicle_id, during)"
            " VALUES ($1, $2, tstzrange('2026-01-01', NULL)) RETURNING id",
            d,
            v["id"],
        )
        k = await conn.fetchval(
            "INSERT INTO contracts (contractor_id, number, valid_from, valid_to)"
            " VALUES ($1, $2, '2026-01-01', '2026-12-31') RETURNING id",
            cid,
            f"{n}/2026",
        )
        await conn.execute("INSERT INTO contract_terms (contract_id, valid_from, price_per_km) VALUES ($1, $2, 4.5)", k,
                           date(2026, 1, 1))  # fmt: skip
        ids |= {f"v{n}": v["id"], f"t{n}": t["id"], f"d{n}": d, f"r{n}": r, f"ra{n}": ra, f"da{n}": da, f"k{n}": k}
    ids["c1"], ids["c2"] = people.contractor_id, people.other_contractor_id
    ids["z1"] = await conn.fetchval(
        "INSERT INTO speed_zones (name, limit_kmh, geometry) VALUES ('Escola', 30, $1) RETURNING id", ZONE
    )
    return World(people, ids)
