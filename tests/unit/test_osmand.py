"""OsmAnd decoder on Traccar's own test requests and on the shapes the Traccar Client apps send."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from starlette.datastructures import QueryParams

from telemetria.fix import DecodeError, Fix, Rejected
from telemetria.ingest.osmand import FLAT_KEYS, OsmAndRequest, decode_osmand

PAYLOADS = Path(__file__).parents[1] / "payloads" / "osmand"
NOW = datetime(2025, 6, 15, 14, 0, tzinfo=UTC)
FORM = "application/x-www-form-urlencoded"
KNOT_KMH = 1.852
TOL = 1e-9


def payload(name: str) -> bytes:
    return (PAYLOADS / name).read_bytes()


def url_query(line: str) -> QueryParams:
    """What the HTTP layer passes: starlette's multi-valued, already percent-decoded query."""
    return QueryParams(urlsplit(line.strip()).query)


def decode(
    query: Any = None, body: bytes = b"", content_type: str | None = None, method: str = "POST"
) -> OsmAndRequest:
    if isinstance(query, str):
        query = QueryParams(query)
    return decode_osmand(method, query or {}, content_type, body, now=NOW)


def only_fix(request: OsmAndRequest) -> Fix:
    assert len(request.items) == 1
    fix = request.items[0]
    assert isinstance(fix, Fix), fix
    return fix


def only_rejected(request: OsmAndRequest) -> Rejected:
    assert len(request.items) == 1
    item = request.items[0]
    assert isinstance(item, Rejected), item
    return item


def utc(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> datetime:
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


# --- Traccar's OsmAndProtocolDecoderTest, testDecodeQuery -------------------------------------------------

TRACCAR_QUERIES = payload("traccar_queries.txt").decode().splitlines()


def test_traccar_query_without_coordinates_is_a_decode_error() -> None:
    # Traccar accepts it (cell/wifi only) and copies the last known position; we have no last position here.
    with pytest.raises(DecodeError, match="missing lat/lon"):
        decode(url_query(TRACCAR_QUERIES[0]), method="GET")


def test_traccar_query_without_id_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match=r"missing device id \(id or deviceid\)"):
        decode(url_query(TRACCAR_QUERIES[1]), method="GET")


@pytest.mark.parametrize("line", TRACCAR_QUERIES[2:])
def test_every_other_traccar_query_decodes_to_one_fix(line: str) -> None:
    fix = only_fix(decode(url_query(line), method="GET"))
    assert math.isfinite(fix.lat) and math.isfinite(fix.lon)
    assert fix.ts.tzinfo is not None and fix.valid


def test_traccar_query_iso_time_hdop_altitude() -> None:
    request = decode(url_query(TRACCAR_QUERIES[2]))
    fix = only_fix(request)
    assert request.unique_id == "902064"
    assert (fix.lat, fix.lon) == (42.06288, -88.23412)
    assert fix.ts == utc(2016, 1, 27, 18, 55, 47)
    assert (fix.hdop, fix.altitude_m, fix.speed_kmh) == (6.0, 224.0, 0.0)
    assert fix.attributes is None


def test_traccar_query_epoch_milliseconds() -> None:
    fix = only_fix(decode(url_query(TRACCAR_QUERIES[3])))
    assert fix.ts == datetime.fromtimestamp(1442068686.579, tz=UTC)


def test_traccar_query_space_separated_time_is_utc() -> None:
    request = decode(url_query(TRACCAR_QUERIES[4]))
    assert request.unique_id == "353861053849681"
    assert only_fix(request).ts == utc(2014, 6, 4, 9, 10, 11)
    assert only_fix(request).altitude_m == pytest.approx(384.7, abs=TOL)


def test_traccar_query_deviceid_heading_and_unknown_keys() -> None:
    request = decode(url_query(TRACCAR_QUERIES[7]))
    fix = only_fix(request)
    assert request.unique_id == "123456"
    assert fix.ts == NOW  # no timestamp: the server's time, as Traccar does
    assert fix.heading_deg == 0.0
    assert fix.attributes == {"vacc": 0, "hacc": 0}


def test_traccar_query_batt_is_an_attribute() -> None:
    fix = only_fix(decode(url_query(TRACCAR_QUERIES[8])))
    assert fix.attributes == {"batt": 87}
    assert (fix.lat, fix.lon) == (41.666667, -0.883333)


