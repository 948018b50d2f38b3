"""Read the roads a vehicle may drive from an OpenStreetMap file (.osm.pbf, .osm, .osm.gz, .osm.bz2), streaming.

pyosmium (C++ libosmium) parses the file; Python only ever holds one way at a time. Two passes: the first marks the
drivable ways and their nodes in libosmium's id sets (bits), the second keeps the locations of those nodes only in
a C++ index, so memory grows with the roads' nodes (~16 bytes each), not with every node of a regional extract
(buildings, rivers, forest edges) nor with Python objects. The index is `flex_mem`: a sparse table for an
extract's scattered node ids, switching by itself to a dense array when ids are dense; no temporary file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import cast

import osmium
import osmium.filter
import osmium.osm

from telemetria.roads.clip import Clip
from telemetria.roads.errors import RoadsError
from telemetria.roads.model import LOCALITY_KINDS, Locality, Way

# `highway` values a school bus or car may drive; footways, paths, cycleways, steps, tracks for horses,
# construction, proposed roads and platforms are not among them.
DRIVABLE = frozenset(
    {"motorway", "trunk", "primary", "secondary", "tertiary", "unclassified", "residential", "living_street",
     "service", "track", "road", "motorway_link", "trunk_link", "primary_link", "secondary_link", "tertiary_link"}
)  # fmt: skip
_DENIED = frozenset({"no", "private"})
_ONEWAY = frozenset({"yes", "1", "true"})

Progress = Callable[[str], None]  # told how far the reading is, in words
WAY = osmium.osm.WAY


def is_drivable(tags: dict[str, str]) -> bool:
    """Whether a way with these tags is a road a vehicle may drive (kind of highway, not an area, not closed)."""
    if tags.get("highway") not in DRIVABLE or tags.get("area") == "yes":
        return False
    # The most specific access tag decides: motor_vehicle, then vehicle, then access.
    access = tags.get("motor_vehicle") or tags.get("vehicle") or tags.get("access")
    return access not in _DENIED


def oneway(tags: dict[str, str]) -> int:
    """1 when the way is one-way along its nodes, -1 when against them, 0 when two-way."""
    value = tags.get("oneway", "").strip().lower()
    if value in _ONEWAY:
        return 1
    if value == "-1":
        return -1
    if value == "no":
        return 0
    # OSM's implied one-ways: roundabouts and motorways, unless tagged otherwise.
    return 1 if tags.get("junction") in ("roundabout", "circular") or tags.get("highway") == "motorway" else 0


def file_format(path: Path) -> str:
    """libosmium's format name for the file, from its first bytes (not its name); RoadsError when it is no OSM."""
    try:
        with path.open("rb") as f:
            head = f.read(1024)
    except FileNotFoundError:
        raise RoadsError(f"{path} does not exist") from None
    except IsADirectoryError:
        raise RoadsError(f"{path} is a directory, not an OpenStreetMap file") from None
    except OSError as e:
        raise RoadsError(f"cannot read {path}: {e.strerror or e}") from None
    if not head:
        raise RoadsError(f"{path} is empty (0 bytes); download the extract again")
    if head[:2] == b"\x1f\x8b":
        return "osm.gz"
    if head[:3] == b"BZh":
        return "osm.bz2"
    if b"OSMHeader" in head[:32]:
        return "pbf"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text.startswith(b"<") and b"<osm" in head:
        return "osm"
    raise RoadsError(f"{path} is not an OpenStreetMap file (.osm.pbf or .osm XML): it looks like {_kind(head)}")


def _kind(head: bytes) -> str:
    for magic, kind in ((b"\x89PNG", "a PNG image"), (b"%PDF", "a PDF document"), (b"PK\x03\x04", "a ZIP archive"),
                        (b"\xff\xd8\xff", "a JPEG image"), (b"GIF8", "a GIF image"), (b"{", "JSON"),
                        (b"<", "XML or HTML of another kind")):  # fmt: skip
        if head.lstrip().startswith(magic):
            return kind
    try:
        head.decode("utf-8")
    except UnicodeDecodeError:
        return "binary data of another kind"
    return "text (CSV or similar)"


