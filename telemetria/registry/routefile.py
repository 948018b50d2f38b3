"""Route lines, stops and speed-zone polygons from GeoJSON, GPX and KML: parsed, checked and measured (pure).

Errors name a field: 'file' (cannot be read), 'geometry' (the line or polygon as a whole), 'coordinates[i]' or
'coordinates[i].lat' (point i of the line, counted from 0 across the whole file), 'stops[n].kind' and so on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import time
from itertools import accumulate
from typing import Any
from xml.etree.ElementTree import Element, ParseError

import numpy as np
import orjson
from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring
from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.polygon import orient
from shapely.validation import explain_validity

from telemetria.geo.geodesic import GEOD, distance_m, line_length_m

LAT_RANGE = (-34.0, 6.0)  # Brazil's bounding box, islands included (Trindade is at lon -28.8)
LON_RANGE = (-74.5, -28.0)
MAX_POINTS = 100_000
MAX_JUMP_M = 20_000.0
MAX_LENGTH_M = 1_000_000.0
JOIN_M = 30.0  # lines of one file join when each starts within this distance of the previous one's end
MAX_ZONE_KM2 = 2000.0

Coord = tuple[float, float]  # (lon, lat) degrees, WGS84, as in GeoJSON
Parsed = tuple[list[list[Coord]], list["StopIn"], str | None]  # line parts, stops, name


@dataclass(frozen=True)
class StopIn:
    name: str
    lat: float
    lon: float
    kind: str  # 'boarding' | 'school' | 'garage'
    scheduled_time: time | None = None


@dataclass(frozen=True)
class RouteGeometry:
    coords: list[Coord]
    length_m: float
    stops: list[StopIn]
    name: str | None = None  # the name found in the file, if any


class RouteFileError(ValueError):
    """A file or geometry that cannot be a route (or zone); `field` says where, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def _show(v: object) -> str:
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def _num(v: object, field: str, text: bool = False) -> float:
    # GeoJSON coordinates must be JSON numbers; XML attributes and KML tuples are text by nature.
    if v is None or isinstance(v, bool) or not isinstance(v, int | float | str) or (isinstance(v, str) and not text):
        raise RouteFileError(field, "missing" if v is None else f"{_show(v)} is not a number")
    try:
        f = float(v)
    except ValueError:
        raise RouteFileError(field, f"{_show(v)} is not a number") from None
    except OverflowError:
        f = math.inf
    if not math.isfinite(f):
        raise RouteFileError(field, f"{_show(v)} is not a finite number")
    return f


def _in_box(lon: float, lat: float) -> bool:
    return LAT_RANGE[0] <= lat <= LAT_RANGE[1] and LON_RANGE[0] <= lon <= LON_RANGE[1]


def _place(lon: float, lat: float, field: str, label: str) -> Coord:
    for axis, v, lim in (("lon", lon, 180.0), ("lat", lat, 90.0)):
        if not -lim <= v <= lim:
            raise RouteFileError(f"{field}.{axis}", f"{label}: {axis} {v:g} is outside -{lim:g}..{lim:g}")
    if not _in_box(lon, lat):
        where = f"{label}: (lon {lon:g}, lat {lat:g}) is outside Brazil (lat -34..6, lon -74.5..-28)"
        if _in_box(lat, lon):
            raise RouteFileError(field, f"{where}; latitude and longitude look swapped (GeoJSON and KML write lon,lat)")
        raise RouteFileError(f"{field}.{'lat' if not LAT_RANGE[0] <= lat <= LAT_RANGE[1] else 'lon'}", where)
    return lon, lat


def check_point(lon: float, lat: float, field: str = "point", label: str = "point") -> Coord:
    """(lon, lat) degrees checked finite, in range and inside Brazil's bounding box; `field` names it in errors."""
    return _place(_num(lon, f"{field}.lon"), _num(lat, f"{field}.lat"), field, label)


def _position(p: object, field: str, label: str) -> Coord:
    if not isinstance(p, list | tuple) or not 2 <= len(p) <= 3:
        raise RouteFileError(field, f"{label}: expected [lon, lat] or [lon, lat, alt], got {_show(p)}")
    if len(p) == 3:
        _num(p[2], f"{field}.alt")  # accepted and dropped, but it must still be a number
    return _place(_num(p[0], f"{field}.lon"), _num(p[1], f"{field}.lat"), field, label)


