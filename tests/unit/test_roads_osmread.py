"""Reading roads from OSM files: the simulator's grid written and read back (XML, PBF, compressed), the ways kept
and dropped by their tags, clipping by bbox and polygon, and every bad file refused with a message naming it."""

from __future__ import annotations

import bz2
import gzip
from functools import cache
from pathlib import Path

import orjson
import pytest
from shapely.geometry import Point, Polygon

from telemetria.roads.clip import Clip, load_polygon
from telemetria.roads.errors import RoadsError
from telemetria.roads.model import Way
from telemetria.roads.osmread import read_ways
from telemetria.sim.osm import way_tags, write_osm
from telemetria.sim.roadnet import grid_ways
from telemetria.sim.roads import make_grid


@cache
def grid() -> tuple[Way, ...]:
    return tuple(grid_ways(make_grid(3)))


def assert_same_ways(got: list[Way], want: list[Way] | tuple[Way, ...]) -> None:
    """Same ids, tags, node ids and order; vertices to 1e-7 degrees (OSM stores 7 decimals)."""
    assert [w.osm_id for w in got] == [w.osm_id for w in want]
    for g, w in zip(got, want, strict=True):
        assert (g.highway, g.name, g.ref, g.surface, g.oneway, g.node_ids) == (
            w.highway, w.name, w.ref, w.surface, w.oneway, w.node_ids,
        )  # fmt: skip
        assert max(abs(a - b) for a, b in zip(g.lat + g.lon, w.lat + w.lon, strict=True)) <= 1e-7


