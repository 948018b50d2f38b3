"""A trajectory streamed as GeoJSON, GPX 1.1 or KML 2.2 for GIS users: one pass, constant memory, UTC times.

Input: segments (one per trip: a name and its positions in time order) and places (stops, schools, garages).
Places come first in every format (GPX 1.1 wants `wpt` before `trk`); a segment without a drawable position is
left out; a position whose lat/lon is not finite is skipped (it cannot be drawn).

- GeoJSON (RFC 7946: WGS84, [lon, lat]): one LineString Feature per segment whose properties (start, end,
  count, top speed) follow the streamed geometry, or with `points=True` one Point Feature per position instead
  (tipo "posicao", time, speed; QGIS "Points to path" rebuilds lines). Not both: that would take two passes.
  Places are Point Features. Property keys are short ASCII Portuguese, so they survive a Shapefile's 10 chars.
- GPX 1.1: `wpt` per place; `trk` per segment with one `trkseg`; `trkpt` with `<time>` (UTC, Z) and speed in
  m/s in Garmin's TrackPointExtension v2 (read by Garmin tools, GPXSee, GDAL).
- KML 2.2: a Placemark per place and a LineString Placemark per segment, or with `points=True` a time-stamped
  Point Placemark per position (Google Earth's time slider). gx:Track is left out: its schema wants every
  `<when>` before every `<gx:coord>`, which cannot be streamed.

A track names the daily seals it was cut from (seals/table.py), when given: GeoJSON in a top-level `"seals"`
list, GPX in `<metadata><desc>` (one seal a line), KML in the Document's `<ExtendedData>` (a `Data` per seal).
"""

from __future__ import annotations

import math
import re
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar, overload

import orjson

from telemetria.reports.output.csv import CHUNK_CHARS, Chunker, as_async
from telemetria.seals import table as seal_table
from telemetria.seals.model import SealRef

GEOJSON_MEDIA_TYPE = "application/geo+json"
GPX_MEDIA_TYPE = "application/gpx+xml"
KML_MEDIA_TYPE = "application/vnd.google-earth.kml+xml"

GPX_NS = "http://www.topografix.com/GPX/1/1"
GPXTPX_NS = "http://www.garmin.com/xmlschemas/TrackPointExtension/v2"
KML_NS = "http://www.opengis.net/kml/2.2"
_TPX_OPEN = "<gpxtpx:TrackPointExtension><gpxtpx:speed>"
_TPX_CLOSE = "</gpxtpx:speed></gpxtpx:TrackPointExtension>"


@dataclass(frozen=True, slots=True)
class Position:
    """A fix: aware time, WGS84 degrees, speed in km/h (None when the tracker did not send it)."""

    t: datetime
    lat: float
    lon: float
    speed_kmh: float | None = None


@dataclass(frozen=True, slots=True)
class Place:
    """A named point: a stop, a school, a garage; `t` when it was visited, if known."""

    name: str
    kind: str
    lat: float
    lon: float
    t: datetime | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    """One trip (or any continuous stretch): its name and positions in time order, consumed once."""

    name: str
    positions: AsyncIterable[Position] | Iterable[Position]


Segments = AsyncIterable[Segment] | Iterable[Segment]
Places = AsyncIterable[Place] | Iterable[Place]
P = TypeVar("P", Position, Place)

_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")  # not allowed in XML 1.0


def _xml(text: str) -> str:
    """Text safe in XML content and attributes: characters XML forbids dropped, & < > " escaped."""
    text = _XML_BAD.sub("", text)
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _deg(x: float) -> str:
    """Degrees with at most 6 decimals (~0.1 m), no exponent (xsd:decimal has none), no `-0`."""
    s = f"{x:.6f}".rstrip("0").rstrip(".")
    return "0" if s == "-0" else s


@overload
def _utc(t: datetime) -> str: ...
@overload
def _utc(t: None) -> None: ...
def _utc(t: datetime | None) -> str | None:
    """ISO 8601 in UTC with Z; milliseconds only when there are any."""
    if t is None:
        return None
    if t.tzinfo is None:
        raise ValueError(f"naive datetime in a track: {t!r}")
    u = t.astimezone(UTC)
    ms = f".{u.microsecond // 1000:03d}" if u.microsecond else ""
    return f"{u:%Y-%m-%dT%H:%M:%S}{ms}Z"


