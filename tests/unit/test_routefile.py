"""Route files (GeoJSON, GPX, KML) around Jaru/RO: parsed to known lines and stops; every rejection names its field."""

from __future__ import annotations

import math
from datetime import time
from itertools import pairwise
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from telemetria.registry.routefile import (
    RouteFileError,
    StopIn,
    check_line,
    check_point,
    check_polygon,
    detect_format,
    line_from_geojson,
    parse_route_file,
)

ROUTES = Path(__file__).parents[1] / "payloads" / "routes"
GARAGE = (-62.4705, -10.4362)  # first vertex of every sample route
SCHOOL = (-62.435, -10.462)  # last vertex
A, F = 6378137.0, 1 / 298.257223563


def haversine_m(coords: list[tuple[float, float]]) -> float:
    """Polyline length on the sphere of the Gaussian radius √(M·N) at Jaru's latitude.

    On that sphere any direction is within ±0.33 % of the WGS84 ellipsoid at lat -10.44 (M and N differ by
    0.65 %), so a 0.5 % tolerance holds whatever the route's shape.
    """
    e2 = F * (2 - F)
    s2 = math.sin(math.radians(-10.44)) ** 2
    r = math.sqrt(A * (1 - e2) / (1 - e2 * s2) ** 1.5 * A / math.sqrt(1 - e2 * s2))
    total = 0.0
    for (lon1, lat1), (lon2, lat2) in pairwise(coords):
        p1, p2, dp, dl = map(math.radians, (lat1, lat2, lat2 - lat1, lon2 - lon1))
        h = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
        total += 2 * r * math.asin(math.sqrt(h))
    return total


def err(fn: object, *args: object) -> RouteFileError:
    with pytest.raises(RouteFileError) as e:
        fn(*args)  # type: ignore[operator]
    return e.value


GOOD = [
    # file, format, distinct points, name, stops as (name, kind, scheduled_time)
    ("feature_linestring.geojson", "geojson", 35, "Rota 07 - Linha 623", []),
    (
        "collection_line_stops.geojson",
        "geojson",
        35,
        "Rota 07 - ida",
        [
            ("Garagem municipal", "garage", None),
            ("Sítio Boa Esperança", "boarding", time(6, 40)),
            ("Km 4 da Linha 623", "boarding", time(6, 52, 30)),
            ("EMEIEF Rural Linha 623", "school", time(7, 15)),
            ("ponto sem nome", "boarding", None),  # name from 'desc'
        ],
    ),
    (
        "track_segments.gpx",  # 36 trkpt in two segments; the second repeats the first's last point
        "gpx",
        35,
        "Rota 07 - Linha 623",
        [
            ("Garagem", "garage", None),  # <type>Garagem</type>
            ("Sítio Boa Esperança", "boarding", time(6, 40)),  # recorded <time> ignored, extension used
            ("Entrada do Km 4", "boarding", time(6, 52)),  # name from <desc>, kind 'embarque'
            ("EMEIEF Rural Linha 623", "school", time(7, 15)),  # <sym>School</sym>
        ],
    ),
    ("route_rte_gpx10.gpx", "gpx", 6, "Rota 07 planejada", []),
    (
        "document_folder_ns.kml",
        "kml",
        35,
        "Rota 07 - Linha 623",
        [
            ("Garagem municipal", "garage", None),
            ("Sítio Boa Esperança", "boarding", time(6, 40)),
            ("Escola Linha 623", "school", time(7, 15)),
        ],
    ),
    (
        "no_namespace.kml",
        "kml",
        35,
        "Rota 07 sem namespace",  # the line's Placemark has no name: the Document's
        [("Ponto do Km 4", "boarding", None), ("Escola", "school", time(7, 15))],
    ),
]


@pytest.mark.parametrize(("name", "fmt", "n", "route_name", "stops"), GOOD, ids=[g[0] for g in GOOD])
def test_good_files(name: str, fmt: str, n: int, route_name: str, stops: list[tuple[str, str, time | None]]) -> None:
    g = parse_route_file((ROUTES / name).read_bytes(), fmt)
    assert len(g.coords) == n
    assert g.coords[0] == GARAGE and g.coords[-1] == SCHOOL
    assert all(len(c) == 2 for c in g.coords)  # altitude dropped
    assert g.length_m == pytest.approx(haversine_m(g.coords), rel=0.005)
    # every file traces the same geodesic corners, so every file has the same length
    assert g.length_m == pytest.approx(5435.5, abs=0.1)
    assert g.name == route_name
    assert [(s.name, s.kind, s.scheduled_time) for s in g.stops] == stops
    assert all(-10.47 < s.lat < -10.43 and -62.48 < s.lon < -62.43 for s in g.stops)


