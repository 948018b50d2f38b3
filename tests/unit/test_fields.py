"""One set of limits on a fix's free fields for every ingest path: the JSON API and OsmAnd refuse the same values
with the same reason, because both decoders hand their fixes to the same checks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlencode
from zoneinfo import ZoneInfo

import pytest

from telemetria.fix import DecodeError, Fix, Rejected
from telemetria.ingest.decode import decode_items
from telemetria.ingest.fields import MAX_DEVICE_ID, MAX_DRIVER_ID
from telemetria.ingest.osmand import decode_osmand
from telemetria.ingest.validate import Limits, validate

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
TS = NOW - timedelta(minutes=1)


def by_json(driver: Any) -> Fix | Rejected:
    items = decode_items([{"ts": TS.isoformat(), "lat": -10.43, "lon": -62.47, "driver_id": driver}])
    _, ok, bad = validate(items, NOW, Limits())
    return ok[0] if ok else bad[0]


def by_osmand(driver: str) -> Fix | Rejected:
    query = {"id": "4821", "lat": "-10.43", "lon": "-62.47", "timestamp": str(int(TS.timestamp()))}
    request = decode_osmand("GET", {**query, "driverUniqueId": driver}, None, b"", now=NOW)
    _, ok, bad = validate(request.items, NOW, Limits())
    return ok[0] if ok else bad[0]


@pytest.mark.parametrize(
    ("driver", "words"),
    [
        ("9" * (MAX_DRIVER_ID + 1), f"driver_id: {MAX_DRIVER_ID + 1} characters, at most {MAX_DRIVER_ID}"),
        ("9" * 5000, f"driver_id: 5000 characters, at most {MAX_DRIVER_ID}"),
        ("🚌" * (MAX_DRIVER_ID + 1), "at most 64"),
        ("AB\x00CD", "driver_id: contains a NUL character"),
        ("\ud800", "driver_id: contains invalid Unicode"),
    ],
)
def test_both_paths_refuse_the_same_driver_id_with_the_same_reason(driver: str, words: str) -> None:
    json_item, osmand_item = by_json(driver), by_osmand(driver)
    assert isinstance(json_item, Rejected) and isinstance(osmand_item, Rejected)
    assert json_item.error == osmand_item.error
    assert words in json_item.error


def test_both_paths_take_a_driver_id_at_the_limit() -> None:
    driver = "7" * MAX_DRIVER_ID
    json_fix, osmand_fix = by_json(driver), by_osmand(driver)
    assert isinstance(json_fix, Fix) and isinstance(osmand_fix, Fix)
    assert json_fix.driver_id == osmand_fix.driver_id == driver


def test_an_osmand_device_id_longer_than_the_registry_takes_is_refused() -> None:
    with pytest.raises(DecodeError, match=f"device id: {MAX_DEVICE_ID + 1} characters, at most {MAX_DEVICE_ID}"):
        decode_osmand("GET", {"id": "9" * (MAX_DEVICE_ID + 1), "lat": "1", "lon": "2"}, None, b"", now=NOW)


# --- a time without an offset ---------------------------------------------------------------------------------

NAIVE = "2026-11-30 10:00:00"


@pytest.mark.parametrize(
    ("zone", "utc_hour"), [(UTC, 10), (ZoneInfo("America/Porto_Velho"), 14), (ZoneInfo("Asia/Tokyo"), 1)]
)
@pytest.mark.parametrize("how", ["query", "form", "json", "transistorsoft"])
def test_osmand_reads_a_time_without_offset_in_the_configured_zone(zone: Any, utc_hour: int, how: str) -> None:
    fields = {"id": "4821", "lat": "-10.43", "lon": "-62.47", "timestamp": NAIVE}
    if how == "query":
        request = decode_osmand("GET", fields, None, b"", now=NOW, naive_tz=zone)
    elif how == "form":
        body = urlencode(fields).encode()
        request = decode_osmand("POST", {}, "application/x-www-form-urlencoded", body, now=NOW, naive_tz=zone)
    elif how == "json":
        body = b'{"id": "4821", "lat": -10.43, "lon": -62.47, "timestamp": "2026-11-30T10:00:00"}'
        request = decode_osmand("POST", {}, "application/json", body, now=NOW, naive_tz=zone)
    else:
        body = b'{"device_id": "4821", "location": {"timestamp": "2026-11-30T10:00:00", "coords": '
        body += b'{"latitude": -10.43, "longitude": -62.47}}}'
        request = decode_osmand("POST", {}, "application/json", body, now=NOW, naive_tz=zone)
    [fix] = request.items
    assert isinstance(fix, Fix)
    assert fix.ts == datetime(2026, 11, 30, utc_hour, 0, tzinfo=UTC)


def test_osmand_times_with_an_offset_or_epoch_ignore_the_zone() -> None:
    zone = ZoneInfo("America/Porto_Velho")
    for stamp in (
        "2026-11-30T10:00:00Z",
        "2026-11-30T06:00:00-04:00",
        str(int(datetime(2026, 11, 30, 10, tzinfo=UTC).timestamp())),
    ):
        request = decode_osmand(
            "GET", {"id": "1", "lat": "1", "lon": "2", "timestamp": stamp}, None, b"", now=NOW, naive_tz=zone
        )
        assert request.items[0] == Fix(datetime(2026, 11, 30, 10, tzinfo=UTC), 1.0, 2.0)


def test_our_json_api_still_refuses_a_time_without_offset() -> None:
    [item] = decode_items([{"ts": "2026-11-30T10:00:00", "lat": -10.43, "lon": -62.47}])
    assert isinstance(item, Rejected) and "has no UTC offset" in item.error
