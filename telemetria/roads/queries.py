"""SQL of the imported road networks (migration 0021): one constant per statement, one thin function each."""

from __future__ import annotations

from datetime import date
from typing import Any

from telemetria.db import Conn

# Any constant: it only keeps two imports from replacing the network at once (the second waits for the first).
IMPORT_LOCK = 4_242_020

WAY_COLUMNS = (
    "network_id", "idx", "osm_id", "highway", "name", "ref", "surface", "oneway", "paved", "node_ids", "lat", "lon",
    "min_lat", "min_lon", "max_lat", "max_lon", "length_m",
)  # fmt: skip

_NETWORK = "id, source, sha256, bbox, imported_at, ways, km, named_km, paved_km, effective_from, localities"

INSERT_NETWORK = """
INSERT INTO road_networks (source, sha256, bbox, polygon, imported_by, effective_from)
VALUES ($1, $2, $3::float8[], $4::jsonb, $5, $6)
RETURNING id"""

# Networks the new one ($2, from local day $1) replaces on every day they applied: never in force again.
SUPERSEDE = """
UPDATE road_networks SET superseded = true, replaced_at = coalesce(replaced_at, now())
WHERE effective_from >= $1 AND id <> $2 AND NOT superseded RETURNING id"""

# Reports computed before must be checked again: the network is part of a rollup's basis (reports/model.py).
BUMP_GENERATION = "UPDATE report_generation SET n = n + 1"

# The networks in force on some day, by first day (roads/inforce.py).
IN_FORCE = """
SELECT id, effective_from, source, sha256 FROM road_networks WHERE NOT superseded AND ways > 0
ORDER BY effective_from, id"""
# What tells one network from another in this database, even after ids restart (TRUNCATE, a restore).
STAMP = "SELECT current_database() AS db, imported_at, ways FROM road_networks WHERE id = $1"
IN_FORCE_ON = """
SELECT id FROM road_networks WHERE NOT superseded AND ways > 0 AND effective_from <= $1
ORDER BY effective_from DESC, id DESC LIMIT 1"""

RETIRE_CURRENT = """
UPDATE road_networks SET current = false, replaced_at = now() WHERE current RETURNING id"""

DELETE_WAYS = """
DELETE FROM road_ways WHERE network_id = ANY($1::bigint[])"""
DELETE_LOCALITIES = """
DELETE FROM road_localities WHERE network_id = ANY($1::bigint[])"""

LOCALITY_COLUMNS = ("network_id", "idx", "osm_id", "kind", "name", "lat", "lon")
LOCALITIES = "SELECT osm_id, kind, name, lat, lon FROM road_localities WHERE network_id = $1 ORDER BY idx"

MAKE_CURRENT = f"""
UPDATE road_networks SET current = true, ways = $2, km = $3, named_km = $4, paved_km = $5, localities = $6
WHERE id = $1
RETURNING {_NETWORK}"""

CURRENT = f"""
SELECT {_NETWORK} FROM road_networks WHERE current"""

HISTORY = f"""
SELECT {_NETWORK}, current, replaced_at FROM road_networks ORDER BY id DESC LIMIT $1"""

# A way intersects the box [W, E] x [S, N] when their ranges overlap on both axes (NULL box: every way).
WAYS = f"""
SELECT {", ".join(WAY_COLUMNS[1:])} FROM road_ways
WHERE network_id = $1
  AND ($2::float8 IS NULL OR (max_lon >= $2 AND min_lon <= $4 AND max_lat >= $3 AND min_lat <= $5))
ORDER BY idx"""

# What the map's base layer draws (roads/api.py): the kinds shown at its zoom, at most $9 rows, no node ids.
# $6: kinds hidden at this zoom; $7: whether kinds not listed in MIN_ZOOM show; $8: the kinds listed there.
MAP_WAYS = """
SELECT highway, name, ref, surface, paved, lat, lon FROM road_ways
WHERE network_id = $1 AND max_lon >= $2 AND min_lon <= $4 AND max_lat >= $3 AND min_lat <= $5
  AND NOT highway = ANY($6::text[]) AND ($7 OR highway = ANY($8::text[]))
ORDER BY idx
LIMIT $9"""


async def lock_imports(conn: Conn) -> None:
    """Wait for any other import to finish; held until the transaction ends."""
    await conn.execute("SELECT pg_advisory_xact_lock($1)", IMPORT_LOCK)


async def insert_network(
    conn: Conn, source: str, sha256: str, bbox: list[float] | None, polygon: dict[str, Any] | None, by: str,
    effective_from: date,
) -> int:  # fmt: skip
    return int(await conn.fetchval(INSERT_NETWORK, source, sha256, bbox, polygon, by, effective_from))


async def supersede(conn: Conn, effective_from: date, network_id: int) -> list[int]:
    return [r["id"] for r in await conn.fetch(SUPERSEDE, effective_from, network_id)]


async def bump_generation(conn: Conn) -> None:
    await conn.execute(BUMP_GENERATION)


async def copy_ways(conn: Conn, rows: Any) -> None:
    """COPY the rows (tuples in WAY_COLUMNS order, any iterable: consumed as it is sent) into road_ways."""
    await conn.copy_records_to_table("road_ways", records=rows, columns=WAY_COLUMNS)


async def retire_current(conn: Conn) -> list[int]:
    return [r["id"] for r in await conn.fetch(RETIRE_CURRENT)]


async def delete_ways(conn: Conn, network_ids: list[int]) -> None:
    """The ways and localities of networks never in force again."""
    await conn.execute(DELETE_WAYS, network_ids)
    await conn.execute(DELETE_LOCALITIES, network_ids)


async def copy_localities(conn: Conn, rows: list[tuple[Any, ...]]) -> None:
    await conn.copy_records_to_table("road_localities", records=rows, columns=LOCALITY_COLUMNS)


async def localities(conn: Conn, network_id: int) -> list[Any]:
    return list(await conn.fetch(LOCALITIES, network_id))


async def make_current(
    conn: Conn, network_id: int, ways: int, km: float, named_km: float, paved_km: float, localities: int
) -> Any:
    return await conn.fetchrow(MAKE_CURRENT, network_id, ways, km, named_km, paved_km, localities)


async def current(conn: Conn) -> Any:
    return await conn.fetchrow(CURRENT)


async def history(conn: Conn, limit: int) -> list[Any]:
    return list(await conn.fetch(HISTORY, limit))


async def ways(conn: Conn, network_id: int, bbox: tuple[float, float, float, float] | None) -> list[Any]:
    w, s, e, n = bbox if bbox is not None else (None, None, None, None)
    return list(await conn.fetch(WAYS, network_id, w, s, e, n))


async def map_ways(
    conn: Conn, network_id: int, bbox: tuple[float, float, float, float], hidden: list[str], others: bool,
    known: list[str], limit: int,
) -> list[Any]:  # fmt: skip
    w, s, e, n = bbox
    return list(await conn.fetch(MAP_WAYS, network_id, w, s, e, n, hidden, others, known, limit))
