"""GPX (1.0, 1.1) and KML (2.2) route files read safely (defusedxml) into line parts, stops and a name (pure)."""

from __future__ import annotations

from itertools import accumulate
from xml.etree.ElementTree import Element, ParseError

from defusedxml import DefusedXmlException
from defusedxml.ElementTree import fromstring

from telemetria.registry.geocheck import Coord, Parsed, RouteFileError, StopIn, num, place, show, stop_from, too_many


def _xml(body: bytes, root_tag: str) -> Element:
    try:
        root: Element = fromstring(body.lstrip(b" \t\r\n"))
    except DefusedXmlException as e:  # entity declarations (billion laughs), external references
        why = f"{type(e).__name__}: XML entity declarations and external references are refused"
        raise RouteFileError("file", why) from None
    except ParseError as e:
        raise RouteFileError("file", f"not well-formed XML: {e}") from None
    except (LookupError, ValueError) as e:  # expat refuses an unknown or multi-byte encoding declaration
        raise RouteFileError("file", f"unreadable XML encoding: {e}; save the file as UTF-8") from None
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
    return place(num(lon, f"{field}.lon", True), num(lat, f"{field}.lat", True), field, label)


def parse_gpx(body: bytes) -> Parsed:
    root = _xml(body, "gpx")
    lines = [[pt for seg in trk.iter("trkseg") for pt in seg.iter("trkpt")] for trk in root.iter("trk")]
    lines += [list(rte.iter("rtept")) for rte in root.iter("rte")]  # segments of one track join in order
    too_many(sum(map(len, lines)))
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
        stops.append(stop_from(n, where, props | {el.tag: el.text.strip() for el in wpt if el.text}))
    name = next((_text(e, "name") for e in (*root.iter("trk"), *root.iter("rte")) if _text(e, "name")), None)
    return parts, stops, name or _text(root.find("metadata"), "name") or _text(root, "name")


def _kml_tuples(text: str | None, base: str, start: int) -> list[list[str]]:
    tuples = [t.split(",") for t in (text or "").split()]
    for i, t in enumerate(tuples):
        if not 2 <= len(t) <= 3:
            raise RouteFileError(
                f"{base}[{start + i}]", f"KML coordinates are 'lon,lat[,alt]', got {show(','.join(t))}"
            )
    return tuples


def parse_kml(body: bytes) -> Parsed:
    root = _xml(body, "kml")
    parts: list[list[Coord]] = []
    stops: list[StopIn] = []
    name = None
    for pm in root.iter("Placemark"):
        for ls in pm.iter("LineString"):
            n = sum(map(len, parts))
            tuples = _kml_tuples(_text(ls, "coordinates"), "coordinates", n)
            too_many(n + len(tuples))
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
            stops.append(stop_from(n, where, props))
    return parts, stops, name or _text(next(root.iter("Document"), None), "name")
