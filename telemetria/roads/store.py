"""Storing an imported road network and reading it back: the atomic replace of the network in use."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from telemetria.db import Conn
from telemetria.geo.geodesic import line_length_m
from telemetria.localtime import LOCAL_TZ
from telemetria.roads import queries
from telemetria.roads.errors import RoadsError
from telemetria.roads.model import Locality, Network, Way


@dataclass
class _Totals:
    ways: int = 0
    m: float = 0.0
    named_m: float = 0.0
    paved_m: float = 0.0


async def import_ways(
    conn: Conn,
    ways: Iterable[Way],
    *,
    source: str,
    sha256: str,
    bbox: tuple[float, float, float, float] | None = None,
    polygon: dict[str, Any] | None = None,
    by: str,
    effective_from: date | None = None,
    localities: Iterable[Locality] = (),
) -> Network:
    """Store the ways (and the extract's named places) as a new network and make it the one in use from local day
    `effective_from` (None: today).

    The network it follows stays in force for the days before (so their km do not change); networks that began on
    or after that day are superseded and their ways deleted. All in one transaction: if reading the ways fails part
    way (RoadsError from the reader), or none comes, nothing is stored and the previous network stays in use. The
    ways stream into COPY; none is held in a list.
    """
    totals = _Totals()
    first = effective_from or datetime.now(LOCAL_TZ).date()
    async with conn.transaction():
        await queries.lock_imports(conn)
        network_id = await queries.insert_network(
            conn, source, sha256, list(bbox) if bbox else None, polygon, by, first
        )
        await queries.copy_ways(conn, _rows(network_id, ways, totals))
        if totals.ways == 0:
            raise RoadsError(f"{source} gave no road to import; the network in use is unchanged")
        places = list(localities)
        if places:
            await queries.copy_localities(
                conn, [(network_id, k, p.osm_id, p.kind, p.name, p.lat, p.lon) for k, p in enumerate(places)]
            )
        await queries.retire_current(conn)
        await queries.delete_ways(conn, await queries.supersede(conn, first, network_id))
        await queries.bump_generation(conn)
        row = await queries.make_current(
            conn, network_id, totals.ways, totals.m / 1000, totals.named_m / 1000, totals.paved_m / 1000, len(places)
        )
    return _network(row)


def _rows(network_id: int, ways: Iterable[Way], totals: _Totals) -> Iterator[tuple[Any, ...]]:
    """road_ways rows (queries.WAY_COLUMNS) of the ways, idx in order, adding each way's length to the totals."""
    for idx, way in enumerate(ways):
        length = line_length_m(way.lon, way.lat)
        totals.ways += 1
        totals.m += length
        totals.named_m += length if way.label else 0.0
        totals.paved_m += length if way.paved else 0.0
        yield (
            network_id, idx, way.osm_id, way.highway, way.name, way.ref, way.surface, way.oneway, way.paved,
            list(way.node_ids), list(way.lat), list(way.lon),
            min(way.lat), min(way.lon), max(way.lat), max(way.lon), length,
        )  # fmt: skip


async def current(conn: Conn) -> Network | None:
    """The network in use, or None when no roads were imported."""
    row = await queries.current(conn)
    return _network(row) if row else None


async def history(conn: Conn, limit: int = 20) -> list[tuple[Network, bool]]:
    """The latest imports, newest first, each with whether it is the one in use."""
    return [(_network(r), bool(r["current"])) for r in await queries.history(conn, limit)]


async def load_ways(
    conn: Conn, network_id: int, bbox: tuple[float, float, float, float] | None = None
) -> list[tuple[int, Way]]:
    """(idx, way) of the network's ways whose extent meets the bbox (W, S, E, N degrees; None: all), by idx.

    idx is the way's place in the network (0..n-1, the order of the import), the index the matcher uses.
    """
    return [
        (
            r["idx"],
            Way(
                osm_id=r["osm_id"],
                highway=r["highway"],
                name=r["name"],
                ref=r["ref"],
                surface=r["surface"],
                oneway=r["oneway"],
                node_ids=tuple(r["node_ids"]),
                lat=tuple(r["lat"]),
                lon=tuple(r["lon"]),
                paved_as_imported=r["paved"],
            ),
        )
        for r in await queries.ways(conn, network_id, bbox)
    ]


def _network(row: Any) -> Network:
    return Network(
        id=row["id"],
        source=row["source"],
        sha256=row["sha256"],
        bbox=tuple(row["bbox"]) if row["bbox"] is not None else None,
        imported_at=row["imported_at"],
        ways=row["ways"],
        km=row["km"],
        named_km=row["named_km"],
        paved_km=row["paved_km"],
        effective_from=row["effective_from"],
        localities=row["localities"],
    )


async def load_localities(conn: Conn, network_id: int) -> list[Locality]:
    """The network's named places, in the order of the file."""
    return [
        Locality(r["osm_id"], r["kind"], r["name"], r["lat"], r["lon"])
        for r in await queries.localities(conn, network_id)
    ]
