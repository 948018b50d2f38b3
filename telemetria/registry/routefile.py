"""Route lines and stops from GeoJSON, GPX and KML files: format detection, parsing, checking (pure).

The checks live in `geocheck` (shared with speed-zone polygons); GPX and KML reading in `routexml`.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from telemetria.registry.geocheck import (
    Coord,
    Parsed,
    RouteFileError,
    RouteGeometry,
    StopIn,
    check_line,
    check_point,
    check_polygon,
    finish,
    join_parts,
    points,
    position,
    show,
    stop_from,
)
from telemetria.registry.routexml import parse_gpx, parse_kml

__all__ = [
    "RouteFileError", "RouteGeometry", "StopIn", "check_line", "check_point", "check_polygon", "detect_format",
    "line_from_geojson", "parse_route_file",
]  # fmt: skip


def _geojson_parts(obj: object, depth: int = 0) -> tuple[list[list[Coord]], str | None]:
    if not isinstance(obj, dict):
        raise RouteFileError("geometry", f"expected a GeoJSON object, got {show(obj)}")
    kind = obj.get("type")
    if depth > 2 or (depth and kind == "FeatureCollection"):  # else Features nested 1000 deep exhaust the stack
        raise RouteFileError("geometry", "nested too deeply: a FeatureCollection holds Features, a Feature a geometry")
    if kind == "FeatureCollection":
        feats = obj.get("features")
        if not isinstance(feats, list):
            raise RouteFileError("geometry", "a FeatureCollection needs a 'features' array")
        geoms = [f.get("geometry") if isinstance(f, dict) else None for f in feats]
        types = [g.get("type") if isinstance(g, dict) else None for g in geoms]
        lines = [f for f, t in zip(feats, types, strict=True) if t in ("LineString", "MultiLineString")]
        if len(lines) != 1:
            found = ", ".join(sorted({str(t) for t in types})) or "nothing"
            raise RouteFileError(
                "geometry", f"the FeatureCollection holds {len(lines)} line features (found: {found}); expected one"
            )
        parts, name = _geojson_parts(lines[0], depth + 1)
        return parts, name or (obj["name"] if isinstance(obj.get("name"), str) else None)
    if kind == "Feature":
        props = obj.get("properties")
        name = props.get("name") if isinstance(props, dict) else None
        return _geojson_parts(obj.get("geometry"), depth + 1)[0], name if isinstance(name, str) else None
    coords = obj.get("coordinates")
    if kind == "LineString":
        return [points(coords, "coordinates")], None
    if kind == "MultiLineString":
        if not isinstance(coords, list):
            raise RouteFileError("coordinates", f"expected an array of lines, got {show(coords)}")
        return [points(part, f"coordinates[{k}]") for k, part in enumerate(coords)], None
    if kind in ("Polygon", "MultiPolygon"):
        raise RouteFileError("geometry", f"a route is a line (LineString), got a {kind}; areas are not routes")
    raise RouteFileError("geometry", f"a route is a GeoJSON LineString, got type {show(kind)}")


def line_from_geojson(obj: dict[str, Any]) -> list[Coord]:
    """Checked (lon, lat) degrees of the one line in a GeoJSON geometry, Feature or FeatureCollection."""
    return finish(join_parts(_geojson_parts(obj)[0]))[0]


def _parse_geojson(body: bytes) -> Parsed:
    try:
        obj = orjson.loads(body.removeprefix(b"\xef\xbb\xbf"))
    except orjson.JSONDecodeError as e:
        raise RouteFileError("file", f"not valid JSON: {e}") from None
    parts, name = _geojson_parts(obj)
    stops: list[StopIn] = []
    for f in obj.get("features", []) if obj.get("type") == "FeatureCollection" else []:
        geom = f.get("geometry") if isinstance(f, dict) else None
        if isinstance(geom, dict) and geom.get("type") == "Point":
            n = len(stops)
            props = f.get("properties") if isinstance(f.get("properties"), dict) else {}
            stops.append(stop_from(n, position(geom.get("coordinates"), f"stops[{n}]", f"stop {n}"), props))
    return parts, stops, name


_EXT = {".geojson": "geojson", ".json": "geojson", ".gpx": "gpx", ".kml": "kml"}
_TYPES = {"application/geo+json": "geojson", "application/vnd.geo+json": "geojson", "application/json": "geojson"}
_TYPES |= {"application/gpx+xml": "gpx", "application/vnd.google-earth.kml+xml": "kml"}


def detect_format(filename: str | None, content_type: str | None, body: bytes) -> str:
    """'geojson', 'gpx' or 'kml' from the file name, else the content type, else the first 4 KiB of the body."""
    name = (filename or "").strip().lower()
    ctype = (content_type or "").split(";")[0].strip().lower()
    if name.endswith(".kmz") or ctype == "application/vnd.google-earth.kmz" or body.startswith(b"PK\x03\x04"):
        raise RouteFileError("file", "KMZ (zipped KML) is not accepted: unzip it and upload the .kml inside")
    if fmt := next((f for ext, f in _EXT.items() if name.endswith(ext)), None) or _TYPES.get(ctype):
        return fmt
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n")
    if not head:
        raise RouteFileError("file", "the file is empty")
    if head[:1] in (b"{", b"["):
        return "geojson"
    if head[:1] == b"<" and (m := re.search(rb"<(?:[\w.-]+:)?(gpx|kml)\b", head)):
        return m[1].decode()
    raise RouteFileError("file", "unrecognised format: expected GeoJSON, GPX or KML")


def parse_route_file(body: bytes, fmt: str) -> RouteGeometry:
    """The checked route line ((lon, lat) degrees), its geodesic length in metres, stops and name from a file."""
    parsers = {"geojson": _parse_geojson, "gpx": parse_gpx, "kml": parse_kml}
    if fmt not in parsers:
        raise RouteFileError("file", f"unknown format {show(fmt)}; expected geojson, gpx or kml")
    if not body.strip():
        raise RouteFileError("file", "the file is empty")
    parts, stops, name = parsers[fmt](body)
    coords, length = finish(join_parts(parts))
    return RouteGeometry(coords, length, stops, name)
