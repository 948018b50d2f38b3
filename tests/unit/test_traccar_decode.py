"""Traccar's forwarded bodies (captured shapes, tests/payloads/traccar) to fixes: units, dates, attributes."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import parse_qsl

import orjson
import pytest

from telemetria.fix import DecodeError
from telemetria.ingest.fields import MAX_ATTRIBUTES, attributes_problem
from telemetria.traccar.decode import decode_json, decode_url

PAYLOADS = Path(__file__).parents[1] / "payloads" / "traccar"


def payload(name: str) -> bytes:
    return (PAYLOADS / name).read_bytes()


def test_v6_body_knots_to_kmh_and_fields_from_attributes() -> None:
    f = decode_json(payload("v6_json_gt06.json"))
    assert f.unique_id == "860000000000001"
    fix = f.fix
    assert fix.ts == datetime(2024, 3, 5, 11, 2, tzinfo=UTC)  # fixTime, not deviceTime or serverTime
    assert fix.speed_kmh == pytest.approx(21.598272 * 1.852)
    assert fix.speed_kmh == pytest.approx(40.0, abs=0.001)
    assert (fix.lat, fix.lon, fix.heading_deg) == (-10.442415, -62.469783, 87.0)
    assert fix.ignition is True and fix.satellites == 9 and fix.hdop == 0.9
    assert fix.odometer_m == 152340  # the device's odometer first; totalDistance stays an attribute
    assert fix.driver_id == "0012AB34CD"
    assert fix.valid is True
    assert fix.accuracy_m is None  # Traccar's 0.0 is "not known"
    assert fix.attributes is not None
    assert fix.attributes["alarm"] == "sos" and fix.attributes["protocol"] == "gt06"
    assert fix.attributes["totalDistance"] == 4532101.19
    assert not {"ignition", "sat", "driverUniqueId", "odometer", "hdop"} & set(fix.attributes)


def test_v4_body_with_colonless_offset_and_invalid_fix() -> None:
    f = decode_json(payload("v4_10_json_suntech.json"))
    assert f.fix.ts == datetime(2020, 2, 10, 14, 30, tzinfo=UTC)  # "+0000", Jackson <= 2.10
    assert f.fix.valid is False  # kept, marked; reports leave it out of km (reports/analysis/clean.py)
    assert f.fix.odometer_m == 10321.5  # no device odometer: Traccar's totalDistance
    assert f.fix.speed_kmh == 0.0 and f.fix.ignition is False


@pytest.mark.parametrize(
    "stamp",
    ["2024-03-05T11:02:00.000+00:00", "2024-03-05T11:02:00.000+0000", "2024-03-05T07:02:00.000-0400",
     "2024-03-05T11:02:00Z", 1709636520000],
)  # fmt: skip
def test_every_versions_date_format_is_the_same_instant(stamp: object) -> None:
    doc = orjson.loads(payload("v6_json_gt06.json"))
    doc["position"]["fixTime"] = stamp
    assert decode_json(orjson.dumps(doc)).fix.ts == datetime(2024, 3, 5, 11, 2, tzinfo=UTC)


def test_many_io_attributes_are_trimmed_not_the_fix() -> None:
    fix = decode_json(payload("v5_json_teltonika_many_io.json")).fix
    assert fix.attributes is not None
    assert len(fix.attributes) <= MAX_ATTRIBUTES
    assert attributes_problem(fix.attributes) is None  # validate would take it
    assert fix.attributes["power"] == 27.812 and fix.attributes["protocol"] == "teltonika"  # priority kept
    assert fix.odometer_m == 91234567 and fix.speed_kmh == pytest.approx(54.0, abs=0.001)


def test_url_mode_from_the_forwarders_own_format() -> None:
    line = next(x for x in (PAYLOADS / "url_mode.txt").read_text().splitlines() if x and not x.startswith("#"))
    f = decode_url(dict(parse_qsl(line)))
    assert f.unique_id == "860000000000001"
    assert f.fix.ts == datetime(2024, 3, 5, 11, 2, tzinfo=UTC)  # {fixTime}: epoch ms
    assert f.fix.speed_kmh == pytest.approx(40.0, abs=0.001)
    assert f.fix.ignition is True and f.fix.driver_id == "0012AB34CD" and f.fix.odometer_m == 152340


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        (lambda d: d.pop("device"), "device.uniqueId"),
        (lambda d: d["device"].update(uniqueId=""), "device.uniqueId"),
        (lambda d: d["position"].pop("fixTime"), "position.fixTime"),
        (lambda d: d["position"].update(fixTime="yesterday"), "position.fixTime"),
        (lambda d: d["position"].update(latitude=None), "position.latitude"),
        (lambda d: d["position"].update(speed="fast"), "position.speed"),
        (lambda d: d["position"].update(attributes=[1]), "position.attributes"),
        (lambda d: d["position"]["attributes"].update(ignition="maybe"), "attributes.ignition"),
        (lambda d: d.pop("position"), "position"),
    ],
)
def test_a_bad_body_names_its_field(mutate, field: str) -> None:
    doc = orjson.loads(payload("v6_json_gt06.json"))
    mutate(doc)
    with pytest.raises(DecodeError) as e:
        decode_json(orjson.dumps(doc))
    assert str(e.value).startswith(field + ":")


def test_not_json_is_named() -> None:
    with pytest.raises(DecodeError, match=r"^body:"):
        decode_json(b"uniqueId=1")