BAD = [
    ("bad_billion_laughs.kml", "kml", "file", "entity"),
    ("bad_empty.gpx", "gpx", "file", "empty"),
    ("bad_not_xml.gpx", "gpx", "file", "not well-formed XML"),
    ("bad_one_point.gpx", "gpx", "geometry", "at least 2 distinct points, got 1"),
    ("bad_out_of_range.geojson", "geojson", "coordinates[3].lat", "lat 95 is outside -90..90"),
    ("bad_swapped.geojson", "geojson", "coordinates[0]", "look swapped"),
    ("bad_polygon.geojson", "geojson", "geometry", "got a Polygon"),
]


@pytest.mark.parametrize(("name", "fmt", "field", "words"), BAD, ids=[b[0] for b in BAD])
def test_bad_files(name: str, fmt: str, field: str, words: str) -> None:
    e = err(parse_route_file, (ROUTES / name).read_bytes(), fmt)
    assert e.field == field and words in e.message and str(e) == f"{field}: {e.message}"


@pytest.mark.parametrize(
    ("name", "by_name", "sniffed"),
    [(g[0], g[1], g[1]) for g in GOOD]
    + [
        ("bad_billion_laughs.kml", "kml", "kml"),
        ("bad_one_point.gpx", "gpx", "gpx"),
        ("bad_out_of_range.geojson", "geojson", "geojson"),
        ("bad_polygon.geojson", "geojson", "geojson"),
        ("bad_not_xml.gpx", "gpx", "unrecognised format"),
        ("bad_empty.gpx", "gpx", "empty"),
    ],
)
def test_detect_format(name: str, by_name: str, sniffed: str) -> None:
    body = (ROUTES / name).read_bytes()
    assert detect_format(name, None, body) == by_name
    assert detect_format(name.upper(), "application/octet-stream", body) == by_name
    if sniffed in ("geojson", "gpx", "kml"):
        assert detect_format(None, None, body) == sniffed
        assert detect_format("upload.xml", "text/xml", body) == sniffed
    else:
        e = err(detect_format, None, None, body)
        assert e.field == "file" and sniffed in e.message


@pytest.mark.parametrize(
    ("content_type", "fmt"),
    [
        ("application/geo+json; charset=utf-8", "geojson"),
        ("application/json", "geojson"),
        ("application/gpx+xml", "gpx"),
        ("application/vnd.google-earth.kml+xml", "kml"),
    ],
)
def test_detect_format_by_content_type(content_type: str, fmt: str) -> None:
    assert detect_format("rota", content_type, b"") == fmt


def test_detect_format_refuses_kmz() -> None:
    assert "unzip" in err(detect_format, "rota.kmz", None, b"PK\x03\x04...").message
    assert err(detect_format, None, None, b"PK\x03\x04\x14\x00").field == "file"


def test_sniffing_sees_prefixed_roots_and_bom() -> None:
    assert detect_format(None, None, b'\xef\xbb\xbf  <?xml version="1.0"?>\n<gpx:gpx xmlns:gpx="x">') == "gpx"
    assert detect_format(None, None, b'\n\n  {"type": "Feature"}') == "geojson"


def test_unknown_format_name() -> None:
    assert err(parse_route_file, b"{}", "shp").field == "file"


# --- check_line: the rules shared with the JSON API -------------------------------------------------------------

J = [(-62.4705, -10.4362), (-62.4620, -10.4362), (-62.4620, -10.4450)]


def test_check_line_drops_altitude_and_consecutive_duplicates() -> None:
    raw = [[-62.4705, -10.4362, 180.0], [-62.4705, -10.4362, 181.0], [-62.4620, -10.4362], [-62.4620, -10.4450, 0]]
    assert check_line(raw) == J
    # a point may repeat later on (a loop back to the garage), only consecutive repeats go
    assert check_line([*map(list, J), list(J[1]), list(J[0])]) == [*J, J[1], J[0]]


