"""Storing road networks on the real database: import, the network in use, the atomic replace on re-import, a
failed import keeping the previous network, and the ways read back by bounding box."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import date
from functools import cache
from pathlib import Path

import asyncpg
import pytest

from telemetria.geo.geodesic import line_length_m
from telemetria.roads import inforce, store
from telemetria.roads.clip import Clip
from telemetria.roads.errors import RoadsError
from telemetria.roads.model import Network, Way
from telemetria.roads.osmread import read_ways
from telemetria.sim.osm import write_osm
from telemetria.sim.roadnet import grid_ways
from telemetria.sim.roads import make_grid

JARU_BOX = (-62.50, -10.47, -62.44, -10.40)


@cache
def grid() -> tuple[Way, ...]:
    return tuple(grid_ways(make_grid(5)))


@pytest.fixture
async def no_roads(pool: asyncpg.Pool) -> AsyncIterator[None]:
    """No network before the test, and none left after it: other tests of the run expect the service without roads."""
    await pool.execute("TRUNCATE road_networks, road_ways RESTART IDENTITY CASCADE")
    yield
    await pool.execute("TRUNCATE road_networks, road_ways RESTART IDENTITY CASCADE")


@pytest.fixture
def pbf(tmp_path: Path) -> Path:
    path = tmp_path / "grid.osm.pbf"
    write_osm(grid(), path)
    return path


# Every import of these tests starts on the same day, so a run across midnight still has each replace the last.
DAY = date(2026, 3, 2)


async def do_import(conn: asyncpg.Connection, path: Path, clip: Clip | None = None) -> Network:
    return await store.import_ways(
        conn, read_ways(path, clip), source=str(path), sha256="ab" * 32, bbox=clip.bbox if clip else None,
        by="tests", effective_from=DAY,
    )  # fmt: skip


async def rows_of(conn: asyncpg.Connection, network_id: int) -> int:
    return int(await conn.fetchval("SELECT count(*) FROM road_ways WHERE network_id = $1", network_id))


async def test_an_import_is_the_network_in_use(conn: asyncpg.Connection, no_roads: None, pbf: Path) -> None:
    assert await store.current(conn) is None
    net = await do_import(conn, pbf)
    lengths = [line_length_m(w.lon, w.lat) / 1000 for w in grid()]
    assert net.ways == len(grid()) == await rows_of(conn, net.id)
    assert net.km == pytest.approx(sum(lengths), rel=1e-6)  # vertices rounded to 1e-7 degrees in the file
    assert net.named_km == pytest.approx(
        sum(k for k, w in zip(lengths, grid(), strict=True) if w.label), rel=1e-6
    )  # vertices rounded to 1e-7 degrees in the file
    assert net.paved_km == pytest.approx(
        sum(k for k, w in zip(lengths, grid(), strict=True) if w.paved), rel=1e-6
    )  # vertices rounded to 1e-7 degrees in the file
    assert 0 < net.paved_km < net.km
    assert (net.source, net.sha256, net.bbox) == (str(pbf), "ab" * 32, None)
    assert await store.current(conn) == net
    # idx is the order of the file, 0..n-1, the matcher's index into the network
    loaded = await store.load_ways(conn, net.id)
    assert [i for i, _ in loaded] == list(range(len(grid())))
    assert [w.osm_id for _, w in loaded] == [w.osm_id for w in grid()]
    assert all(g.node_ids == w.node_ids and g.name == w.name for (_, g), w in zip(loaded, grid(), strict=True))


async def test_a_reimport_replaces_the_network(conn: asyncpg.Connection, no_roads: None, pbf: Path) -> None:
    old = await do_import(conn, pbf)
    new = await do_import(conn, pbf, Clip(bbox=JARU_BOX))
    assert new.id > old.id and 0 < new.ways < old.ways
    assert await store.current(conn) == new
    assert await rows_of(conn, old.id) == 0  # the old network's ways are gone
    assert await rows_of(conn, new.id) == new.ways
    assert [i for i, _ in await store.load_ways(conn, new.id)] == list(range(new.ways))
    assert new.bbox == JARU_BOX
    # its record stays, no longer in use: which file and when, for what was computed with it
    assert [(n.id, in_use) for n, in_use in await store.history(conn)] == [(new.id, True), (old.id, False)]
    assert await conn.fetchval("SELECT replaced_at IS NOT NULL FROM road_networks WHERE id = $1", old.id)


async def assert_kept(conn: asyncpg.Connection, before: Network) -> None:
    assert await store.current(conn) == before
    assert await rows_of(conn, before.id) == before.ways
    assert await conn.fetchval("SELECT count(*) FROM road_networks") == 1
    assert await conn.fetchval("SELECT count(*) FROM road_ways") == before.ways


async def test_a_corrupt_file_keeps_the_network_in_use(
    conn: asyncpg.Connection, no_roads: None, pbf: Path, tmp_path: Path
) -> None:
    before = await do_import(conn, pbf)
    # Truncated XML: the reader yields ways before it meets the damage, so COPY has rows in flight.
    whole = tmp_path / "grid.osm"
    write_osm(grid(), whole)
    cut = tmp_path / "cut.osm"
    text = whole.read_text()
    cut.write_text(text[: text.index("<way ") + (len(text) - text.index("<way ")) // 2])
    with pytest.raises(RoadsError, match="damaged or truncated"):
        await do_import(conn, cut)
    await assert_kept(conn, before)


async def test_a_bbox_without_roads_keeps_the_network_in_use(
    conn: asyncpg.Connection, no_roads: None, pbf: Path
) -> None:
    before = await do_import(conn, pbf)
    with pytest.raises(RoadsError, match="lies within the bbox"):
        await do_import(conn, pbf, Clip(bbox=(-60.5, -10.5, -60.4, -10.4)))
    await assert_kept(conn, before)


async def test_a_failure_part_way_keeps_the_network_in_use(conn: asyncpg.Connection, no_roads: None, pbf: Path) -> None:
    before = await do_import(conn, pbf)

    def some_then_fail() -> Iterator[Way]:
        yield from grid()[:300]
        raise RoadsError("the disk went away")

    with pytest.raises(RoadsError, match="the disk went away"):
        await store.import_ways(conn, some_then_fail(), source="x", sha256="0" * 64, by="tests")
    await assert_kept(conn, before)
    assert await conn.fetchval("SELECT 1") == 1  # the connection is still usable after the aborted COPY


async def test_no_ways_is_refused(conn: asyncpg.Connection, no_roads: None, pbf: Path) -> None:
    before = await do_import(conn, pbf)
    with pytest.raises(RoadsError, match="gave no road to import; the network in use is unchanged"):
        await store.import_ways(conn, iter([]), source="nothing.osm", sha256="0" * 64, by="tests")
    await assert_kept(conn, before)


async def test_ways_are_loaded_by_bbox(conn: asyncpg.Connection, no_roads: None, pbf: Path) -> None:
    net = await do_import(conn, pbf)
    w_, s_, e_, n_ = JARU_BOX
    want = [
        (i, w)
        for i, w in enumerate(grid())
        if max(w.lon) >= w_ and min(w.lon) <= e_ and max(w.lat) >= s_ and min(w.lat) <= n_
    ]
    got = await store.load_ways(conn, net.id, JARU_BOX)
    assert [i for i, _ in got] == [i for i, _ in want] and 4 <= len(got) < 50
    for (_, g), (_, w) in zip(got, want, strict=True):
        assert (
            g.osm_id == w.osm_id and g.lat == pytest.approx(w.lat, abs=1e-7) and g.lon == pytest.approx(w.lon, abs=1e-7)
        )
    assert await store.load_ways(conn, net.id, (-60.5, -10.5, -60.4, -10.4)) == []
    assert await store.load_ways(conn, net.id + 1) == []


async def test_two_imports_at_once_leave_one_network(pool: asyncpg.Pool, no_roads: None) -> None:
    """The second waits for the first (an advisory lock), then replaces it: one network in use, its ways only."""

    async def one(ways: tuple[Way, ...], name: str) -> Network:
        async with pool.acquire() as conn:
            return await store.import_ways(
                conn, iter(ways), source=name, sha256="0" * 64, by="tests", effective_from=DAY
            )

    a, b = await asyncio.gather(one(grid()[:600], "a.osm"), one(grid()[600:], "b.osm"))
    async with pool.acquire() as conn:
        now = await store.current(conn)
        assert now is not None and now.id == max(a.id, b.id)
        assert await conn.fetchval("SELECT count(*) FROM road_networks WHERE current") == 1
        assert await conn.fetchval("SELECT count(DISTINCT network_id) FROM road_ways") == 1
        assert await rows_of(conn, now.id) == 600


async def test_a_network_superseded_while_read_is_not_built_nor_kept(
    conn: asyncpg.Connection, no_roads: None, pbf: Path
) -> None:
    net = await do_import(conn, pbf)
    # What a concurrent re-import does between reading the network's stamp and its ways: the ways go.
    await conn.execute("DELETE FROM road_ways WHERE network_id = $1 AND idx >= 3", net.id)
    with pytest.raises(inforce.NetworkChanged):
        await inforce.roads(conn, net.id)
    assert not any(key[1:] == (net.id, net.imported_at) for key in inforce._built)
    await conn.execute("DELETE FROM road_ways WHERE network_id = $1", net.id)
    await conn.execute("UPDATE road_networks SET ways = 0 WHERE id = $1", net.id)
    assert await inforce.in_force(conn) == ((), {})


async def test_a_stored_network_keeps_the_pavement_the_import_decided(
    conn: asyncpg.Connection, no_roads: None, pbf: Path
) -> None:
    net = await do_import(conn, pbf)
    first = (await store.load_ways(conn, net.id))[0][1]
    await conn.execute("UPDATE road_ways SET paved = NOT paved WHERE network_id = $1 AND idx = 0", net.id)
    again = (await store.load_ways(conn, net.id))[0][1]
    assert again.paved is not first.paved  # what is stored rules, not today's is_paved()


async def test_localities_go_with_their_network(conn: asyncpg.Connection, no_roads: None) -> None:
    from telemetria.sim.roadnet import grid_localities

    places = grid_localities(make_grid(5))
    first = await store.import_ways(conn, iter(grid()), source="a.osm.pbf", sha256="a" * 64, by="tests",
                                    effective_from=DAY, localities=places)  # fmt: skip
    assert first.localities == len(places) == 6
    assert await store.load_localities(conn, first.id) == places
    built = await inforce.roads(conn, first.id)
    lat, lon = make_grid(5).node(0, 0)
    assert (built.locality(lat, lon) or ("",))[0] == "Jaru"
    # A network from the same day replaces it on every day: its localities go with its ways.
    second = await store.import_ways(conn, iter(grid()), source="b.osm.pbf", sha256="b" * 64, by="tests",
                                     effective_from=DAY)  # fmt: skip
    assert second.localities == 0 and await store.load_localities(conn, first.id) == []
    assert await conn.fetchval("SELECT count(*) FROM road_localities") == 0


async def test_the_demo_imports_its_roads_as_an_installation_would(
    conn: asyncpg.Connection, no_roads: None, tmp_path: Path
) -> None:
    import hashlib

    from telemetria.sim.demo import ensure_demo_roads

    await ensure_demo_roads(conn, 5, tmp_path)
    net = await store.current(conn)
    assert net is not None and (net.ways, net.localities) == (len(grid()), 6)
    path = tmp_path / net.source
    assert net.source == "demo-roads-5.osm.pbf" and net.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    await ensure_demo_roads(conn, 5, tmp_path)  # once imported, the demo leaves it
    assert await store.current(conn) == net
