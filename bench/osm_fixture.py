"""Cut a small road extract for the tests out of a public OSM file (how tests/data/osm/*.osm.pbf were made).

    .venv/bin/python -m bench.osm_fixture SOURCE.osm.pbf OUT.osm.pbf W,S,E,N

Keeps the drivable ways (roads/osmread.is_drivable) with any point inside the box, whole, with their nodes and
every tag, and nothing else: what the import and the matcher read, a fraction of the bytes. The data stays
OpenStreetMap's, under the ODbL (tests/data/osm/README.md says where each file came from).
"""

from __future__ import annotations

import sys
from typing import cast

import osmium

from telemetria.roads.clip import parse_bbox
from telemetria.roads.osmread import is_drivable


def cut(source: str, out: str, bbox: tuple[float, float, float, float]) -> tuple[int, int]:
    """Write the drivable ways of `source` touching `bbox` and their nodes to `out`; (ways, nodes) written."""
    w, s, e, n = bbox
    coords: dict[int, tuple[float, float]] = {}
    for obj in osmium.FileProcessor(source, osmium.osm.NODE):
        node = cast(osmium.osm.Node, obj)
        if node.location.valid():
            coords[node.id] = (node.location.lon, node.location.lat)
    ways = []
    used: set[int] = set()
    for item in osmium.FileProcessor(source, osmium.osm.WAY):
        way = cast(osmium.osm.Way, item)
        tags = {t.k: t.v for t in way.tags}
        refs = [r.ref for r in way.nodes]
        if not is_drivable(tags):
            continue
        if any(r in coords and w <= coords[r][0] <= e and s <= coords[r][1] <= n for r in refs):
            ways.append((way.id, refs, tags))
            used.update(r for r in refs if r in coords)
    writer = osmium.SimpleWriter(out, overwrite=True)
    try:
        for ref in sorted(used):
            lon, lat = coords[ref]
            writer.add_node(osmium.osm.mutable.Node(id=ref, location=osmium.osm.Location(lon, lat), version=1))
        for wid, refs, tags in sorted(ways):
            writer.add_way(osmium.osm.mutable.Way(id=wid, nodes=refs, tags=tags, version=1))
    finally:
        writer.close()
    return len(ways), len(used)


if __name__ == "__main__":
    ways, nodes = cut(sys.argv[1], sys.argv[2], parse_bbox(sys.argv[3]))
    print(f"{ways} ways, {nodes} nodes")