def read_ways(
    path: Path,
    clip: Clip | None = None,
    progress: Progress | None = None,
    every: int = 50_000,
    locations: osmium.index.LocationTable | None = None,
) -> Iterator[Way]:
    """The file's drivable ways within `clip` (all when None), in file order; RoadsError on a bad or roadless file.

    Two passes: the first finds the drivable ways and the nodes they use (ids in libosmium's bit sets), the second
    keeps the locations of those nodes only, so the index holds the roads' nodes, not every building's and river's.
    A way whose vertices are partly missing from the file (cut at an extract's edge) keeps those present; one
    left with fewer than two is skipped. `progress(message)` is called every `every` ways, and at each pass's end.
    `locations`: the node index to fill (osmium.index.create_map), a new flex_mem one when None.
    """
    fmt = file_format(path)
    clip = clip or Clip()
    say = progress or (lambda message: None)
    try:
        wanted, drivable = _drivable_ways(path, fmt, say, every)
        if drivable == 0:
            raise RoadsError(f"{path} holds no road a vehicle may drive (no way tagged highway=* is one)")
        # Every handler is held by name while reading: the C++ iterator only points at them (a temporary segfaults).
        locations = locations if locations is not None else osmium.index.create_map("flex_mem")
        only_wanted = wanted.id_filter()
        only_ways = osmium.filter.EntityFilter(WAY)
        index = osmium.NodeLocationsForWays(locations)
        index.ignore_errors()  # a node missing from the file: its vertex is skipped (_way)
        read = kept = 0
        with osmium.io.Reader(osmium.io.File(str(path), fmt), osmium.osm.NODE | osmium.osm.WAY) as reader:
            # A filter stops an object's way down the chain: untracked nodes never reach the location index.
            for obj in osmium.OsmFileIterator(reader, only_wanted, index, only_ways):
                read += 1
                if read % every == 0:
                    say(f"{read} of {drivable} roads read, {kept} kept")
                way = _way(cast(osmium.osm.Way, obj))
                if way is not None and clip.keeps(way.lat, way.lon):
                    kept += 1
                    yield way
    except RuntimeError as e:  # libosmium's parse errors all arrive as RuntimeError
        raise RoadsError(f"{path} is damaged or truncated and cannot be read to its end ({e})") from None
    say(f"{read} of {drivable} roads read, {kept} kept; node index {locations.used_memory() / 2**20:.1f} MiB")
    if kept == 0:
        raise RoadsError(f"no road of {path} lies within {clip.describe()} ({read} roads read, none kept)")


def read_localities(path: Path, clip: Clip | None = None) -> list[Locality]:
    """The file's named places (nodes tagged place=* of LOCALITY_KINDS, with a name) within `clip`, in file order:
    what reports say a road is near. Areas tagged place (a town drawn as a polygon) are not read: their node, which
    OSM's guidelines ask for, is. RoadsError on a damaged file."""
    clip = clip or Clip()
    found: list[Locality] = []
    try:
        for obj in osmium.FileProcessor(osmium.io.File(str(path), file_format(path)), osmium.osm.NODE).with_filter(
            osmium.filter.KeyFilter("place")
        ):
            kind, name = obj.tags.get("place"), _text(obj.tags.get("name"))
            loc = cast(osmium.osm.Node, obj).location
            if kind in LOCALITY_KINDS and name and loc.valid() and clip.keeps((loc.lat,), (loc.lon,)):
                found.append(Locality(obj.id, kind, name, loc.lat, loc.lon))
    except RuntimeError as e:
        raise RoadsError(f"{path} is damaged or truncated and cannot be read to its end ({e})") from None
    return found


def _drivable_ways(path: Path, fmt: str, say: Progress, every: int) -> tuple[osmium.IdTracker, int]:
    """The first pass: the ids of the drivable ways and of their nodes, and how many ways; RoadsError without any
    highway way."""
    wanted = osmium.IdTracker()
    seen = drivable = 0
    for obj in osmium.FileProcessor(osmium.io.File(str(path), fmt), WAY).with_filter(
        osmium.filter.KeyFilter("highway")
    ):
        seen += 1
        if seen % every == 0:
            say(f"{seen} highway ways scanned, {drivable} drivable")
        if is_drivable({t.k: t.v for t in obj.tags}):
            drivable += 1
            wanted.add_way(obj.id)
            wanted.add_references(obj)
    say(f"{seen} highway ways scanned, {drivable} drivable")
    if seen == 0:
        raise RoadsError(f"{path} holds no roads: no way in it is tagged highway=*")
    return wanted, drivable


def _way(obj: osmium.osm.Way) -> Way | None:
    """The Way of a drivable OSM way with at least two located vertices, else None."""
    tags = {t.k: t.v for t in obj.tags}
    if not is_drivable(tags):
        return None
    ids: list[int] = []
    lat: list[float] = []
    lon: list[float] = []
    for node in obj.nodes:
        loc = node.location
        if loc.valid():
            ids.append(node.ref)
            lat.append(loc.lat)
            lon.append(loc.lon)
    if len(ids) < 2:
        return None
    direction = oneway(tags)
    if direction < 0:
        ids.reverse()
        lat.reverse()
        lon.reverse()
    return Way(
        osm_id=obj.id,
        highway=tags["highway"],
        name=_text(tags.get("name")),
        ref=_text(tags.get("ref")),
        surface=_text(tags.get("surface")),
        oneway=direction != 0,
        node_ids=tuple(ids),
        lat=tuple(lat),
        lon=tuple(lon),
    )


TEXT_MAX = 255  # OSM caps a tag value at 255 characters; a longer one is no OSM tag


def _text(value: str | None) -> str | None:
    """A tag value as stored and shown: control characters (NUL, which PostgreSQL text refuses, among them) dropped,
    at most TEXT_MAX characters, None when nothing is left."""
    if not value:
        return None
    spaced = "".join(" " if c.isspace() else c for c in value)  # a no-break space still parts two words
    clean = "".join(c for c in spaced if c.isprintable()).strip()[:TEXT_MAX]
    return clean or None