def test_traccar_query_location_pair() -> None:
    fix = only_fix(decode(url_query(TRACCAR_QUERIES[9])))
    assert (fix.lat, fix.lon) == (60.0, 30.0)
    assert fix.ts == utc(2013, 8, 22, 13, 14, 27)


def test_traccar_query_knots_ignition_and_numeric_attributes() -> None:
    fix = only_fix(decode(url_query(TRACCAR_QUERIES[10])))
    assert fix.speed_kmh == pytest.approx(40 * 1.852, abs=TOL)  # 74.08 km/h
    assert fix.heading_deg == pytest.approx(7.19889788244, abs=TOL)
    assert fix.ignition is True
    assert fix.attributes == {"rpm": 933, "fuel": 24}


# --- Traccar's OsmAndProtocolDecoderTest, testDecodeJson (Traccar Client, transistorsoft) ----------------


def test_traccar_json_motionchange() -> None:
    request = decode(body=payload("traccar_json_motionchange.json"), content_type="application/json")
    fix = only_fix(request)
    assert request.unique_id == "48241179"
    assert fix.ts == datetime(2025, 6, 15, 13, 45, 12, 862000, tzinfo=UTC)
    assert (fix.lat, fix.lon) == (37.4219983, -122.084)
    assert (fix.accuracy_m, fix.altitude_m, fix.odometer_m) == (5.0, 5.0, 0.0)
    assert fix.speed_kmh == 0.0
    assert fix.heading_deg is None  # -1: unknown
    assert fix.attributes == {
        "event": "motionchange",
        "motion": False,
        "activity": "still",
        "batt": 100,
        "charge": False,
    }


def test_traccar_json_extras_become_typed_attributes() -> None:
    fix = only_fix(decode(body=payload("traccar_json_extras.json"), content_type="application/json"))
    assert fix.attributes is not None
    extras = {k: v for k, v in fix.attributes.items() if k.startswith("device_")}
    assert extras == {
        "device_string_test": "long_device_id",
        "device_bool_test": True,
        "device_bool_false_test": False,
        "device_integer_test": 1,
        "device_double_test": 1.345,
        "device_very_long_double_test": 1763636.3442,
    }
    assert type(extras["device_integer_test"]) is int


def test_traccar_json_ios_simulator_unknowns() -> None:
    request = decode(body=payload("traccar_json_ios_mock.json"), content_type="application/json")
    fix = only_fix(request)
    assert request.unique_id == "658765"
    assert fix.lat == pytest.approx(37.785834, abs=TOL)
    assert fix.speed_kmh is None and fix.heading_deg is None  # speed -1, heading -1
    assert fix.ts == datetime(2025, 5, 9, 4, 11, 30, 579000, tzinfo=UTC)
    assert fix.attributes is not None
    assert fix.attributes["mock"] is True
    assert "batt" not in fix.attributes  # battery level -1: unknown


def test_traccar_json_moving_converts_mps() -> None:
    fix = only_fix(decode(body=payload("traccar_json_moving.json"), content_type="application/json"))
    assert fix.speed_kmh == pytest.approx(18.67 * 3.6, abs=TOL)  # 67.212 km/h
    assert fix.heading_deg == 63.0
    assert (fix.accuracy_m, fix.altitude_m) == (3.8, 35.7)
    assert fix.attributes is not None and fix.attributes["batt"] == 79


@pytest.mark.parametrize("content_type", [None, "text/plain", FORM, "application/json; charset=utf-8"])
def test_json_body_is_sniffed_whatever_the_content_type(content_type: str | None) -> None:
    # Traccar Client's "_" key exists for servers that read this body as a form; we read it as JSON.
    fix = only_fix(decode(body=payload("traccar_json_moving.json"), content_type=content_type))
    assert fix.speed_kmh == pytest.approx(67.212, abs=1e-9)
    assert "_" not in (fix.attributes or {})


# --- The sources the Traccar Client apps use ---------------------------------------------------------------

ANDROID_LINE = payload("client_android_query.txt").decode()


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_android_query_get_or_post_with_empty_body(method: str) -> None:
    request = decode(url_query(ANDROID_LINE), method=method)
    fix = only_fix(request)
    assert request.unique_id == "4821"
    assert fix.ts == datetime.fromtimestamp(1718459112, tz=UTC)
    assert (fix.lat, fix.lon) == (-10.4394, -62.4664)
    assert fix.speed_kmh == pytest.approx(21.59827 * KNOT_KMH, abs=TOL)
    assert fix.speed_kmh == pytest.approx(40.0, abs=1e-3)  # the client sent 11.1111 m/s as knots
    assert (fix.heading_deg, fix.altitude_m, fix.accuracy_m) == (87.5, 152.0, 12.0)
    assert fix.attributes == {"batt": 76.0}