def _too_many(n: int) -> None:
    if n > MAX_POINTS:
        raise RouteFileError("geometry", f"{n} points is more than the {MAX_POINTS} a route may have")


def _points(raw: object, base: str) -> list[Coord]:
    if not isinstance(raw, list):
        raise RouteFileError(base, f"expected an array of [lon, lat] positions, got {_show(raw)}")
    _too_many(len(raw))
    return [_position(p, f"{base}[{i}]", f"point {i}") for i, p in enumerate(raw)]


def _join(parts: list[list[Coord]]) -> list[Coord]:
    parts = [p for p in parts if p]
    if not parts:
        raise RouteFileError("geometry", "no line found: a route needs a LineString (GeoJSON, KML) or a track (GPX)")
    out = list(parts[0])
    for k, part in enumerate(parts[1:], start=1):
        gap = float(distance_m(*out[-1], *part[0]))
        if gap > JOIN_M:
            msg = f"line {k + 1} begins {gap:.0f} m from the end of line {k} (at most {JOIN_M:g} m)"
            raise RouteFileError("geometry", f"the file holds {len(parts)} lines that do not join end to start: {msg}")
        out.extend(part)
    return out


def _finish(pts: list[Coord]) -> tuple[list[Coord], float]:
    _too_many(len(pts))
    keep = [i for i in range(len(pts)) if i == 0 or pts[i] != pts[i - 1]]  # consecutive duplicates go
    line = [pts[i] for i in keep]
    if len(line) < 2:
        raise RouteFileError("geometry", f"a route needs at least 2 distinct points, got {len(line)}")
    xy = np.asarray(line, dtype=float)
    steps = np.asarray(distance_m(xy[:-1, 0], xy[:-1, 1], xy[1:, 0], xy[1:, 1]))
    jumps = np.flatnonzero(steps > MAX_JUMP_M)
    if len(jumps):
        j = int(jumps[0])
        b = keep[j + 1]  # the points between keep[j] and b repeat keep[j], so the jump is from b - 1
        raise RouteFileError(
            f"coordinates[{b}]",
            f"a route is traced by GPS coordinates; a jump of {steps[j] / 1000:.1f} km between points {b - 1} and "
            f"{b} is not a road (at most {MAX_JUMP_M / 1000:g} km between consecutive points)",
        )
    length = line_length_m(xy[:, 0], xy[:, 1])
    if length > MAX_LENGTH_M:
        raise RouteFileError("geometry", f"the line is {length / 1000:.0f} km long; a route is at most 1000 km")
    return line, length


def check_line(coords: object) -> list[Coord]:
    """Checked (lon, lat) degrees of a route line given as GeoJSON LineString coordinates, duplicates removed."""
    return _finish(_points(coords, "coordinates"))[0]


_KINDS = {"boarding": "boarding", "embarque": "boarding", "parada": "boarding", "ponto": "boarding"}
_KINDS |= {"school": "school", "escola": "school", "garage": "garage", "garagem": "garage"}
_HHMM = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?")


def _stop(n: int, where: Coord, props: Mapping[str, Any]) -> StopIn:
    field = f"stops[{n}]"
    name = next((str(props[k]).strip() for k in ("name", "desc", "description") if str(props.get(k) or "").strip()), "")
    if (explicit := props.get("kind")) is not None:
        kind = _KINDS.get(str(explicit).strip().lower())
        if kind is None:
            raise RouteFileError(f"{field}.kind", f"stop {n}: {_show(explicit)} is not boarding, school or garage")
    else:  # 'type' and GPX 'sym' are free text: map only the obvious cases
        hint = f"{props.get('type') or ''} {props.get('sym') or ''}".lower()
        kind = "school" if "school" in hint or "escola" in hint else "garage" if "garag" in hint else "boarding"
    scheduled = None
    for key in ("scheduled_time", "time"):
        s = str(props.get(key) or "").strip()
        # A GPX <time> is a date-time when the waypoint was recorded, not a schedule.
        if not s or (key == "time" and re.match(r"\d{4}-\d\d-\d\d", s)):
            continue
        if not (m := _HHMM.fullmatch(s)):
            raise RouteFileError(f"{field}.scheduled_time", f"stop {n}: {_show(s)} is not a time of day (HH:MM)")
        scheduled = time(int(m[1]), int(m[2]), int(m[3] or 0))
        break
    return StopIn(name or f"Ponto {n + 1}", where[1], where[0], kind, scheduled)