@pytest.mark.parametrize(
    ("coords", "field", "words"),
    [
        ([], "geometry", "at least 2 distinct points, got 0"),
        ([[-62.47, -10.44]], "geometry", "got 1"),
        ([[-62.47, -10.44], [-62.47, -10.44, 200.0]], "geometry", "got 1"),
        ("-62.47,-10.44", "coordinates", "array of [lon, lat]"),
        ({"type": "LineString"}, "coordinates", "array"),
        ([[-62.47, -10.44], [-62.46]], "coordinates[1]", "point 1: expected [lon, lat]"),
        ([[-62.47, -10.44], [-62.46, -10.44, 0.0, 1.0]], "coordinates[1]", "expected [lon, lat]"),
        ([[-62.47, -10.44], "x"], "coordinates[1]", "expected [lon, lat]"),
        ([[-62.47, -10.44], [-62.46, math.nan]], "coordinates[1].lat", "not a finite number"),
        ([[math.inf, -10.44], [-62.46, -10.44]], "coordinates[0].lon", "not a finite number"),
        ([[-62.47, -10.44], [-62.46, -10.44, math.nan]], "coordinates[1].alt", "not a finite number"),
        ([[-62.47, -10.44], ["-62.46", -10.44]], "coordinates[1].lon", "is not a number"),
        ([[-62.47, -10.44], [True, -10.44]], "coordinates[1].lon", "is not a number"),
        ([[-62.47, None], [-62.46, -10.44]], "coordinates[0].lat", "missing"),
        ([[-62.47, -10.44], [10**400, -10.44]], "coordinates[1].lon", "not a finite number"),
        ([[-62.47, -10.44], [-182.0, -10.44]], "coordinates[1].lon", "lon -182 is outside -180..180"),
        ([[-62.47, -10.44], [-62.46, -91.0]], "coordinates[1].lat", "outside -90..90"),
        ([[-9.14, 38.72], [-9.13, 38.72]], "coordinates[0].lat", "outside Brazil"),  # Lisbon
        ([[-62.47, -10.44], [-80.0, -10.44]], "coordinates[1].lon", "outside Brazil"),  # off Peru's coast
        ([[-10.44, -62.47], [-10.44, -62.46]], "coordinates[0]", "latitude and longitude look swapped"),
    ],
)
def test_check_line_rejections(coords: object, field: str, words: str) -> None:
    e = err(check_line, coords)
    assert e.field == field and words in e.message


def test_swap_hint_only_when_swapping_would_help() -> None:
    assert "swapped" not in err(check_line, [[-9.14, 38.72], [-9.13, 38.72]]).message


def test_jump_names_both_points_in_the_callers_numbering() -> None:
    far = (-62.47, -10.70)  # 0.264° of latitude (≈ 29.2 km) south of the previous point
    e = err(check_line, [list(J[0]), list(J[1]), list(J[1]), list(far)])
    assert e.field == "coordinates[3]"
    assert "a jump of 29.2 km between points 2 and 3 is not a road" in e.message
    assert "GPS" in e.message
    # 19.9 km is a long rural stretch without vertices, not an error
    assert len(check_line([[-62.47, -10.44], [-62.47, -10.62]])) == 2


def test_total_length_limit() -> None:
    zigzag = [[-62.47, -10.44 - 0.15 * (i % 2)] for i in range(62)]  # 61 legs of 16.6 km = 1012 km
    e = err(check_line, zigzag)
    assert e.field == "geometry" and "1012 km" in e.message and "1000 km" in e.message
    assert len(check_line(zigzag[:60])) == 60


def test_point_count_limit() -> None:
    e = err(check_line, [[-62.47, -10.44]] * 100_001)
    assert e.field == "geometry" and "100001 points" in e.message and "100000" in e.message


def test_a_hundred_thousand_points_are_accepted() -> None:
    # a 10 h trace at one fix every 0.36 s: ~1.1 m steps heading south-east
    raw = [[-62.47 + i * 7e-6, -10.44 - i * 7e-6] for i in range(100_000)]
    line = check_line(raw)
    assert len(line) == 100_000 and line[-1] == pytest.approx((-62.47 + 0.699993, -10.44 - 0.699993))


@given(st.lists(st.tuples(st.floats(-0.02, 0.02), st.floats(-0.02, 0.02)), min_size=2, max_size=40))
def test_check_line_is_idempotent(offsets: list[tuple[float, float]]) -> None:
    raw = [[-62.47 + dx, -10.44 + dy] for dx, dy in offsets]
    if len({tuple(p) for p in raw}) < 2:
        return
    line = check_line(raw)
    assert check_line([list(p) for p in line]) == line
    assert all(a != b for a, b in pairwise(line))