def test_ios_query() -> None:
    fix = only_fix(decode(url_query(payload("client_ios_query.txt").decode())))
    assert fix.speed_kmh == pytest.approx(20.0, abs=1e-3)
    assert (fix.heading_deg, fix.accuracy_m) == (181.0, None)


def test_form_body() -> None:
    request = decode(body=payload("client_android_form.txt"), content_type=FORM)
    fix = only_fix(request)
    assert request.unique_id == "4821"
    assert fix.speed_kmh == pytest.approx(40.0, abs=1e-3)
    assert fix.attributes == {"batt": 76.0, "charge": True}
    from_url = only_fix(decode(url_query(ANDROID_LINE)))
    from_url.attributes = fix.attributes
    assert fix == from_url  # the same fix whether the fields come in the URL or in the body


@pytest.mark.parametrize("content_type", ["application/json", None, "text/plain"])
def test_form_body_with_a_wrong_or_missing_content_type(content_type: str | None) -> None:
    fix = only_fix(decode(body=payload("client_android_form.txt"), content_type=content_type))
    assert (fix.lat, fix.lon) == (-10.4394, -62.4664)


def test_id_in_url_and_fix_in_form_body_are_merged() -> None:
    body = b"lat=-10.5&lon=-62.5&timestamp=1718459112"
    request = decode({"id": "77"}, body=body, content_type=FORM)
    assert request.unique_id == "77"
    assert (only_fix(request).lat, only_fix(request).lon) == (-10.5, -62.5)


def test_url_wins_over_form_body_on_conflict() -> None:
    request = decode({"id": "77", "lat": "1", "lon": "2"}, body=b"id=88&lat=3&lon=4", content_type=FORM)
    assert request.unique_id == "77"
    assert only_fix(request).lat == 1.0


def test_json_body_with_id_only_in_the_url() -> None:
    body = json.loads(payload("traccar_json_moving.json"))
    del body["device_id"]
    request = decode({"id": "4821"}, body=json.dumps(body).encode(), content_type="application/json")
    assert request.unique_id == "4821"


def test_flat_json_object() -> None:
    body = b'{"id": 4821, "lat": -10.4, "lon": "-62.4", "speed": 10, "ignition": 1, "note": "ok"}'
    request = decode(body=body, content_type="application/json")
    fix = only_fix(request)
    assert request.unique_id == "4821"
    assert fix.speed_kmh == pytest.approx(18.52, abs=TOL)
    assert (fix.lon, fix.ignition, fix.attributes) == (-62.4, True, {"note": "ok"})


def test_first_value_wins_in_a_multi_valued_query() -> None:
    request = decode("id=1&id=2&lat=10&lat=20&lon=30&lon=40&cell=a&cell=b")
    fix = only_fix(request)
    assert request.unique_id == "1"
    assert (fix.lat, fix.lon) == (10.0, 30.0)
    assert fix.attributes == {"cell": "a"}


def test_empty_values_are_absent() -> None:
    request = decode("id=&deviceid=5&lat=1&lon=2&speed=&bearing=")
    fix = only_fix(request)
    assert request.unique_id == "5"
    assert (fix.speed_kmh, fix.heading_deg) == (None, None)


# --- Batches: the uploadJson array and transistorsoft batchSync ------------------------------------------


def test_upload_json_array_is_one_batch() -> None:
    request = decode(body=payload("client_upload_json_array.json"), content_type="application/json")
    assert request.unique_id == "4821"
    assert all(isinstance(item, Fix) for item in request.items)
    fixes = [item for item in request.items if isinstance(item, Fix)]
    assert [f.ts for f in fixes] == [datetime.fromtimestamp(t, tz=UTC) for t in (1718459112, 1718459122, 1718459132)]
    assert [f.speed_kmh for f in fixes] == pytest.approx([18.52, 23.15, 0.0], abs=TOL)
    assert fixes[1].attributes == {"batt": 76, "charge": False}


def test_malformed_element_is_rejected_and_the_others_decoded() -> None:
    items = json.loads(payload("client_upload_json_array.json"))
    items[1]["lat"] = "abc"
    request = decode(body=json.dumps(items).encode(), content_type="application/json")
    assert [type(item) for item in request.items] == [Fix, Rejected, Fix]
    rejected = request.items[1]
    assert isinstance(rejected, Rejected) and rejected.index == 1
    assert rejected.error.startswith("lat:")