@pytest.mark.parametrize("name", ["grid.osm", "grid.osm.pbf"])
def test_the_grid_round_trips(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    write_osm(grid(), path)
    assert_same_ways(list(read_ways(path)), grid())


def test_the_format_is_read_from_the_bytes_not_the_name(tmp_path: Path) -> None:
    write_osm(grid(), tmp_path / "grid.osm.pbf")
    write_osm(grid(), tmp_path / "grid.osm")
    (tmp_path / "roads.dat").write_bytes((tmp_path / "grid.osm.pbf").read_bytes())
    xml = (tmp_path / "grid.osm").read_bytes()
    (tmp_path / "grid.osm.gz").write_bytes(gzip.compress(xml))
    (tmp_path / "grid.osm.bz2").write_bytes(bz2.compress(xml))
    for name in ("roads.dat", "grid.osm.gz", "grid.osm.bz2"):
        assert_same_ways(list(read_ways(tmp_path / name)), grid())


def osm_xml(path: Path, ways: list[tuple[int, list[int], dict[str, str]]]) -> Path:
    """A small OSM XML file: nodes 1..9 along a line, then the given ways (id, node refs, tags)."""
    lines = ['<?xml version="1.0" encoding="UTF-8"?>', '<osm version="0.6">']
    lines += [f'<node id="{i}" lat="{-10.4 - i / 1000:.7f}" lon="{-62.4 - i / 1000:.7f}"/>' for i in range(1, 10)]
    for way_id, refs, tags in ways:
        lines.append(f'<way id="{way_id}">')
        lines += [f'<nd ref="{r}"/>' for r in refs]
        lines += [f'<tag k="{k}" v="{v}"/>' for k, v in tags.items()]
        lines.append("</way>")
    path.write_text("\n".join([*lines, "</osm>"]))
    return path


def test_only_ways_a_vehicle_may_drive_are_kept(tmp_path: Path) -> None:
    kept = {
        1: {"highway": "residential"},
        2: {"highway": "track", "surface": "ground"},
        3: {"highway": "service", "access": "private", "motor_vehicle": "yes"},
        4: {"highway": "primary_link"},
        5: {"highway": "unclassified", "access": "no", "vehicle": "yes"},
    }
    dropped = {
        10 + i: {"highway": h}
        for i, h in enumerate(
            ["footway", "path", "cycleway", "steps", "pedestrian", "bridleway", "construction", "proposed", "platform"]
        )
    } | {
        30: {"highway": "service", "access": "private"},
        31: {"highway": "residential", "access": "no"},
        32: {"highway": "pedestrian", "area": "yes"},
        33: {"highway": "residential", "area": "yes"},
        34: {"building": "school"},
        35: {"highway": "tertiary", "motor_vehicle": "no"},
    }
    path = osm_xml(tmp_path / "kinds.osm", [(i, [1, 2, 3], tags) for i, tags in (kept | dropped).items()])
    assert [w.osm_id for w in read_ways(path)] == sorted(kept)


def test_oneway_against_the_nodes_is_reversed(tmp_path: Path) -> None:
    path = osm_xml(
        tmp_path / "oneway.osm",
        [
            (1, [1, 2, 3], {"highway": "residential", "oneway": "-1"}),
            (2, [1, 2, 3], {"highway": "residential", "oneway": "yes"}),
            (3, [1, 2, 3], {"highway": "residential", "oneway": "1"}),
            (4, [1, 2, 3], {"highway": "residential", "oneway": "true"}),
            (5, [1, 2, 3], {"highway": "residential", "oneway": "no"}),
            (6, [1, 2, 3, 1], {"highway": "residential", "junction": "roundabout"}),
            (7, [1, 2, 3], {"highway": "motorway"}),
            (8, [1, 2, 3], {"highway": "motorway", "oneway": "no"}),
        ],
    )
    ways = {w.osm_id: w for w in read_ways(path)}
    assert ways[1].node_ids == (3, 2, 1) and ways[1].oneway
    assert ways[1].lat[0] == pytest.approx(-10.403) and ways[1].lon[-1] == pytest.approx(-62.401)
    assert all(ways[i].node_ids == (1, 2, 3) and ways[i].oneway for i in (2, 3, 4, 7))
    assert ways[6].oneway and not ways[5].oneway and not ways[8].oneway


def test_only_the_roads_nodes_are_indexed(tmp_path: Path) -> None:
    """The second pass keeps the locations of the drivable roads' nodes only: a regional extract's buildings,
    footways and rivers cost the index nothing."""
    import osmium

    path = osm_xml(
        tmp_path / "mixed.osm",
        [
            (1, [1, 2, 3], {"highway": "residential"}),
            (2, [4, 5, 6, 4], {"building": "yes"}),
            (3, [7, 8], {"highway": "footway"}),
        ],
    )
    table = osmium.index.create_map("flex_mem")
    assert [w.osm_id for w in read_ways(path, locations=table)] == [1]
    assert table.get(2).lat == pytest.approx(-10.402)
    for node in (4, 5, 6, 7, 8, 9):
        with pytest.raises(KeyError):
            table.get(node)


def test_vertices_missing_from_the_file_are_skipped(tmp_path: Path) -> None:
    """An extract cut at its edge may name nodes it does not hold; a way keeps the vertices it has (>= 2)."""
    path = osm_xml(
        tmp_path / "cut.osm",
        [
            (1, [1, 2, 99], {"highway": "residential"}),
            (2, [1, 98, 99], {"highway": "residential"}),
        ],
    )
    assert [(w.osm_id, w.node_ids) for w in read_ways(path)] == [(1, (1, 2))]


def test_tags_are_escaped_and_read_back(tmp_path: Path) -> None:
    odd = Way(7, "residential", 'Rua "A" & <B> \'C\' São João', "RO-1", "asphalt", False, (1, 2), (-10.0, -10.1),
              (-62.0, -62.1))  # fmt: skip
    for name in ("odd.osm", "odd.osm.pbf"):
        write_osm([odd], tmp_path / name)
        (back,) = read_ways(tmp_path / name)
        assert back.name == odd.name and way_tags(back) == way_tags(odd)


def test_a_bbox_keeps_whole_ways_with_a_vertex_inside(tmp_path: Path) -> None:
    path = tmp_path / "grid.osm.pbf"
    write_osm(grid(), path)
    bbox = (-62.50, -10.47, -62.44, -10.40)  # around Jaru, the grid's centre
    w_, s_, e_, n_ = bbox
    want = [w for w in grid() if any(s_ <= la <= n_ and w_ <= lo <= e_ for la, lo in zip(w.lat, w.lon, strict=True))]
    got = list(read_ways(path, Clip(bbox=bbox)))
    assert 4 <= len(want) < len(grid()) // 10
    assert_same_ways(got, want)  # geometry whole, not cut at the box's edge


def test_a_polygon_keeps_ways_with_a_vertex_inside(tmp_path: Path) -> None:
    path = tmp_path / "grid.osm"
    write_osm(grid(), path)
    # A triangle with its corner at Jaru's crossing and its base far to the north-east.
    ring = [[-62.47, -10.43], [-62.0, -10.0], [-62.47, -10.0], [-62.47, -10.43]]
    tri = Polygon(ring)
    want = [w for w in grid() if any(tri.intersects(Point(lo, la)) for la, lo in zip(w.lat, w.lon, strict=True))]
    docs = {
        "bare.geojson": {"type": "Polygon", "coordinates": [ring]},
        "feature.geojson": {
            "type": "Feature",
            "properties": {},
            "geometry": {"type": "Polygon", "coordinates": [ring]},
        },
        "multi.geojson": {"type": "MultiPolygon", "coordinates": [[ring]]},
    }
    for name, doc in docs.items():
        (tmp_path / name).write_bytes(orjson.dumps(doc))
        got = list(read_ways(path, load_polygon(tmp_path / name)))
        assert_same_ways(got, want)
    assert 10 <= len(want) < len(grid()) // 2


def test_progress_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "grid.osm.pbf"
    write_osm(grid(), path)
    seen: list[str] = []
    list(read_ways(path, progress=seen.append, every=500))
    assert seen == [
        "500 highway ways scanned, 499 drivable",
        "1000 highway ways scanned, 999 drivable",
        "1200 highway ways scanned, 1200 drivable",
        "500 of 1200 roads read, 499 kept",
        "1000 of 1200 roads read, 999 kept",
        seen[-1],
    ]
    assert seen[-1].startswith("1200 of 1200 roads read, 1200 kept; node index ") and seen[-1].endswith(" MiB")


# --- bad files: a plain message naming the file --------------------------------------------------------------


def bad(path: Path, clip: Clip | None = None) -> str:
    with pytest.raises(RoadsError) as e:
        list(read_ways(path, clip))
    assert str(path) in str(e.value)
    return str(e.value)


def test_a_missing_file(tmp_path: Path) -> None:
    assert "does not exist" in bad(tmp_path / "nowhere.osm.pbf")


def test_an_empty_file(tmp_path: Path) -> None:
    (tmp_path / "empty.osm.pbf").write_bytes(b"")
    assert "is empty" in bad(tmp_path / "empty.osm.pbf")


@pytest.mark.parametrize(
    ("content", "kind"),
    [
        (b"\x89PNG\r\n\x1a\n" + bytes(100), "a PNG image"),
        (b"plate,lat,lon\nABC1D23,-10.4,-62.4\n", "text (CSV or similar)"),
        (b"%PDF-1.7\n", "a PDF document"),
        (b'<?xml version="1.0"?><gpx version="1.1"></gpx>', "XML or HTML of another kind"),
        (bytes(range(256)) * 4, "binary data of another kind"),
    ],
)
def test_a_file_of_another_kind(tmp_path: Path, content: bytes, kind: str) -> None:
    path = tmp_path / "roads.osm.pbf"
    path.write_bytes(content)
    message = bad(path)
    assert "is not an OpenStreetMap file" in message and kind in message


@pytest.mark.parametrize("name", ["grid.osm", "grid.osm.pbf"])
def test_a_truncated_file(tmp_path: Path, name: str) -> None:
    whole = tmp_path / f"whole-{name}"
    write_osm(grid(), whole)
    data = whole.read_bytes()
    path = tmp_path / name
    path.write_bytes(data[: len(data) * 2 // 3])
    assert "is damaged or truncated" in bad(path)


def test_a_corrupt_pbf(tmp_path: Path) -> None:
    path = tmp_path / "grid.osm.pbf"
    write_osm(grid(), path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = bytes(64)  # zeroes over compressed data
    path.write_bytes(bytes(data))
    assert "is damaged or truncated" in bad(path)


def test_a_file_without_roads(tmp_path: Path) -> None:
    path = osm_xml(tmp_path / "buildings.osm", [(1, [1, 2, 3, 1], {"building": "yes"})])
    assert "holds no roads" in bad(path)
    path = osm_xml(tmp_path / "paths.osm", [(1, [1, 2, 3], {"highway": "footway"})])
    assert "holds no road a vehicle may drive (no way tagged highway=* is one)" in bad(path)


def test_a_bbox_without_roads(tmp_path: Path) -> None:
    path = tmp_path / "grid.osm.pbf"
    write_osm(grid(), path)
    message = bad(path, Clip(bbox=(-60.5, -10.5, -60.4, -10.4)))
    assert "lies within the bbox -60.5,-10.5,-60.4,-10.4" in message and "1200 roads read, none kept" in message


def test_tag_values_are_stored_as_text_a_page_and_postgresql_take() -> None:
    from telemetria.roads.osmread import TEXT_MAX, _text

    assert _text("Linha\x00 625\x07 ") == "Linha 625"  # PostgreSQL text refuses NUL; control bytes show as nothing
    assert _text(" \x00 ") is None and _text("") is None and _text(None) is None
    assert _text("x" * 1000) == "x" * TEXT_MAX
    assert _text("Estrada <b>Velha</b>") == "Estrada <b>Velha</b>"  # kept as text: pages set it as text


@pytest.mark.parametrize("name", ["places.osm", "places.osm.pbf"])
def test_named_places_are_read_as_localities_within_the_clip(tmp_path: Path, name: str) -> None:
    from telemetria.roads.model import Locality
    from telemetria.roads.osmread import read_localities
    from telemetria.sim.roadnet import grid_localities

    g = make_grid(5)
    places = grid_localities(g)
    # Not localities: a state (an area's name), a place with no name.
    others = [
        Locality(2 * 10**9, "state", "Rondônia", -10.4, -62.4),
        Locality(2 * 10**9 + 1, "hamlet", " ", -10.4, -62.5),
    ]
    path = tmp_path / name
    write_osm(grid(), path, [*places, *others])
    got = read_localities(path)
    assert [(p.osm_id, p.kind, p.name) for p in got] == [(p.osm_id, p.kind, p.name) for p in places]
    assert all(abs(a.lat - b.lat) < 1e-6 and abs(a.lon - b.lon) < 1e-6 for a, b in zip(got, places, strict=True))
    jaru = places[0]
    box = (jaru.lon - 0.01, jaru.lat - 0.01, jaru.lon + 0.01, jaru.lat + 0.01)
    assert [p.name for p in read_localities(path, Clip(bbox=box))] == ["Jaru"]


def test_the_nearest_locality_within_five_km_names_a_point() -> None:
    from telemetria.roads import steps
    from telemetria.sim.roadnet import grid_localities

    g = make_grid(5)
    net = steps.build(1, grid(), grid_localities(g))
    lat, lon = g.node(0, 0)
    name, metres = net.locality(lat, lon) or ("", 0.0)
    assert name == "Jaru" and 300 < metres < 500  # the town's node sits 300 m north and east of the crossing
    far = g.node(0, -9)  # some 40 km south: no locality within 5 km
    assert net.locality(*far) is None
    assert steps.build(1, grid()).locality(lat, lon) is None  # none imported: none said


def test_a_no_break_space_still_parts_two_words() -> None:
    from telemetria.roads.osmread import _text

    assert _text("Linha\xa0625") == "Linha 625"
