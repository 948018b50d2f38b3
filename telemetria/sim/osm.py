"""The simulated roads written as an OpenStreetMap file (.osm XML, or .osm.pbf by the suffix), for the roads import."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from xml.sax.saxutils import quoteattr

import osmium
import osmium.osm.mutable

from telemetria.roads.model import Locality, Way


def write_osm(ways: Sequence[Way], path: Path, localities: Sequence[Locality] = ()) -> None:
    """Write the ways and their nodes (each node once, by id, then the ways) to `path`, replacing it; localities
    are written as place nodes (their osm_id must not be a way node's).

    A name ending in .pbf gives the binary PBF format (written by libosmium); any other gives OSM XML 0.6.
    """
    nodes = _nodes(ways)
    clash = [p.osm_id for p in localities if p.osm_id in nodes]
    if clash:
        raise ValueError(f"localities {clash} have the id of a road node")
    if path.name.endswith(".pbf"):
        _write_pbf(ways, nodes, path, localities)
    else:
        _write_xml(ways, nodes, path, localities)


def way_tags(way: Way) -> dict[str, str]:
    """The OSM tags of a way, as the import reads them back."""
    tags = {"highway": way.highway}
    for key, value in (("name", way.name), ("ref", way.ref), ("surface", way.surface)):
        if value is not None:
            tags[key] = value
    if way.oneway:
        tags["oneway"] = "yes"
    return tags


def _nodes(ways: Iterable[Way]) -> dict[int, tuple[float, float]]:
    """Node id → (lat, lon), sorted by id as OSM files are; a node shared by ways must lie at one place."""
    found: dict[int, tuple[float, float]] = {}
    for way in ways:
        for node, lat, lon in zip(way.node_ids, way.lat, way.lon, strict=True):
            if found.setdefault(node, (lat, lon)) != (lat, lon):
                raise ValueError(f"node {node} lies at two places (way {way.osm_id})")
    return dict(sorted(found.items()))


def _write_xml(
    ways: Sequence[Way], nodes: dict[int, tuple[float, float]], path: Path, localities: Sequence[Locality]
) -> None:
    with path.open("w", encoding="utf-8") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<osm version="0.6" generator="telemetria simulate-osm">\n')
        for node, (lat, lon) in nodes.items():
            f.write(f'  <node id="{node}" version="1" lat="{lat:.7f}" lon="{lon:.7f}"/>\n')
        for p in localities:
            f.write(f'  <node id="{p.osm_id}" version="1" lat="{p.lat:.7f}" lon="{p.lon:.7f}">\n')
            f.write(f'    <tag k="place" v={quoteattr(p.kind)}/>\n    <tag k="name" v={quoteattr(p.name)}/>\n')
            f.write("  </node>\n")
        for way in ways:
            f.write(f'  <way id="{way.osm_id}" version="1">\n')
            f.writelines(f'    <nd ref="{node}"/>\n' for node in way.node_ids)
            f.writelines(f"    <tag k={quoteattr(k)} v={quoteattr(v)}/>\n" for k, v in way_tags(way).items())
            f.write("  </way>\n")
        f.write("</osm>\n")


def _write_pbf(
    ways: Sequence[Way], nodes: dict[int, tuple[float, float]], path: Path, localities: Sequence[Locality]
) -> None:
    with osmium.SimpleWriter(str(path), overwrite=True) as writer:
        for node, (lat, lon) in nodes.items():
            writer.add_node(osmium.osm.mutable.Node(id=node, version=1, location=(lon, lat)))
        for p in localities:
            tags = {"place": p.kind, "name": p.name}
            writer.add_node(osmium.osm.mutable.Node(id=p.osm_id, version=1, location=(p.lon, p.lat), tags=tags))
        for way in ways:
            writer.add_way(osmium.osm.mutable.Way(id=way.osm_id, version=1, nodes=way.node_ids, tags=way_tags(way)))