@pytest.mark.parametrize(
    ("element", "error"),
    [
        ({"id": "4821", "timestamp": 1718459122, "speed": 1}, "missing lat/lon"),
        ({"lat": 1, "lon": 2}, "timestamp: required"),
        ({"id": "9999", "lat": 1, "lon": 2, "timestamp": 1718459122}, "id:"),
        ("not an object", "item: expected a JSON object"),
        ({"lat": 1, "lon": 2, "timestamp": 1718459122, "speed": float("nan")}, "speed:"),
        ({"lat": 1, "lon": 2, "timestamp": "yesterday"}, "timestamp:"),
    ],
)
def test_one_bad_element_of_a_batch(element: Any, error: str) -> None:
    items = json.loads(payload("client_upload_json_array.json"))
    items[1] = element
    request = decode(body=json.dumps(items).encode())  # json.dumps writes NaN, as some devices do
    assert [type(item) for item in request.items] == [Fix, Rejected, Fix]
    rejected = request.items[1]
    assert isinstance(rejected, Rejected) and rejected.index == 1
    assert rejected.error.startswith(error)


def test_batch_without_any_coordinates_is_a_decode_error() -> None:
    body = b'[{"id": "1", "timestamp": 1}, {"id": "1", "timestamp": 2}]'
    with pytest.raises(DecodeError, match="missing lat/lon"):
        decode(body=body)


def test_empty_array_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="missing lat/lon"):
        decode({"id": "1"}, body=b"[]")


def test_single_element_array_without_timestamp_uses_now() -> None:
    request = decode(body=b'[{"id": "1", "lat": 1, "lon": 2}]')
    assert only_fix(request).ts == NOW


def test_transistorsoft_batch_sync() -> None:
    request = decode(body=payload("client_json_batch_sync.json"), content_type="application/json")
    assert request.unique_id == "4821"
    first, second = request.items
    assert isinstance(first, Fix) and isinstance(second, Fix)
    assert first.ts == utc(2024, 6, 15, 13, 45, 12) and second.ts == utc(2024, 6, 15, 13, 45, 22)
    assert first.speed_kmh == pytest.approx(11.1 * 3.6, abs=TOL)
    assert first.odometer_m == 12345.6
    assert first.attributes == {"motion": True, "activity": "in_vehicle", "batt": 57, "charge": True}


def test_transistorsoft_extras_ignition_and_driver() -> None:
    body = json.loads(payload("traccar_json_moving.json"))
    body["location"]["extras"] = {"ignition": "true", "driverUniqueId": 42, "heartbeat": True}
    fix = only_fix(decode(body=json.dumps(body).encode()))
    assert (fix.ignition, fix.driver_id) == (True, "42")
    assert fix.attributes is not None and fix.attributes["heartbeat"] is True


# --- Timestamps ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "1718459112",
        "1718459112000",
        "2024-06-15T13:45:12Z",
        "2024-06-15T13:45:12",  # no offset: UTC for OsmAnd
        "2024-06-15T10:45:12-03:00",
        "2024-06-15 13:45:12",
        "2024-06-15T13:45:12.000+00:00",
    ],
)
def test_timestamp_forms(value: str) -> None:
    fix = only_fix(decode({"id": "1", "lat": "1", "lon": "2", "timestamp": value}))
    assert fix.ts == utc(2024, 6, 15, 13, 45, 12)


@pytest.mark.parametrize("value", [1718459112, 1718459112000, 1718459112.0])
def test_json_epoch_numbers(value: float) -> None:
    body = json.dumps([{"id": "1", "lat": 1, "lon": 2, "timestamp": value}]).encode()
    assert only_fix(decode(body=body)).ts == utc(2024, 6, 15, 13, 45, 12)


@pytest.mark.parametrize("value", ["yesterday", "0001-01-01T00:00:00+05:00", "9" * 400, "nan", "-5"])
def test_bad_timestamp_rejects_the_fix(value: str) -> None:
    rejected = only_rejected(decode({"id": "1", "lat": "1", "lon": "2", "timestamp": value}))
    assert rejected.index == 0 and rejected.error.startswith("timestamp:")


