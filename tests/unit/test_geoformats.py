"""GeoJSON, GPX and KML exports: parse back with strict parsers, lon/lat order, UTC times, escaping, streaming."""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any
from xml.etree.ElementTree import Element
from zoneinfo import ZoneInfo

import orjson
from defusedxml import ElementTree

from telemetria.reports.output.gis import (
    GPX_NS,
    GPXTPX_NS,
    KML_NS,
    Place,
    Position,
    Segment,
    geojson_chunks,
    gpx_chunks,
    kml_chunks,
)

T0 = datetime(2026, 3, 2, 11, 0, tzinfo=UTC)
NASTY = 'Escola "Tiradentes" <EMEF> & Cia \x01'  # \x01 is not allowed in XML at all


def positions(n: int, start: datetime = T0, speed: float | None = 36.0) -> list[Position]:
    return [Position(start + timedelta(seconds=30 * i), -10.4 - i * 1e-4, -62.46 + i * 2e-4, speed) for i in range(n)]


def trip_lists() -> list[tuple[str, list[Position]]]:
    return [
        ("Linha 1 <ida> & volta", positions(3)),
        ("vazia", []),  # nothing to draw: left out
        ("Linha 2", [*positions(2, T0 + timedelta(hours=2), None), Position(T0, math.nan, -62.0)]),
    ]


def trips() -> list[Segment]:
    return [Segment(name, ps) for name, ps in trip_lists()]


def places() -> list[Place]:
    local = datetime(2026, 3, 2, 7, 15, tzinfo=ZoneInfo("America/Porto_Velho"))
    return [Place(NASTY, "escola", -10.41, -62.47, local), Place("Garagem", "garagem", -10.39, -62.45)]


async def collect(chunks: AsyncIterator[bytes]) -> bytes:
    return b"".join([c async for c in chunks])


async def test_geojson_lines_in_lon_lat_order_with_summaries() -> None:
    doc = orjson.loads(await collect(geojson_chunks(trips(), places(), title="Ônibus 7")))
    assert doc["type"] == "FeatureCollection" and doc["name"] == "Ônibus 7"
    feats = doc["features"]
    assert [f["geometry"]["type"] for f in feats] == ["Point", "Point", "LineString", "LineString"]
    school, garage, line1, line2 = feats
    assert school["geometry"]["coordinates"] == [-62.47, -10.41]  # lon, lat
    assert school["properties"] == {"nome": NASTY, "tipo": "escola", "hora": "2026-03-02T11:15:00Z"}
    assert garage["properties"]["hora"] is None
    assert line1["geometry"]["coordinates"] == [[-62.46, -10.4], [-62.4598, -10.4001], [-62.4596, -10.4002]]
    assert line1["properties"] == {
        "trecho": 1,
        "nome": "Linha 1 <ida> & volta",
        "inicio": "2026-03-02T11:00:00Z",
        "fim": "2026-03-02T11:01:00Z",
        "pontos": 3,
        "vmax_kmh": 36.0,
    }
    assert line2["properties"]["trecho"] == 3 and line2["properties"]["pontos"] == 2  # the NaN fix is skipped
    assert line2["properties"]["vmax_kmh"] is None


async def test_geojson_points_mode_and_single_fix_line() -> None:
    doc = orjson.loads(await collect(geojson_chunks(trips(), points=True)))
    pts = doc["features"]
    assert len(pts) == 5 and {f["geometry"]["type"] for f in pts} == {"Point"}
    assert pts[0]["properties"] == {
        "tipo": "posicao",
        "trecho": 1,
        "nome": "Linha 1 <ida> & volta",
        "hora": "2026-03-02T11:00:00Z",
        "vel_kmh": 36.0,
    }
    one = orjson.loads(await collect(geojson_chunks([Segment("um", positions(1))])))
    assert one["features"][0]["geometry"]["coordinates"] == [[-62.46, -10.4], [-62.46, -10.4]]
    empty = orjson.loads(await collect(geojson_chunks([])))
    assert empty == {"type": "FeatureCollection", "features": []}


def _xml(data: bytes) -> Element:
    root: Element = ElementTree.fromstring(data)
    return root