async def _drawn(items: AsyncIterable[P] | Iterable[P]) -> AsyncIterator[P]:
    """The items whose lat/lon are finite."""
    async for item in as_async(items):
        if math.isfinite(item.lat) and math.isfinite(item.lon):
            yield item


def _kmh(p: Position) -> float | None:
    """Speed in km/h to 0.1, None when unknown."""
    s = p.speed_kmh
    return round(s, 1) if s is not None and math.isfinite(s) else None


async def _encoded(pieces: AsyncIterator[str], chunk_chars: int) -> AsyncIterator[bytes]:
    buf = Chunker(chunk_chars)
    async for piece in pieces:
        if chunk := buf.add(piece):
            yield chunk
    if tail := buf.flush():
        yield tail


# GeoJSON


def _json(value: object) -> str:
    return orjson.dumps(value).decode()


def _point_feature(lon: float, lat: float, props: Mapping[str, object]) -> str:
    point = f'{{"type":"Point","coordinates":[{_deg(lon)},{_deg(lat)}]}}'
    return f'{{"type":"Feature","geometry":{point},"properties":{_json(props)}}}'


Seals = Sequence[SealRef] | None


async def _geojson(
    segments: Segments, places: Places, points: bool, title: str | None, seals: Seals
) -> AsyncIterator[str]:
    named = f'"seals":{_json(seal_table.as_json(seals))},' if seals is not None else ""
    yield '{"type":"FeatureCollection",' + (f'"name":{_json(title)},' if title is not None else "") + named
    yield '"features":['
    sep = ""
    async for pl in _drawn(places):
        yield sep + _point_feature(pl.lon, pl.lat, {"nome": pl.name, "tipo": pl.kind, "hora": _utc(pl.t)})
        sep = ","
    i = 0
    async for seg in as_async(segments):
        i += 1
        n, first, last = 0, "", ""
        vmax: float | None = None
        end: datetime | None = None
        async for p in _drawn(seg.positions):
            v = _kmh(p)
            if points:
                props = {"tipo": "posicao", "trecho": i, "nome": seg.name, "hora": _utc(p.t), "vel_kmh": v}
                yield sep + _point_feature(p.lon, p.lat, props)
                sep = ","
                continue
            last = f"[{_deg(p.lon)},{_deg(p.lat)}]"
            if n == 0:
                first = _utc(p.t)
                yield sep + '{"type":"Feature","geometry":{"type":"LineString","coordinates":[' + last
                sep = ","
            else:
                yield "," + last
            n += 1
            vmax = v if vmax is None or (v is not None and v > vmax) else vmax
            end = p.t
        if n:
            props = {"trecho": i, "nome": seg.name, "inicio": first, "fim": _utc(end), "pontos": n, "vmax_kmh": vmax}
            # RFC 7946 wants two positions or more: a lone fix becomes a zero-length line.
            yield ("," + last if n == 1 else "") + f']}},"properties":{_json(props)}}}'
    yield "]}\n"


def geojson_chunks(
    segments: Segments,
    places: Places = (),
    *,
    points: bool = False,
    title: str | None = None,
    seals: Seals = None,
    chunk_chars: int = CHUNK_CHARS,
) -> AsyncIterator[bytes]:
    """A GeoJSON FeatureCollection as UTF-8 chunks of ~64 KiB; speeds in km/h, times UTC ISO 8601 Z."""
    return _encoded(_geojson(segments, places, points, title, seals), chunk_chars)


# GPX 1.1


def _seals_text(seals: Sequence[SealRef]) -> str:
    head = f"{seal_table.CSV_TITLE} (veículo placa dia versão posições SHA-256 de/até UTC):"
    return "\n".join([head, *(seal_table.as_text(r) for r in seals)])