# --- Fields, units and malformed values ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("lat", "abc"),
        ("lon", "12,5"),
        ("speed", "fast"),
        ("bearing", "NaN"),
        ("altitude", "inf"),
        ("lat", "1e999"),
        ("accuracy", "1_0"),
        ("hdop", "0x10"),
        ("sat", "7.5"),
        ("ignition", "maybe"),
        ("odometer", "١٢"),
        ("location", "1,2,3"),
    ],
)
def test_malformed_value_rejects_the_fix_without_raising(key: str, value: str) -> None:
    query = {"id": "1", "lat": "1", "lon": "2", key: value}
    if key == "location":
        del query["lat"], query["lon"]
    rejected = only_rejected(decode(query))
    assert rejected.index == 0
    assert rejected.error.startswith(f"{key}:"), rejected.error


@pytest.mark.parametrize(("bearing", "expected"), [("360", 0.0), ("725", 5.0), ("-90", 270.0), ("-1", None)])
def test_heading_is_normalized(bearing: str, expected: float | None) -> None:
    fix = only_fix(decode({"id": "1", "lat": "1", "lon": "2", "bearing": bearing}))
    assert fix.heading_deg == expected


@pytest.mark.parametrize(("speed", "expected"), [("-1", None), ("0", 0.0), ("1", 1.852), (" 10 ", 18.52)])
def test_query_speed_is_knots(speed: str, expected: float | None) -> None:
    fix = only_fix(decode({"id": "1", "lat": "1", "lon": "2", "speed": speed}))
    assert fix.speed_kmh == (None if expected is None else pytest.approx(expected, abs=TOL))


@pytest.mark.parametrize(
    ("value", "expected"), [("true", True), ("1", True), ("TRUE", True), ("false", False), ("0", False)]
)
def test_valid_flag(value: str, expected: bool) -> None:
    assert only_fix(decode({"id": "1", "lat": "1", "lon": "2", "valid": value})).valid is expected


def test_valid_defaults_to_true() -> None:
    assert only_fix(decode({"id": "1", "lat": "1", "lon": "2"})).valid is True


@pytest.mark.parametrize(("value", "expected"), [("true", True), ("1", True), ("false", False), ("0", False)])
def test_ignition(value: str, expected: bool) -> None:
    assert only_fix(decode({"id": "1", "lat": "1", "lon": "2", "ignition": value})).ignition is expected


def test_named_fields() -> None:
    query = "id=1&lat=1&lon=2&driverUniqueId=0042&odometer=1234.5&satellites=9&hdop=0.9&accuracy=-1"
    fix = only_fix(decode(query))
    assert (fix.driver_id, fix.odometer_m, fix.satellites, fix.hdop) == ("0042", 1234.5, 9, 0.9)
    assert fix.accuracy_m is None  # -1: unknown
    assert only_fix(decode("id=1&lat=1&lon=2&sat=7")).satellites == 7


def test_unknown_keys_are_typed_attributes() -> None:
    query = "id=1&lat=1&lon=2&charge=true&fuel=24.5&note=hello&code=007&big=123456789012345678901234&neg=-3"
    fix = only_fix(decode(query + "&battery=55&mock=false&rate=1e3&weird=NaN"))
    assert fix.attributes == {
        "batt": 55,
        "charge": True,
        "fuel": 24.5,
        "note": "hello",
        "code": "007",  # leading zeros: an identifier, kept as text
        "big": "123456789012345678901234",  # wider than int64: kept as text
        "neg": -3,
        "mock": False,
        "rate": 1000.0,
        "weird": "NaN",
    }


# --- Whole-request errors -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "body", "content_type"),
    [
        ({"lat": "1", "lon": "2"}, b"", None),
        ({}, b"lat=1&lon=2", FORM),
        ({}, b'{"location": {"coords": {"latitude": 1, "longitude": 2}}}', "application/json"),
        ({}, b'[{"lat": 1, "lon": 2}]', "application/json"),
        ({"id": "   "}, b"", None),
    ],
)
def test_missing_device_id(query: dict[str, str], body: bytes, content_type: str | None) -> None:
    with pytest.raises(DecodeError, match=r"missing device id \(id or deviceid\)"):
        decode(query, body=body, content_type=content_type)


@pytest.mark.parametrize(
    ("query", "body"),
    [
        ({"id": "1"}, b""),
        ({"id": "1", "lat": "1"}, b""),
        ({"id": "1"}, b"timestamp=1718459112"),
        ({}, b'{"device_id": "1", "location": {"timestamp": "2024-06-15T13:45:12Z"}}'),
        ({}, b'{"device_id": "1", "location": []}'),
    ],
)
def test_missing_coordinates(query: dict[str, str], body: bytes) -> None:
    with pytest.raises(DecodeError, match="missing lat/lon"):
        decode(query, body=body)


