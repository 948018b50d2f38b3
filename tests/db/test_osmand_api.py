"""The OsmAnd endpoint end to end on the real database: each client variant, units, answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import httpx
import orjson
import pytest

from telemetria.app import create_app
from tests.db.conftest import Tracker

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=2)
EPOCH = int(T0.timestamp())


async def stored(conn) -> list[dict]:
    return [dict(r) for r in await conn.fetch("SELECT * FROM fixes ORDER BY ts")]


async def test_query_string_get_converts_knots(client: httpx.AsyncClient, tracker: Tracker, conn) -> None:
    params = {
        "id": tracker.unique_id,
        "lat": "-10.43",
        "lon": "-62.47",
        "timestamp": str(EPOCH),
        "speed": "10",
        "bearing": "90",
        "altitude": "150",
        "accuracy": "5",
        "batt": "80",
    }
    r = await client.get("/osmand", params=params)
    assert r.status_code == 200, r.text
    [row] = await stored(conn)
    assert row["vehicle_id"] == tracker.vehicle_id
    assert row["ts"] == T0
    assert row["speed_kmh"] == pytest.approx(18.52, abs=0.01)
    assert row["heading_deg"] == 90 and row["altitude_m"] == 150 and row["accuracy_m"] == 5
    assert row["attributes"]["batt"] == 80


async def test_older_clients_post_the_query_with_empty_body(client, tracker, conn) -> None:
    q = f"id={tracker.unique_id}&lat=-10.43&lon=-62.47&timestamp={EPOCH * 1000}&speed=0"
    r = await client.post(f"/osmand?{q}", content=b"")
    assert r.status_code == 200
    assert (await stored(conn))[0]["ts"] == T0


async def test_form_post_of_current_sdk(client, tracker, conn) -> None:
    form = {
        "id": tracker.unique_id,
        "lat": "-10.43",
        "lon": "-62.47",
        "timestamp": str(EPOCH),
        "speed": "20",
        "bearing": "180",
        "charge": "true",
        "batt": "55.5",
    }
    r = await client.post("/osmand", data=form)
    assert r.status_code == 200
    [row] = await stored(conn)
    assert row["speed_kmh"] == pytest.approx(37.04, abs=0.01)


async def test_json_body_of_current_traccar_client(client, tracker, conn) -> None:
    body = {
        "device_id": tracker.unique_id,
        "location": {
            "timestamp": T0.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            "coords": {
                "latitude": -10.43,
                "longitude": -62.47,
                "speed": 10.0,
                "heading": -1,
                "altitude": 150,
                "accuracy": 4,
            },
            "is_moving": True,
            "odometer": 1234.5,
            "battery": {"level": 0.8, "is_charging": False},
        },
    }
    r = await client.post("/osmand", content=orjson.dumps(body), headers={"Content-Type": "application/json"})
    assert r.status_code == 200, r.text
    [row] = await stored(conn)
    assert row["speed_kmh"] == pytest.approx(36.0)
    assert row["heading_deg"] is None
    assert row["ts"] == T0


async def test_upload_json_array_is_one_batch(client, tracker, conn) -> None:
    items = [
        {"id": tracker.unique_id, "lat": -10.43 + i * 0.001, "lon": -62.47, "timestamp": EPOCH + 30 * i, "speed": 5}
        for i in range(5)
    ]
    r = await client.post("/osmand", content=orjson.dumps(items), headers={"Content-Type": "application/json"})
    assert r.status_code == 200
    assert len(await stored(conn)) == 5
    # Re-sent: stored once.
    await client.post("/osmand", content=orjson.dumps(items), headers={"Content-Type": "application/json"})
    assert len(await stored(conn)) == 5


async def test_unknown_device_is_refused_and_nothing_stored(client, tracker, conn) -> None:
    r = await client.get("/osmand", params={"id": "nobody", "lat": "-10.4", "lon": "-62.4"})
    assert r.status_code == 403
    assert await stored(conn) == []


@pytest.mark.parametrize("params", [{"lat": "-10.4", "lon": "-62.4"}, {"id": "x"}, {}])
async def test_undecodable_requests_are_400(client, tracker, conn, params) -> None:
    r = await client.get("/osmand", params=params)
    assert r.status_code == 400
    assert r.json()["detail"]


@pytest.mark.parametrize(
    "bad",
    [{"lat": "91"}, {"lat": "abc"}, {"speed": "nan"}, {"timestamp": str(EPOCH + 3 * 3600)}, {"lat": "0", "lon": "0"}],
)
async def test_invalid_position_is_200_and_not_stored(client, tracker, conn, bad) -> None:
    params = {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "timestamp": str(EPOCH)}
    params.update(bad)
    r = await client.get("/osmand", params=params)
    assert r.status_code == 200
    assert await stored(conn) == []


async def test_an_attribute_the_database_cannot_hold_is_dropped_not_the_position(client, tracker, conn) -> None:
    # U+0000 cannot be stored in jsonb: the attribute goes, the position is kept and the client gets 200.
    params = {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "timestamp": str(EPOCH), "note": "a\x00b"}
    r = await client.get("/osmand", params={**params, "batt": "80"})
    assert r.status_code == 200
    [row] = await stored(conn)
    assert row["attributes"] == {"batt": 80}


async def test_osmand_holds_the_driver_id_to_the_json_apis_limit(client, tracker, conn) -> None:
    """One set of limits on every path: a driver id the JSON API refuses is not stored from OsmAnd either."""
    params = {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "timestamp": str(EPOCH)}
    r = await client.get("/osmand", params={**params, "driverUniqueId": "9" * 5000})
    assert r.status_code == 200  # rejected positions are answered 200 (see above), and not stored
    assert await stored(conn) == []
    r = await client.post(
        "/api/v1/fixes", json={"ts": T0.isoformat(), "lat": -10.43, "lon": -62.47, "driver_id": "9" * 5000},
        headers=tracker.auth,
    )  # fmt: skip
    assert r.status_code == 422 and "driver_id" in r.json()["detail"]
    r = await client.get("/osmand", params={**params, "driverUniqueId": "9" * 64})
    assert r.status_code == 200
    assert [row["driver_id"] for row in await stored(conn)] == ["9" * 64]


@pytest.mark.parametrize(("zone", "offset_h"), [(None, 0), ("UTC", 0), ("America/Porto_Velho", 4)])
async def test_a_time_without_offset_is_read_in_the_configured_zone(test_db, tracker, conn, zone, offset_h) -> None:
    """TELEMETRIA_OSMAND_TIMEZONE (default UTC) says what zone an OsmAnd `timestamp` without an offset is in."""
    overrides = {"rollup_interval_s": 0} | ({"osmand_timezone": zone} if zone else {})
    app = create_app(test_db.settings(**overrides))
    naive = (T0 - timedelta(hours=offset_h)).replace(tzinfo=None).isoformat(sep=" ")
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            params = {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "timestamp": naive}
            r = await c.get("/osmand", params=params)
    assert r.status_code == 200
    assert [row["ts"] for row in await stored(conn)] == [T0]


async def test_an_osmand_number_that_cannot_be_stored_exactly_is_kept_as_its_text(client, tracker, conn) -> None:
    """OsmAnd never loses a position over an odd extra: a number past ±(2^53 − 1) is stored as the text sent."""
    params = {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "timestamp": str(EPOCH)}
    r = await client.get("/osmand", params={**params, "iccid": str(2**53 + 1), "n": str(2**53 - 1), "e": "1e20"})
    assert r.status_code == 200
    position = f'"id": "{tracker.unique_id}", "lat": -10.43, "lon": -62.47, "timestamp": {EPOCH + 1}'
    body = f'{{{position}, "iccid": {2**64 + 1}, "n": {-(2**53 - 1)}}}'
    r = await client.post("/osmand", content=body, headers={"Content-Type": "application/json"})
    assert r.status_code == 200
    rows = await stored(conn)
    assert [row["attributes"] for row in rows] == [
        {"iccid": str(2**53 + 1), "n": 2**53 - 1, "e": "1e20"},
        {"iccid": str(2**64 + 1), "n": -(2**53 - 1)},
    ]


async def test_osmand_attributes_over_the_bound_reject_their_position(client, tracker, conn) -> None:
    params = {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "timestamp": str(EPOCH)}
    r = await client.post("/osmand", data={**params, "note": "x" * 5000})
    assert r.status_code == 200  # answered 200 and logged, like every position that fails validation
    assert await stored(conn) == []