async def _gpx(segments: Segments, places: Places, title: str | None, seals: Seals) -> AsyncIterator[str]:
    yield (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<gpx version="1.1" creator="Telemetria" xmlns="{GPX_NS}" xmlns:gpxtpx="{GPXTPX_NS}">\n'
    )
    if title is not None or seals is not None:
        name = f"<name>{_xml(title)}</name>" if title is not None else ""
        desc = f"<desc>{_xml(_seals_text(seals))}</desc>" if seals is not None else ""
        yield f"<metadata>{name}{desc}</metadata>\n"
    async for pl in _drawn(places):
        time = f"<time>{_utc(pl.t)}</time>" if pl.t else ""
        yield (
            f'<wpt lat="{_deg(pl.lat)}" lon="{_deg(pl.lon)}">{time}'
            f"<name>{_xml(pl.name)}</name><type>{_xml(pl.kind)}</type></wpt>\n"
        )
    i = 0
    async for seg in as_async(segments):
        i += 1
        opened = False
        async for p in _drawn(seg.positions):
            if not opened:
                yield f"<trk><name>{_xml(seg.name)}</name><number>{i}</number><trkseg>\n"
                opened = True
            v = p.speed_kmh
            ext = (
                ""
                if v is None or not math.isfinite(v)
                else f"<extensions>{_TPX_OPEN}{v / 3.6:.2f}{_TPX_CLOSE}</extensions>"
            )
            yield f'<trkpt lat="{_deg(p.lat)}" lon="{_deg(p.lon)}"><time>{_utc(p.t)}</time>{ext}</trkpt>\n'
        if opened:
            yield "</trkseg></trk>\n"
    yield "</gpx>\n"


def gpx_chunks(
    segments: Segments, places: Places = (), *, title: str | None = None, seals: Seals = None,
    chunk_chars: int = CHUNK_CHARS,
) -> AsyncIterator[bytes]:  # fmt: skip
    """A GPX 1.1 file as UTF-8 chunks of ~64 KiB; speeds in m/s, times UTC ISO 8601 Z."""
    return _encoded(_gpx(segments, places, title, seals), chunk_chars)


# KML 2.2


def _data(**fields: object) -> str:
    cells = "".join(
        f'<Data name="{k}"><value>{_xml(str(v))}</value></Data>' for k, v in fields.items() if v is not None
    )
    return f"<ExtendedData>{cells}</ExtendedData>"


def _when(t: datetime | None) -> str:
    return "" if t is None else f"<TimeStamp><when>{_utc(t)}</when></TimeStamp>"


async def _kml(segments: Segments, places: Places, points: bool, title: str | None, seals: Seals) -> AsyncIterator[str]:
    yield f'<?xml version="1.0" encoding="UTF-8"?>\n<kml xmlns="{KML_NS}"><Document>\n'
    if title is not None:
        yield f"<name>{_xml(title)}</name>\n"
    if seals is not None:
        cells = "".join(
            f'<Data name="selo_{r.vehicle_id}_{r.day.isoformat()}"><value>{_xml(seal_table.as_text(r))}</value></Data>'
            for r in seals
        )
        head = f'<Data name="selos"><value>{_xml(_seals_text([]))}</value></Data>'
        yield f"<ExtendedData>{head}{cells}</ExtendedData>\n"
    async for pl in _drawn(places):
        yield (
            f"<Placemark><name>{_xml(pl.name)}</name>{_when(pl.t)}{_data(tipo=pl.kind)}"
            f"<Point><coordinates>{_deg(pl.lon)},{_deg(pl.lat)}</coordinates></Point></Placemark>\n"
        )
    i = 0
    async for seg in as_async(segments):
        i += 1
        n, last = 0, ""
        async for p in _drawn(seg.positions):
            last = f"{_deg(p.lon)},{_deg(p.lat)}"
            if points:
                yield (
                    f"<Placemark>{_when(p.t)}{_data(trecho=i, nome=seg.name, vel_kmh=_kmh(p))}"
                    f"<Point><coordinates>{last}</coordinates></Point></Placemark>\n"
                )
                continue
            if n == 0:
                yield (
                    f"<Placemark><name>{_xml(seg.name)}</name>{_data(trecho=i)}"
                    f"<LineString><tessellate>1</tessellate><coordinates>\n{last}"
                )
            else:
                yield " " + last
            n += 1
        if n:  # a lone fix becomes a zero-length line: LineString wants two coordinates
            yield (" " + last if n == 1 else "") + "</coordinates></LineString></Placemark>\n"
    yield "</Document></kml>\n"


def kml_chunks(
    segments: Segments,
    places: Places = (),
    *,
    points: bool = False,
    title: str | None = None,
    seals: Seals = None,
    chunk_chars: int = CHUNK_CHARS,
) -> AsyncIterator[bytes]:
    """A KML 2.2 document as UTF-8 chunks of ~64 KiB; times UTC ISO 8601 Z, speeds (points=True) in km/h."""
    return _encoded(_kml(segments, places, points, title, seals), chunk_chars)
