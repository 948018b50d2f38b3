"""Route files under generated input: any bytes give a route or a RouteFileError naming a field, never another error.

A RouteFileError becomes a 400 with the field at the HTTP edge; any other exception would be a 500.
"""

from __future__ import annotations

from xml.sax.saxutils import quoteattr

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from telemetria.registry.routefile import RouteFileError, RouteGeometry, detect_format, parse_route_file

FORMATS = ("geojson", "gpx", "kml")
FUZZ = settings(max_examples=300, deadline=None)

# --- GeoJSON: trees that look like GeoJSON, with hostile leaves ---------------------------------------------

KEYS = ["type", "features", "geometry", "coordinates", "properties", "name", "kind", "scheduled_time", "time"]
TYPES = ["FeatureCollection", "Feature", "LineString", "MultiLineString", "Point", "Polygon", "MultiPolygon"]
numbers = st.floats(allow_nan=False) | st.integers(-(2**63), 2**64 - 1) | st.floats(-75, -28) | st.floats(-34, 6)
leaves = st.none() | st.booleans() | numbers | st.text(max_size=8) | st.sampled_from(TYPES)
json_trees = st.recursive(
    leaves,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=4), inner),
    max_leaves=30,
)
positions = st.lists(st.floats(-62.5, -62.4) | numbers, min_size=0, max_size=4)
geometries = st.fixed_dictionaries({"type": st.sampled_from(TYPES), "coordinates": st.lists(positions, max_size=5)})
features = st.fixed_dictionaries(
    {"type": st.just("Feature"), "geometry": geometries | json_trees, "properties": json_trees}
)
geojson_docs = (
    json_trees
    | geometries
    | features
    | st.fixed_dictionaries({"type": st.just("FeatureCollection"), "features": st.lists(features | json_trees)})
)


def outcome(body: bytes, fmt: str) -> RouteGeometry | RouteFileError:
    try:
        return parse_route_file(body, fmt)
    except RouteFileError as e:
        assert e.field and e.message
        return e


@FUZZ
@given(st.binary(max_size=300), st.sampled_from(FORMATS))
def test_any_bytes_parse_or_raise_route_file_error(body: bytes, fmt: str) -> None:
    outcome(body, fmt)


@FUZZ
@given(geojson_docs)
def test_geojson_like_trees_parse_or_raise_route_file_error(doc: object) -> None:
    try:
        body = orjson.dumps(doc)
    except orjson.JSONEncodeError:  # an integer wider than 64 bits: no such JSON text to send
        return
    got = outcome(body, "geojson")
    if isinstance(got, RouteGeometry):
        assert len(got.coords) >= 2 and got.length_m > 0


# --- GPX and KML: documents built from their own vocabulary, with hostile text and attributes -----------------

TAGS = ["gpx", "kml", "trk", "trkseg", "trkpt", "rte", "rtept", "wpt", "name", "desc", "sym", "type", "time",
        "extensions", "metadata", "Document", "Folder", "Placemark", "LineString", "Point", "coordinates",
        "ExtendedData", "Data", "value", "SimpleData", "kind"]  # fmt: skip
texts = st.text(max_size=12) | st.sampled_from(["-62.4,-10.4", "-62.4,-10.4,0 -62.41,-10.41", "1e999", "08:30", "NaN"])
attrs = st.dictionaries(
    st.sampled_from(["lat", "lon", "name", "xmlns"]), texts | st.floats(-70, -5).map(str), max_size=3
)


def _cdata_safe(s: str) -> str:
    return s.replace("&", "&amp;").replace("<", "&lt;")


def _element(tag: str, attr: dict[str, str], children: list[str] | str) -> str:
    a = "".join(f" {k}={quoteattr(v)}" for k, v in attr.items())
    inner = _cdata_safe(children) if isinstance(children, str) else "".join(children)
    return f"<{tag}{a}>{inner}</{tag}>"


xml_trees = st.recursive(
    st.builds(_element, st.sampled_from(TAGS), attrs, texts),
    lambda inner: st.builds(_element, st.sampled_from(TAGS), attrs, st.lists(inner, max_size=4)),
    max_leaves=25,
)
prologs = st.sampled_from(
    [
        "",
        '<?xml version="1.0"?>',
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<?xml version="1.0" encoding="ISO-8859-1"?>',
        '<?xml version="1.0" encoding="shift_jis"?>',
        '<?xml version="1.0" encoding="no-such-encoding"?>',
        '<?xml version="1.0" encoding="UTF-16"?>',
        '<!DOCTYPE gpx [<!ENTITY a "aaaa">]>',
        "\ufeff",
    ]
)


@FUZZ
@given(prologs, st.sampled_from(["gpx", "kml"]), st.lists(xml_trees, max_size=4), st.sampled_from(FORMATS))
def test_gpx_and_kml_like_documents_parse_or_raise_route_file_error(
    prolog: str, root: str, children: list[str], fmt: str
) -> None:
    body = (prolog + _element(root, {}, children)).encode("utf-8", "surrogatepass")
    outcome(body, fmt)


@FUZZ
@given(st.text(max_size=20) | st.none(), st.text(max_size=30) | st.none(), st.binary(max_size=200))
def test_format_detection_names_a_format_or_raises_route_file_error(
    filename: str | None, content_type: str | None, body: bytes
) -> None:
    try:
        assert detect_format(filename, content_type, body) in FORMATS
    except RouteFileError as e:
        assert e.field == "file"


# --- regressions found by the properties above ----------------------------------------------------------------


def test_features_nested_a_thousand_deep_are_refused_not_a_recursion_error() -> None:
    body = b'{"type":"Feature","geometry":' * 1000 + b"{}" + b"}" * 1000
    with pytest.raises(RouteFileError, match="nested too deeply"):
        parse_route_file(body, "geojson")


@pytest.mark.parametrize("encoding", ["no-such-encoding", "shift_jis", "euc-jp"])
@pytest.mark.parametrize("fmt", ["gpx", "kml"])
def test_an_unreadable_xml_encoding_is_a_route_file_error(encoding: str, fmt: str) -> None:
    with pytest.raises(RouteFileError, match="unreadable XML encoding"):
        parse_route_file(f'<?xml version="1.0" encoding="{encoding}"?><{fmt}/>'.encode(), fmt)