# --- line_from_geojson ---------------------------------------------------------------------------------------------


def feature(geometry: dict[str, object], **props: object) -> dict[str, object]:
    return {"type": "Feature", "properties": props, "geometry": geometry}


LS: dict[str, object] = {"type": "LineString", "coordinates": [list(p) for p in J]}
STOP = feature({"type": "Point", "coordinates": [-62.462, -10.44]}, name="Escola", kind="school")


def test_line_from_geojson_shapes() -> None:
    assert line_from_geojson(LS) == J
    assert line_from_geojson(feature(LS, name="x")) == J
    assert line_from_geojson({"type": "FeatureCollection", "features": [STOP, feature(LS)]}) == J


def test_multilinestring_parts_join_within_30_m() -> None:
    near = [-62.4620, -10.4364]  # 22 m south of the first part's end
    joined = {"type": "MultiLineString", "coordinates": [[list(J[0]), list(J[1])], [near, list(J[2])]]}
    assert line_from_geojson(joined) == [J[0], J[1], tuple(near), J[2]]
    apart = {
        "type": "MultiLineString",
        "coordinates": [[list(J[0]), list(J[1])], [[-62.4620, -10.4370], list(J[2])]],
    }  # 88 m
    e = err(line_from_geojson, apart)
    assert e.field == "geometry" and "2 lines that do not join" in e.message and "88 m" in e.message
    bad = {"type": "MultiLineString", "coordinates": [[list(J[0]), list(J[1])], [[-62.46, 95.0]]]}
    assert err(line_from_geojson, bad).field == "coordinates[1][0].lat"


@pytest.mark.parametrize(
    ("obj", "words"),
    [
        ({"type": "FeatureCollection", "features": [feature(LS), feature(LS)]}, "holds 2 line features"),
        ({"type": "FeatureCollection", "features": [STOP]}, "holds 0 line features (found: Point)"),
        ({"type": "FeatureCollection"}, "'features' array"),
        ({"type": "Feature", "geometry": None}, "expected a GeoJSON object"),
        ({"type": "Point", "coordinates": [-62.47, -10.44]}, "got type 'Point'"),
        ({"type": "MultiPolygon", "coordinates": []}, "got a MultiPolygon"),
        ([], "expected a GeoJSON object"),
    ],
)
def test_line_from_geojson_rejections(obj: object, words: str) -> None:
    e = err(line_from_geojson, obj)
    assert e.field == "geometry" and words in e.message


def test_file_with_several_lines_that_do_not_join_is_refused() -> None:
    line = "<Placemark><LineString><coordinates>{}</coordinates></LineString></Placemark>"
    kml = f"<kml><Document>{line.format('-62.47,-10.44 -62.46,-10.44')}{line.format('-62.40,-10.50 -62.41,-10.50')}"
    kml += f"{line.format('-62.30,-10.50 -62.31,-10.50')}</Document></kml>"
    e = err(parse_route_file, kml.encode(), "kml")
    assert e.field == "geometry" and "3 lines that do not join" in e.message


def test_gpx_tracks_that_join_are_one_route() -> None:
    pt = '<trkpt lat="{}" lon="{}"/>'
    trk1 = pt.format(-10.44, -62.47) + pt.format(-10.44, -62.46)
    trk2 = pt.format(-10.4401, -62.46) + pt.format(-10.45, -62.46)  # starts 11 m from trk1's end
    gpx = f'<gpx xmlns="http://www.topografix.com/GPX/1/1"><trk><trkseg>{trk1}</trkseg></trk>'
    gpx += f"<trk><trkseg>{trk2}</trkseg></trk></gpx>"
    g = parse_route_file(gpx.encode(), "gpx")
    assert len(g.coords) == 4 and g.name is None and g.stops == []
    e = err(parse_route_file, gpx.replace("-10.4401", "-10.4410").encode(), "gpx")
    assert "2 lines that do not join" in e.message and "line 2 begins 111 m" in e.message