@pytest.mark.parametrize(
    ("body", "content_type"),
    [
        (b"{not json", None),
        (b'{"id": "1", "lat": 1, "lon": 2', "application/json"),
        (b"hello", "application/json"),
        (b'{"id": "\xff"}', "application/json"),
        (b"[" * 100_000, None),
    ],
)
def test_unparseable_body(body: bytes, content_type: str | None) -> None:
    with pytest.raises(DecodeError, match="body is not valid JSON"):
        decode({"id": "1"}, body=body, content_type=content_type)


# --- Properties -------------------------------------------------------------------------------------------

VALUES = st.one_of(
    st.text(max_size=30),
    st.integers().map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(str),
    st.sampled_from(["-1", "1e999", "0x1p3", "true", "0", "60.0,30.0", "0001-01-01T00:00:00+05:00", " "]),
)
KEYS = st.one_of(st.sampled_from(sorted(FLAT_KEYS)), st.text(max_size=10))
JSON_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(max_size=20), VALUES)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS | st.sampled_from(["coords"]), inner),
    max_leaves=20,
)
LOCATION = st.fixed_dictionaries(
    {},
    optional={
        "timestamp": JSON_SCALARS,
        "coords": st.dictionaries(
            st.sampled_from(["latitude", "longitude", "speed", "heading", "accuracy", "altitude"]), JSON_SCALARS
        ),
        "battery": st.dictionaries(st.sampled_from(["level", "is_charging"]), JSON_SCALARS),
        "extras": st.dictionaries(KEYS, JSON_SCALARS),
        "odometer": JSON_SCALARS,
        "is_moving": JSON_SCALARS,
    },
)
CONTENT_TYPES = st.one_of(st.none(), st.sampled_from(["application/json", FORM, "text/plain"]), st.text(max_size=20))
QUERIES = st.dictionaries(KEYS, VALUES, max_size=8)


def _bodies() -> st.SearchStrategy[bytes]:
    flat = st.dictionaries(KEYS, JSON_SCALARS, max_size=8)
    transistorsoft = st.fixed_dictionaries({"device_id": JSON_SCALARS, "location": LOCATION | st.lists(LOCATION)})
    as_json = st.one_of(JSON_VALUES, flat, st.lists(flat, max_size=4), transistorsoft)
    return st.one_of(
        st.binary(max_size=200),
        as_json.map(lambda v: json.dumps(v).encode()),
        QUERIES.map(lambda q: urlencode(q).encode()),
    )


def _check(request: OsmAndRequest) -> None:
    assert request.unique_id and request.unique_id == request.unique_id.strip()
    assert request.items
    for index, item in enumerate(request.items):
        if isinstance(item, Rejected):
            assert item.index == index and item.error
            continue
        assert isinstance(item, Fix) and item.ts.tzinfo is not None
        numbers = (item.lat, item.lon, item.speed_kmh, item.altitude_m, item.accuracy_m, item.hdop)
        assert all(n is None or math.isfinite(n) for n in numbers)
        assert item.heading_deg is None or 0.0 <= item.heading_deg < 360.0
        assert item.speed_kmh is None or item.speed_kmh >= 0


@settings(max_examples=400, deadline=None)
@given(method=st.sampled_from(["GET", "POST"]), query=QUERIES, content_type=CONTENT_TYPES, body=_bodies())
def test_any_request_decodes_or_raises_decode_error(
    method: str, query: dict[str, str], content_type: str | None, body: bytes
) -> None:
    try:
        request = decode_osmand(method, query, content_type, body, now=NOW)
    except DecodeError:
        return
    _check(request)


@settings(max_examples=300, deadline=None)
@given(query=QUERIES, lat=VALUES, lon=VALUES)
def test_any_query_with_id_and_coordinates_gives_one_item(query: dict[str, str], lat: str, lon: str) -> None:
    query = {**query, "id": "7", "lat": lat, "lon": lon}
    try:
        request = decode_osmand("GET", query, None, b"", now=NOW)
    except DecodeError as error:
        assert "missing lat/lon" in str(error)  # only when lat or lon is blank
        assert not lat.strip() or not lon.strip()
        return
    assert len(request.items) == 1
    _check(request)