async def test_gpx_parses_with_namespaces_times_and_speeds() -> None:
    data = await collect(gpx_chunks(trips(), places(), title="A & B"))
    assert data.startswith(b'<?xml version="1.0" encoding="UTF-8"?>')
    root = _xml(data)
    ns = {"g": GPX_NS, "x": GPXTPX_NS}
    assert root.tag == f"{{{GPX_NS}}}gpx" and root.get("version") == "1.1"
    assert root.findtext("g:metadata/g:name", namespaces=ns) == "A & B"
    wpts = root.findall("g:wpt", ns)
    assert [w.findtext("g:name", namespaces=ns) for w in wpts] == [NASTY.replace("\x01", ""), "Garagem"]
    assert wpts[0].get("lat") == "-10.41" and wpts[0].get("lon") == "-62.47"
    assert wpts[0].findtext("g:time", namespaces=ns) == "2026-03-02T11:15:00Z"
    assert wpts[0].findtext("g:type", namespaces=ns) == "escola"
    trks = root.findall("g:trk", ns)
    assert [t.findtext("g:name", namespaces=ns) for t in trks] == ["Linha 1 <ida> & volta", "Linha 2"]
    assert [t.findtext("g:number", namespaces=ns) for t in trks] == ["1", "3"]
    pts = root.findall("g:trk/g:trkseg/g:trkpt", ns)
    assert len(pts) == 5
    assert all((p.findtext("g:time", namespaces=ns) or "").endswith("Z") for p in pts)
    assert pts[1].findtext("g:time", namespaces=ns) == "2026-03-02T11:00:30Z"
    assert pts[1].get("lat") == "-10.4001" and pts[1].get("lon") == "-62.4598"
    speeds = [p.findtext("g:extensions/x:TrackPointExtension/x:speed", namespaces=ns) for p in pts]
    assert speeds == ["10.00", "10.00", "10.00", None, None]  # 36 km/h = 10 m/s; unknown speed: no element


async def test_kml_parses_with_lines_places_and_escaped_names() -> None:
    root = _xml(await collect(kml_chunks(trips(), places(), title="<Relatório>")))
    ns = {"k": KML_NS}
    assert root.tag == f"{{{KML_NS}}}kml"
    doc = root.find("k:Document", ns)
    assert doc is not None and doc.findtext("k:name", namespaces=ns) == "<Relatório>"
    marks = doc.findall("k:Placemark", ns)
    assert [m.findtext("k:name", namespaces=ns) for m in marks] == [
        NASTY.replace("\x01", ""),
        "Garagem",
        "Linha 1 <ida> & volta",
        "Linha 2",
    ]
    assert marks[0].findtext("k:TimeStamp/k:when", namespaces=ns) == "2026-03-02T11:15:00Z"
    assert marks[0].findtext("k:ExtendedData/k:Data[@name='tipo']/k:value", namespaces=ns) == "escola"
    assert marks[0].findtext("k:Point/k:coordinates", namespaces=ns) == "-62.47,-10.41"
    coords = (marks[2].findtext("k:LineString/k:coordinates", namespaces=ns) or "").split()
    assert coords == ["-62.46,-10.4", "-62.4598,-10.4001", "-62.4596,-10.4002"]


async def test_kml_points_mode_is_time_stamped() -> None:
    root = _xml(await collect(kml_chunks(trips(), points=True)))
    marks = root.findall(f"{{{KML_NS}}}Document/{{{KML_NS}}}Placemark")
    assert len(marks) == 5
    whens = [m.findtext(f"{{{KML_NS}}}TimeStamp/{{{KML_NS}}}when") for m in marks]
    assert whens[0] == "2026-03-02T11:00:00Z" and all(w and w.endswith("Z") for w in whens)


async def test_async_inputs_and_chunking_give_the_same_bytes() -> None:
    async def agen(items: list[Any]) -> AsyncIterator[Any]:
        for item in items:
            yield item

    async def segs() -> AsyncIterator[Segment]:
        for name, ps in trip_lists():
            yield Segment(name, agen(ps))

    for export in (geojson_chunks, gpx_chunks, kml_chunks):
        expected = await collect(export(trips(), places()))
        small = [c async for c in export(segs(), agen(places()), chunk_chars=64)]
        assert len(small) > 5 and b"".join(small) == expected


def _long_trip(n: int) -> Iterator[Position]:
    for i in range(n):
        yield Position(T0 + timedelta(seconds=i), -10.4 - i * 1e-7, -62.4 + i * 1e-7, 40.0)


async def test_streaming_memory_is_flat() -> None:
    async def peak(n: int) -> tuple[int, int]:
        tracemalloc.start()
        try:
            size = 0
            for export in (geojson_chunks, gpx_chunks, kml_chunks):
                async for chunk in export([Segment("longa", _long_trip(n))]):
                    size += len(chunk)
            return tracemalloc.get_traced_memory()[1], size
        finally:
            tracemalloc.stop()

    small, _ = await peak(10_000)  # past the first full chunk of every format
    big, size = await peak(40_000)
    assert size > 5_000_000
    assert big < 1_000_000 and big < small + 100_000, (small, big)