@pytest.mark.parametrize(
    ("body", "fmt", "field", "words"),
    [
        (b'<gpx><trk><trkseg><trkpt lat="-10.44" lon="x"/></trkseg></trk></gpx>', "gpx", "coordinates[0].lon", "not"),
        (b'<gpx><trk><trkseg><trkpt lat="-10.44"/></trkseg></trk></gpx>', "gpx", "coordinates[0].lon", "missing"),
        (b'<gpx><trk><trkseg><trkpt lat="NaN" lon="-62"/></trkseg></trk></gpx>', "gpx", "coordinates[0].lat", "finite"),
        (
            b"<kml><Placemark><LineString><coordinates>-62.47 -10.44</coordinates></LineString></Placemark></kml>",
            "kml",
            "coordinates[0]",
            "'lon,lat[,alt]'",
        ),
        (b"<kml><Document/></kml>", "kml", "geometry", "no line found"),
        (b"<gpx><wpt lat='-10.44' lon='-62.47'/></gpx>", "gpx", "geometry", "no line found"),
        (b"<kml><Placemark><Point/></Placemark></kml>", "kml", "stops[0].lon", "missing"),
        (b"<html><body>404</body></html>", "gpx", "file", "expected a <gpx> document, found <html>"),
        (b'<!DOCTYPE gpx SYSTEM "http://evil.example/x.dtd"><gpx><foo>&ext;</foo></gpx>', "gpx", "file", ""),
        (
            b'{"type": "LineString", "coordinates": [[-62.47, -10.44], [-62.46, -10.44],]}',
            "geojson",
            "file",
            "not valid JSON",
        ),
        (b'{"type": "LineString", "coordinates": [[-62.47, -10.44], [-62.46, NaN]]}', "geojson", "file", "JSON"),
    ],
)
def test_small_bad_bodies(body: bytes, fmt: str, field: str, words: str) -> None:
    e = err(parse_route_file, body, fmt)
    assert e.field == field and words in e.message


def test_external_entity_is_refused() -> None:
    xxe = (
        b'<?xml version="1.0"?><!DOCTYPE gpx [<!ENTITY xxe SYSTEM "file:///etc/passwd">]><gpx><name>&xxe;</name></gpx>'
    )
    e = err(parse_route_file, xxe, "gpx")
    assert e.field == "file" and "entity" in e.message


# --- stops ---------------------------------------------------------------------------------------------------------


def collection(*stops: dict[str, object]) -> bytes:
    import json

    return json.dumps({"type": "FeatureCollection", "features": [feature(LS), *stops]}).encode()


def test_stop_defaults_and_mappings() -> None:
    g = parse_route_file(
        collection(
            feature({"type": "Point", "coordinates": [-62.466, -10.4362, 190.0]}),
            feature({"type": "Point", "coordinates": [-62.462, -10.44]}, type="Garagem da prefeitura", time="6:05"),
            feature({"type": "Point", "coordinates": [-62.462, -10.442]}, kind="ESCOLA", time="2026-03-02T10:00:00Z"),
        ),
        "geojson",
    )
    assert g.stops == [
        StopIn("Ponto 1", -10.4362, -62.466, "boarding", None),
        StopIn("Ponto 2", -10.44, -62.462, "garage", time(6, 5)),
        StopIn("Ponto 3", -10.442, -62.462, "school", None),  # a recorded date-time is not a schedule
    ]


@pytest.mark.parametrize(
    ("stop", "field", "words"),
    [
        (feature({"type": "Point", "coordinates": [-62.46, -10.44]}, kind="bus_stop"), "stops[0].kind", "bus_stop"),
        (
            feature({"type": "Point", "coordinates": [-62.46, -10.44]}, scheduled_time="7h15"),
            "stops[0].scheduled_time",
            "HH:MM",
        ),
        (feature({"type": "Point", "coordinates": [-62.46, -10.44]}, time="24:00"), "stops[0].scheduled_time", "24:00"),
        (feature({"type": "Point", "coordinates": [-62.46, 10.44]}), "stops[0].lat", "outside Brazil"),
        (feature({"type": "Point", "coordinates": [-10.44, -62.46]}), "stops[0]", "swapped"),
        (feature({"type": "Point", "coordinates": [-62.46, "x"]}), "stops[0].lat", "not a number"),
        (feature({"type": "Point", "coordinates": None}), "stops[0]", "expected [lon, lat]"),
    ],
)
def test_stop_rejections(stop: dict[str, object], field: str, words: str) -> None:
    e = err(parse_route_file, collection(stop), "geojson")
    assert e.field == field and words in e.message