def _geojson_parts(obj: object) -> tuple[list[list[Coord]], str | None]:
    if not isinstance(obj, dict):
        raise RouteFileError("geometry", f"expected a GeoJSON object, got {_show(obj)}")
    kind = obj.get("type")
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
        parts, name = _geojson_parts(lines[0])
        return parts, name or (obj["name"] if isinstance(obj.get("name"), str) else None)
    if kind == "Feature":
        props = obj.get("properties")
        name = props.get("name") if isinstance(props, dict) else None
        return _geojson_parts(obj.get("geometry"))[0], name if isinstance(name, str) else None
    coords = obj.get("coordinates")
    if kind == "LineString":
        return [_points(coords, "coordinates")], None
    if kind == "MultiLineString":
        if not isinstance(coords, list):
            raise RouteFileError("coordinates", f"expected an array of lines, got {_show(coords)}")
        return [_points(part, f"coordinates[{k}]") for k, part in enumerate(coords)], None
    if kind in ("Polygon", "MultiPolygon"):
        raise RouteFileError("geometry", f"a route is a line (LineString), got a {kind}; areas are not routes")
    raise RouteFileError("geometry", f"a route is a GeoJSON LineString, got type {_show(kind)}")


def line_from_geojson(obj: dict[str, Any]) -> list[Coord]:
    """Checked (lon, lat) degrees of the one line in a GeoJSON geometry, Feature or FeatureCollection."""
    return _finish(_join(_geojson_parts(obj)[0]))[0]


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
            stops.append(_stop(n, _position(geom.get("coordinates"), f"stops[{n}]", f"stop {n}"), props))
    return parts, stops, name


def _xml(body: bytes, root_tag: str) -> Element:
    try:
        root = fromstring(body.lstrip(b" \t\r\n"))
    except DefusedXmlException as e:  # entity declarations (billion laughs), external references
        why = f"{type(e).__name__}: XML entity declarations and external references are refused"
        raise RouteFileError("file", why) from None
    except ParseError as e:
        raise RouteFileError("file", f"not well-formed XML: {e}") from None
    for el in root.iter():  # GPX 1.0/1.1 and KML 2.2 with or without namespace read alike
        if isinstance(el.tag, str):
            el.tag = el.tag.rpartition("}")[2]
    if root.tag != root_tag:
        raise RouteFileError("file", f"expected a <{root_tag}> document, found <{root.tag}>")
    return root


def _text(el: Element | None, tag: str) -> str | None:
    child = el.find(tag) if el is not None else None
    return child.text.strip() if child is not None and child.text and child.text.strip() else None


def _xml_point(lon: str | None, lat: str | None, field: str, label: str) -> Coord:
    return _place(_num(lon, f"{field}.lon", True), _num(lat, f"{field}.lat", True), field, label)


def _parse_gpx(body: bytes) -> Parsed:
    root = _xml(body, "gpx")
    lines = [[pt for seg in trk.iter("trkseg") for pt in seg.iter("trkpt")] for trk in root.iter("trk")]
    lines += [list(rte.iter("rtept")) for rte in root.iter("rte")]  # segments of one track join in order
    _too_many(sum(map(len, lines)))
    starts = [0, *accumulate(map(len, lines))]
    parts = [
        [_xml_point(p.get("lon"), p.get("lat"), f"coordinates[{n + i}]", f"point {n + i}") for i, p in enumerate(line)]
        for n, line in zip(starts, lines, strict=False)
    ]
    stops = []
    for n, wpt in enumerate(root.iter("wpt")):
        where = _xml_point(wpt.get("lon"), wpt.get("lat"), f"stops[{n}]", f"stop {n}")
        # Direct children (name, desc, sym, type, time) win over same-named tags inside <extensions>.
        props = {el.tag: el.text.strip() for ext in wpt.findall("extensions") for el in ext.iter() if el.text}
        stops.append(_stop(n, where, props | {el.tag: el.text.strip() for el in wpt if el.text}))
    name = next((_text(e, "name") for e in (*root.iter("trk"), *root.iter("rte")) if _text(e, "name")), None)
    return parts, stops, name or _text(root.find("metadata"), "name") or _text(root, "name")