def test_gpx_stop_outside_the_box() -> None:
    gpx = (
        b'<gpx><wpt lat="-10.44" lon="-20.0"/><rte><rtept lat="-10.44" lon="-62.47"/><rtept lat="-10.45" lon="-62.47"/>'
    )
    e = err(parse_route_file, gpx + b"</rte></gpx>", "gpx")
    assert e.field == "stops[0].lon" and "stop 0" in e.message and "outside Brazil" in e.message


# --- check_polygon ---------------------------------------------------------------------------------------------------


def square(lon: float, lat: float, side: float, clockwise: bool = False) -> list[list[float]]:
    ring = [[lon, lat], [lon + side, lat], [lon + side, lat + side], [lon, lat + side], [lon, lat]]
    return ring[::-1] if clockwise else ring


def test_polygon_shapes() -> None:
    block = square(-62.4705, -10.4450, 0.0085)  # a 0.9 km² school zone in town
    p = check_polygon({"type": "Polygon", "coordinates": [block]})
    assert p.geom_type == "Polygon" and p.exterior.coords[0] == (-62.4705, -10.4450)
    assert check_polygon(
        feature({"type": "Polygon", "coordinates": [square(-62.4705, -10.4450, 0.0085, True)]})
    ).equals(p)
    multi = {"type": "MultiPolygon", "coordinates": [[block], [square(-62.44, -10.47, 0.005)]]}
    assert check_polygon(multi).geom_type == "MultiPolygon"
    three_d = [[x, y, 180.0] for x, y in block]
    assert check_polygon({"type": "Polygon", "coordinates": [three_d]}).equals(p)


def test_polygon_area_limit_counts_holes() -> None:
    big = square(-62.70, -10.70, 0.44)  # 48.7 km × 48.2 km ≈ 2344 km²
    e = err(check_polygon, {"type": "Polygon", "coordinates": [big]})
    assert e.field == "geometry" and "2344 km²" in e.message and "2000 km²" in e.message
    hole = square(-62.60, -10.60, 0.2, clockwise=True)  # ≈ 484 km² taken out: ≈ 1861 km² remain
    assert check_polygon({"type": "Polygon", "coordinates": [big, hole]}).area > 0


@pytest.mark.parametrize(
    ("obj", "field", "words"),
    [
        (
            {
                "type": "Polygon",
                "coordinates": [
                    [[-62.47, -10.44], [-62.46, -10.45], [-62.46, -10.44], [-62.47, -10.45], [-62.47, -10.44]]
                ],
            },
            "geometry",
            "Self-intersection",
        ),
        ({"type": "Polygon", "coordinates": [square(-62.47, -10.44, 0.01)[:-1]]}, "coordinates[0]", "the last equal"),
        (
            {"type": "Polygon", "coordinates": [[[-62.47, -10.44], [-62.46, -10.44], [-62.47, -10.44]]]},
            "coordinates[0]",
            "4 or more",
        ),
        ({"type": "Polygon", "coordinates": [square(-62.47, 10.44, 0.01)]}, "coordinates[0][0].lat", "outside Brazil"),
        (
            {"type": "MultiPolygon", "coordinates": [[square(-62.47, -10.44, 0.01)], []]},
            "coordinates[1]",
            "exterior ring",
        ),
        ({"type": "Polygon", "coordinates": []}, "geometry", "Polygon or MultiPolygon"),
        ({"type": "LineString", "coordinates": [[-62.47, -10.44], [-62.46, -10.44]]}, "geometry", "'LineString'"),
        (feature({"type": "Point", "coordinates": [-62.47, -10.44]}), "geometry", "'Point'"),
    ],
)
def test_polygon_rejections(obj: dict[str, object], field: str, words: str) -> None:
    e = err(check_polygon, obj)
    assert e.field == field and words in e.message


def test_check_point_for_stops_given_as_json_fields() -> None:
    assert check_point(-62.47, -10.44, "stops[0]", "stop 0") == (-62.47, -10.44)
    assert err(check_point, -62.47, math.nan, "stops[2]", "stop 2 (Escola)").field == "stops[2].lat"
    e = err(check_point, -10.44, -62.47, "stops[1]", "stop 1 (Sítio)")
    assert e.field == "stops[1]" and e.message.startswith("stop 1 (Sítio): ") and "swapped" in e.message