def _kml_tuples(text: str | None, base: str, start: int) -> list[list[str]]:
    tuples = [t.split(",") for t in (text or "").split()]
    for i, t in enumerate(tuples):
        if not 2 <= len(t) <= 3:
            raise RouteFileError(
                f"{base}[{start + i}]", f"KML coordinates are 'lon,lat[,alt]', got {_show(','.join(t))}"
            )
    return tuples


def _parse_kml(body: bytes) -> Parsed:
    root = _xml(body, "kml")
    parts: list[list[Coord]] = []
    stops: list[StopIn] = []
    name = None
    for pm in root.iter("Placemark"):
        for ls in pm.iter("LineString"):
            n = sum(map(len, parts))
            tuples = _kml_tuples(_text(ls, "coordinates"), "coordinates", n)
            _too_many(n + len(tuples))
            parts.append(
                [_xml_point(t[0], t[1], f"coordinates[{n + i}]", f"point {n + i}") for i, t in enumerate(tuples)]
            )
            name = name or _text(pm, "name")
        for pt in pm.iter("Point"):
            n = len(stops)
            t = _kml_tuples(_text(pt, "coordinates"), "stops", n)
            props = {"name": _text(pm, "name"), "description": _text(pm, "description")}
            props |= {d.get("name", ""): _text(d, "value") for d in pm.iter("Data")}
            props |= {d.get("name", ""): (d.text or "").strip() for d in pm.iter("SimpleData")}
            lon, lat = (t[0][0], t[0][1]) if t else (None, None)
            where = _xml_point(lon, lat, f"stops[{n}]", f"stop {n}")
            stops.append(_stop(n, where, props))
    return parts, stops, name or _text(next(root.iter("Document"), None), "name")


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
    parsers = {"geojson": _parse_geojson, "gpx": _parse_gpx, "kml": _parse_kml}
    if fmt not in parsers:
        raise RouteFileError("file", f"unknown format {_show(fmt)}; expected geojson, gpx or kml")
    if not body.strip():
        raise RouteFileError("file", "the file is empty")
    parts, stops, name = parsers[fmt](body)
    coords, length = _finish(_join(parts))
    return RouteGeometry(coords, length, stops, name)


def check_polygon(obj: dict[str, Any]) -> Polygon | MultiPolygon:
    """A valid speed-zone (Multi)Polygon in (lon, lat) degrees inside Brazil and at most MAX_ZONE_KM2 km²."""
    geom = obj.get("geometry") if isinstance(obj, dict) and obj.get("type") == "Feature" else obj
    kind = geom.get("type") if isinstance(geom, dict) else None
    coords = geom.get("coordinates") if isinstance(geom, dict) else None
    if kind not in ("Polygon", "MultiPolygon") or not isinstance(coords, list) or not coords:
        raise RouteFileError("geometry", f"a zone is a GeoJSON Polygon or MultiPolygon, got {_show(kind or geom)}")
    polys = []
    for k, rings in enumerate([coords] if kind == "Polygon" else coords):
        base = "coordinates" if kind == "Polygon" else f"coordinates[{k}]"
        if not isinstance(rings, list) or not rings:
            raise RouteFileError(base, "a polygon needs an exterior ring")
        checked = [_points(ring, f"{base}[{r}]") for r, ring in enumerate(rings)]
        for r, ring in enumerate(checked):
            if len(ring) < 4 or ring[0] != ring[-1]:
                raise RouteFileError(f"{base}[{r}]", "a ring needs 4 or more positions, the last equal to the first")
        polys.append(Polygon(checked[0], checked[1:]))
    shape = polys[0] if kind == "Polygon" else MultiPolygon(polys)
    if not shape.is_valid:
        raise RouteFileError("geometry", f"invalid polygon: {explain_validity(shape)}")
    # Counter-clockwise shells and clockwise holes make pyproj's signed areas positive, holes subtracted.
    km2 = sum(GEOD.geometry_area_perimeter(orient(p, 1.0))[0] for p in polys) / 1e6
    if km2 > MAX_ZONE_KM2:
        raise RouteFileError("geometry", f"the zone covers {km2:.0f} km², more than the {MAX_ZONE_KM2:g} km² allowed")
    return shape
