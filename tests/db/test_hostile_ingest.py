"""Hostile input to both ingest endpoints on the real database: refused with a 4xx (OsmAnd: see below), never a
5xx, and nothing invalid stored; in a batch only the bad items are refused, each listed in `rejected`.

SQL text is only ever a value: where a number, time or flag belongs it is refused; in free text (driver id,
attributes) it is stored exactly as sent, and every table is still there afterwards.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.app import create_app
from tests.conftest import ScratchDb
from tests.db.conftest import Tracker

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=3)
SQL = "'); DROP TABLE fixes; --"
SQL_OR = "' OR '1'='1"
UNICODE_ID = "Motorista 🚌 José Ñandú 漢字 \u200b\u202e"
BIG_MIB = 16 * 1024 * 1024  # the service's default max_body_bytes


def fix(i: int = 0, /, **kw: Any) -> dict[str, Any]:
    """A valid fix i*30 s after T0 near Jaru."""
    return {"ts": (T0 + timedelta(seconds=30 * i)).isoformat(), "lat": -10.43 + i * 1e-4, "lon": -62.47, **kw}


def raw(i: int, extra: str) -> bytes:
    """A fix as JSON text with `extra` spliced in verbatim: for what orjson will not write (NaN, \\ud800, 1e400)."""
    return orjson.dumps(fix(i))[:-1] + b"," + extra.encode() + b"}"


def nested(depth: int, leaf: object = 1) -> object:
    for _ in range(depth):
        leaf = {"a": leaf}
    return leaf


async def count(conn: asyncpg.Connection) -> int:
    return int(await conn.fetchval("SELECT count(*) FROM fixes"))


async def post(client: httpx.AsyncClient, tracker: Tracker, body: object, ctype: str = "application/json") -> Any:
    content = body if isinstance(body, bytes) else orjson.dumps(body)
    return await client.post("/api/v1/fixes", content=content, headers={**tracker.auth, "Content-Type": ctype})


# --- POST /api/v1/fixes: one fix per request, every one refused with a 4xx naming the problem --------------

FIELDS = ("ts", "lat", "lon", "speed_kmh", "heading_deg", "altitude_m", "accuracy_m", "hdop", "satellites",
          "odometer_m", "ignition", "valid")  # fmt: skip
REFUSED: list[tuple[str, object]] = [
    # SQL where a number, a time, a flag or an object belongs
    *((f"sql in {f}", fix(**{f: SQL})) for f in FIELDS),
    *((f"sql-or in {f}", fix(**{f: SQL_OR})) for f in ("ts", "lat", "satellites")),
    ("sql as attributes", fix(attributes=SQL)),
    ("sql as driver_id object", fix(driver_id={"$ne": SQL})),
    # NUL, lone surrogates, over-long ids
    ("nul driver_id", fix(driver_id="\x00")),
    ("nul inside driver_id", fix(driver_id="ab\x00cd")),
    ("lone high surrogate driver_id", raw(0, '"driver_id": "\\ud800"')),
    ("lone low surrogate driver_id", raw(0, '"driver_id": "x\\udfffy"')),
    ("reversed surrogate pair driver_id", raw(0, '"driver_id": "\\ude00\\ud83d"')),
    ("surrogate attribute key", raw(0, '"attributes": {"\\ud83d": 1}')),
    ("surrogate attribute value", raw(0, '"attributes": {"k": "\\udfff"}')),
    ("surrogate unknown top-level key", raw(0, '"\\udc00": 1')),
    ("surrogate nested attribute", raw(0, '"attributes": {"a": {"b": ["\\ud800"]}}')),
    ("nul attribute key", fix(attributes={"\x00": 1})),
    ("nul nested attribute value", fix(attributes={"a": {"b": "x\x00"}})),
    ("nul nested attribute key", fix(attributes={"a": [{"\x00": 1}]})),
    ("driver_id of 65 characters", fix(driver_id="9" * 65)),
    ("driver_id of 65 emoji", fix(driver_id="🚌" * 65)),
    ("driver_id as a list", fix(driver_id=[1, 2])),
    # huge numbers
    ("lat 1e400", raw(0, '"lat": 1e400')),
    ("lon 10**400", raw(0, f'"lon": {10**400}')),
    ("ts 1e400", raw(0, '"ts": 1e400')),
    ("ts 10**30", raw(0, f'"ts": {10**30}')),
    ("speed 1e39", fix(speed_kmh=1e39)),
    ("accuracy beyond float4", fix(accuracy_m=1e39)),
    ("hdop beyond float4", fix(hdop=1e39)),
    ("altitude beyond float4", fix(altitude_m=-1e39)),
    ("odometer 1e400", raw(0, '"odometer_m": 1e400')),
    ("satellites 2**70", raw(0, f'"satellites": {2**70}')),
    ("satellites 40000", fix(satellites=40000)),
    # NaN and Infinity literals
    *((f"NaN {f}", raw(0, f'"{f}": NaN')) for f in ("lat", "lon", "ts", "speed_kmh", "accuracy_m", "satellites")),
    *((f"Infinity {f}", raw(0, f'"{f}": Infinity')) for f in ("lon", "hdop", "heading_deg", "odometer_m")),
    *((f"-Infinity {f}", raw(0, f'"{f}": -Infinity')) for f in ("lat", "altitude_m")),
    # deep nesting
    ("attributes one level too deep", fix(attributes=nested(17))),
    ("attributes nested 250 deep", fix(attributes=nested(250))),
    ("attributes nested 300 deep in a list", raw(0, '"attributes": {"a": ' + "[" * 300 + "]" * 300 + "}")),
    ("unknown key nested 2000 deep", raw(0, '"x": ' + "[" * 2000 + "]" * 2000)),
    ("body nested 100000 deep", b"[" * 100_000 + b"]" * 100_000),
    ("body nested 100000 deep, unclosed", b'{"fixes": ' + b"[" * 100_000),
    # not a fix at all
    ("empty body", b""),
    ("JSON null", b"null"),
    ("a bare string", b'"' + SQL.encode() + b'"'),
    ("not UTF-8", b'{"ts": "\xff\xfe", "lat": 1, "lon": 1}'),
    ("truncated", orjson.dumps(fix())[:-3]),
]


async def test_a_hostile_fix_is_refused_with_a_4xx_and_nothing_stored(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection
) -> None:
    wrong = []  # every case is tried (one database set-up for all), and every wrong answer reported
    for case, body in REFUSED:
        r = await post(client, tracker, body)
        if not (400 <= r.status_code < 500 and r.json()["detail"]) or await count(conn):
            wrong.append(f"{case}: {r.status_code} {r.text[:200]}")
    assert wrong == []


async def test_a_batch_keeps_its_good_fixes_and_lists_each_bad_one(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection
) -> None:
    bad = [
        b'{"ts": "' + SQL.encode() + b'", "lat": -10.4, "lon": -62.4}',
        raw(10, '"driver_id": "\\ud800"'),
        raw(11, '"lat": NaN'),
        raw(12, '"attributes": {"a": {"b": "x\\u0000"}}'),
        raw(13, f'"attributes": {{"big": {2**64}}}'),  # the NaN above makes the body go through json.loads
        raw(14, '"attributes": ' + '{"a": ' * 300 + "1" + "}" * 300),
        raw(15, '"accuracy_m": 1e39'),
        raw(16, '"attributes": {"k": "\\udfff"}'),
        b'"' + SQL.encode() + b'"',
    ]
    good = [orjson.dumps(fix(i, driver_id=f"D{i}")) for i in range(3)]
    items = [good[0], *bad[:4], good[1], *bad[4:], good[2]]
    r = await post(client, tracker, b'{"fixes": [' + b",".join(items) + b"]}")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["accepted"] == 3
    assert [x["index"] for x in body["rejected"]] == [1, 2, 3, 4, 6, 7, 8, 9, 10]
    errors = {x["index"]: x["error"] for x in body["rejected"]}
    assert "lone surrogate" in errors[2] and "NUL" in errors[4] and "cannot be stored exactly" in errors[6]
    assert "deeper than 16" in errors[7] and "too large" in errors[8] and "surrogates" in errors[9]
    assert [row["driver_id"] for row in await conn.fetch("SELECT driver_id FROM fixes ORDER BY ts")] == [
        "D0",
        "D1",
        "D2",
    ]


async def test_sql_and_unicode_in_free_text_are_stored_exactly_as_sent(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection
) -> None:
    tables = await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'")
    sent = [
        fix(0, driver_id=SQL, attributes={SQL: SQL_OR, "nested": {"q": [SQL, "🚌"]}}),
        fix(1, driver_id=UNICODE_ID, attributes={UNICODE_ID: "ção", "rtl": "\u202edcba"}, **{"note 🚌": "é"}),
        fix(2, driver_id="x" * 64, attributes={"deep": nested(15, "leaf"), "path": "C:\\u0000"}),
    ]
    r = await post(client, tracker, {"fixes": sent})
    assert r.json() == {"accepted": 3, "duplicates": 0, "rejected": []}
    rows = await conn.fetch("SELECT driver_id, attributes FROM fixes ORDER BY ts")
    assert [row["driver_id"] for row in rows] == [SQL, UNICODE_ID, "x" * 64]
    assert rows[0]["attributes"] == {SQL: SQL_OR, "nested": {"q": [SQL, "🚌"]}}
    assert rows[1]["attributes"] == {UNICODE_ID: "ção", "rtl": "\u202edcba", "note 🚌": "é"}
    assert rows[2]["attributes"] == {"deep": nested(15, "leaf"), "path": "C:\\u0000"}  # a backslash, not a NUL
    assert await conn.fetchval("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == tables


async def test_attributes_are_bounded_and_stored_exactly_or_their_fix_is_refused(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection
) -> None:
    """A 1 MB attributes object was stored, and an integer past 64 bits came back as a float: now each such
    fix is rejected with the reason, and the good fixes of its batch are stored exactly as sent."""
    items = [
        orjson.dumps(fix(0, attributes={"batt": 80, "n": 2**53 - 1, "m": -(2**53 - 1), "f": 0.1})),
        orjson.dumps(fix(1, attributes={"blob": "x" * 1_000_000})),
        raw(2, f'"attributes": {{"n": {2**64 + 1}}}'),  # orjson alone would read it as 1.8446744073709552e19
        raw(3, f'"attributes": {{"n": {2**53 + 1}}}'),
        raw(4, f'"attributes": {{"a": [{{"n": {-(2**60)}}}]}}'),
        orjson.dumps(fix(5, note="y" * 5000)),  # an unknown top-level key is an attribute too
        orjson.dumps(fix(6, attributes={f"k{i}": i for i in range(65)})),
        orjson.dumps(fix(7, attributes={"k": "z" * 4000})),
    ]
    r = await post(client, tracker, b'{"fixes": [' + b",".join(items) + b"]}")
    assert r.status_code == 200, r.text
    body = r.json()
    errors = {x["index"]: x["error"] for x in body["rejected"]}
    assert body["accepted"] == 2 and sorted(errors) == [1, 2, 3, 4, 5, 6]
    assert "bytes as JSON, at most 4096 per fix" in errors[1] and "bytes as JSON" in errors[5]
    assert all("cannot be stored exactly" in errors[i] for i in (2, 3, 4))
    assert "65 keys, at most 64" in errors[6]
    rows = await conn.fetch("SELECT attributes FROM fixes ORDER BY ts")
    assert [row["attributes"] for row in rows] == [
        {"batt": 80, "n": 2**53 - 1, "m": -(2**53 - 1), "f": 0.1},
        {"k": "z" * 4000},
    ]
    # NaN and infinities would be written as null: refused too (the body then goes through json.loads).
    r = await post(client, tracker, b'{"fixes": [' + raw(8, '"attributes": {"x": 1e400}') + b"]}")
    assert (
        r.json()["rejected"][0]["error"]
        == "attributes: NaN or an infinite number cannot be stored (it would become null)"
    )
    assert await count(conn) == 2


async def test_the_attributes_bound_is_a_setting(
    test_db: ScratchDb, tracker: Tracker, conn: asyncpg.Connection
) -> None:
    app = create_app(test_db.settings(rollup_interval_s=0, max_attributes_bytes=512))
    body = {"fixes": [fix(0, attributes={"k": "a" * 480}), fix(1, attributes={"k": "a" * 520})]}
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            r = await post(c, tracker, body)
    assert r.json()["accepted"] == 1
    assert "at most 512 per fix" in r.json()["rejected"][0]["error"]


@pytest.mark.parametrize(
    "ctype",
    ["text/xml", "application/xml", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
     "image/png", "application/octet-stream", "text/html; charset=utf-8", "text/plain", "text/plain; charset=utf-8",
     "application/jsonx", "application/x-json-stream", "text/jsonp"],
)  # fmt: skip
async def test_wrong_content_types_are_415(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection, ctype: str
) -> None:
    """As docs/trackers.md says: a body that is not declared JSON gets 415, and the answer names the type accepted."""
    r = await post(client, tracker, fix(), ctype)
    assert r.status_code == 415
    assert r.json()["detail"] == f"Content-Type must be application/json, not {ctype.split(';')[0]}"
    assert await count(conn) == 0


@pytest.mark.parametrize(
    "ctype", ["application/json", "application/json; charset=utf-8", "Application/JSON", "application/vnd.fix+json",
              "text/json", None],
)  # fmt: skip
async def test_json_content_types_and_none_are_read_as_json(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection, ctype: str | None
) -> None:
    headers = {**tracker.auth, **({"Content-Type": ctype} if ctype else {})}
    r = await client.post("/api/v1/fixes", content=orjson.dumps(fix()), headers=headers)
    assert r.status_code == 200 and r.json()["accepted"] == 1


async def test_an_oversized_body_is_413_declared_or_streamed(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection
) -> None:
    big = b'{"fixes": [' + b" " * BIG_MIB + b"]}"
    r = await post(client, tracker, big)
    assert r.status_code == 413 and str(BIG_MIB) in r.json()["detail"]

    async def chunks() -> Any:
        yield b'{"fixes": ['
        for _ in range(17):
            yield b" " * (1024 * 1024)
        yield b"]}"

    r = await client.post(
        "/api/v1/fixes", content=chunks(), headers={**tracker.auth, "Content-Type": "application/json"}
    )
    assert r.status_code == 413 and str(BIG_MIB) in r.json()["detail"]
    assert await count(conn) == 0


@pytest.mark.parametrize("token", [SQL_OR, "tt_" + SQL, "x" * 10_000, "Bearer", ""])
async def test_a_hostile_tracker_token_is_401(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection, token: str
) -> None:
    r = await client.post("/api/v1/fixes", json=fix(), headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 401 and r.json()["detail"]
    assert await count(conn) == 0


# --- /osmand -----------------------------------------------------------------------------------------------


def osmand_params(tracker: Tracker, **kw: str) -> dict[str, str]:
    return {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "timestamp": str(int(T0.timestamp())), **kw}


HOSTILE_VALUES = {
    "sql": SQL,
    "sql-or": SQL_OR,
    "nul": "\x00",
    "nul-inside": "12\x003",
    "emoji": "🚌🚌",
    "rtl": "\u202e1",
    "nan": "NaN",
    "inf": "Infinity",
    "-inf": "-Infinity",
    "huge": "1e400",
    "huge-int": str(10**400),
    "float4-overflow": "1e39",
    "negative": "-1e39",
    "hex": "0x10",
    "underscore": "1_0",
    "arabic-digits": "\u0661\u0662",
    "long": "9" * 5000,
    "leap-second": "2016-12-31T23:59:60Z",
}
POSITION = ("lat", "lon", "timestamp", "location")
MEASURES = ("speed", "bearing", "heading", "altitude", "accuracy", "hdop", "sat", "odometer", "ignition", "valid")
FREE_TEXT = ("driverUniqueId", "batt", "note")


async def osmand_row(conn: asyncpg.Connection) -> asyncpg.Record | None:
    rows = await conn.fetch("SELECT * FROM fixes")
    assert len(rows) <= 1
    return rows[0] if rows else None


def assert_valid(row: asyncpg.Record) -> None:
    """What every stored fix must be: a real position and time, finite measures in their ranges."""
    assert -90 <= row["lat"] <= 90 and -180 <= row["lon"] <= 180 and (row["lat"], row["lon"]) != (0, 0)
    assert abs(row["ts"] - T0) <= timedelta(days=1)
    assert row["speed_kmh"] is None or 0 <= row["speed_kmh"] <= 300
    assert row["heading_deg"] is None or 0 <= row["heading_deg"] < 360
    assert row["altitude_m"] is None or -1000 <= row["altitude_m"] <= 20_000
    for name in ("accuracy_m", "hdop", "odometer_m"):
        assert row[name] is None or 0 <= row[name] < math.inf, name
    assert row["satellites"] is None or 0 <= row["satellites"] <= 255
    assert row["driver_id"] is None or "\x00" not in row["driver_id"]


@pytest.mark.parametrize("field", POSITION + MEASURES + FREE_TEXT)
async def test_osmand_every_parameter_malformed_is_never_a_5xx_nor_stored_invalid(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection, field: str
) -> None:
    """OsmAnd answers 200 for a decodable position that is invalid (logged, not stored): a tracker told 4xx
    would re-send it forever and block its queue. So the criterion here is: never a 5xx; a position that cannot
    be read is 400; what is stored is valid; and a malformed *position or time* is never stored.
    """
    for name, value in HOSTILE_VALUES.items():
        await conn.execute("TRUNCATE fixes")
        for method in ("GET", "POST"):
            params = osmand_params(tracker, **{field: value})
            if field == "location":  # read only when lat and lon are absent
                del params["lat"], params["lon"]
            if method == "GET":
                r = await client.get("/osmand", params=params)
            else:
                r = await client.post("/osmand", data=params)
            assert r.status_code in (200, 400), f"{method} {field}={name}: {r.status_code} {r.text[:200]}"
            row = await osmand_row(conn)
            if row is not None:
                assert_valid(row)
                assert field not in POSITION, f"{method} {field}={name} stored {dict(row)}"


@pytest.mark.parametrize(
    "device_id", [SQL, SQL_OR, "\x00", "abc\x00", UNICODE_ID, "9" * 10_000, "%", "\ufffd", " ", "1e400"]
)
async def test_osmand_hostile_device_ids_are_refused(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection, device_id: str
) -> None:
    position = {k: v for k, v in osmand_params(tracker).items() if k != "id"}
    for key in ("id", "deviceid", "device_id"):
        params = {**position, key: device_id}
        r = await client.get("/osmand", params=params)
        assert r.status_code in (400, 403), f"{params}: {r.status_code} {r.text[:200]}"
        assert r.json()["detail"]
    assert await count(conn) == 0


COORDS = b'{"latitude": -10.43, "longitude": -62.47}'
OSMAND_JSON: list[tuple[str, bytes, int]] = [
    ("surrogate id", b'{"id": "\\ud800", "lat": -10.43, "lon": -62.47}', 400),
    ("surrogate device_id", b'{"device_id": "a\\udfff", "location": {"coords": ' + COORDS + b"}}", 400),
    ("nul id", b'{"id": "\\u0000", "lat": -10.43, "lon": -62.47}', 400),
    # As deep as fits the OsmAnd body limit (16 KiB): far deeper than any JSON parser recurses.
    ("deep body", b"[" * 8_000 + b"]" * 8_000, 400),
    ("deep unclosed", b'{"id": "x", "location": ' + b"{" * 16_000, 400),
    ("not UTF-8", b'{"id": "\xff", "lat": 1}', 400),
    ("NaN lat only position", b'{"id": "%s", "lat": NaN}', 400),
    ("a JSON string", b'"' + SQL.encode() + b'"', 400),
]


@pytest.mark.parametrize(("case", "body", "status"), OSMAND_JSON, ids=[c for c, _, _ in OSMAND_JSON])
async def test_osmand_hostile_json_bodies_are_refused(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection, case: str, body: bytes, status: int
) -> None:
    r = await client.post("/osmand", content=body.replace(b"%s", tracker.unique_id.encode()))
    assert r.status_code == status, f"{case}: {r.status_code} {r.text[:200]}"
    assert await count(conn) == 0


async def test_osmand_hostile_values_for_the_right_device_store_only_valid_positions(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection
) -> None:
    """A JSON batch with hostile values in every field: 200 (see above), the good positions stored, valid."""
    uid = tracker.unique_id.encode()
    epoch = int(T0.timestamp())
    good = [b'{"id": "%s", "lat": -10.43, "lon": -62.47, "timestamp": %d}' % (uid, epoch + i) for i in range(2)]
    bad = [
        b'{"id": "%s", "lat": NaN, "lon": -62.47, "timestamp": %d}' % (uid, epoch + 10),
        b'{"id": "%s", "lat": -10.43, "lon": 1e400, "timestamp": %d}' % (uid, epoch + 11),
        b'{"id": "%s", "lat": -10.43, "lon": -62.47, "timestamp": "%s"}' % (uid, SQL.encode()),
        b'{"id": "%s", "lat": -10.43, "lon": -62.47, "timestamp": %d, "driverUniqueId": "\\ud800"}' % (uid, epoch + 12),
        b'{"id": "%s", "lat": -10.43, "lon": -62.47, "timestamp": %d, "note": "\\udfff"}' % (uid, epoch + 13),
        b'{"id": "%s", "lat": -10.43, "lon": -62.47, "timestamp": %d, "note": "a\\u0000"}' % (uid, epoch + 14),
        b'{"id": "%s", "lat": -10.43, "lon": -62.47, "timestamp": %d, "accuracy": 1e39}' % (uid, epoch + 15),
        b'{"id": "other", "lat": -10.43, "lon": -62.47, "timestamp": %d}' % (epoch + 16),
    ]
    r = await client.post("/osmand", content=b"[" + b",".join([good[0], *bad, good[1]]) + b"]")
    assert r.status_code == 200, r.text
    rows = await conn.fetch("SELECT * FROM fixes ORDER BY ts")
    for row in rows:
        assert_valid(row)
        assert "\x00" not in orjson.dumps(row["attributes"]).decode()
    assert [row["ts"] for row in rows][:2] == [T0, T0 + timedelta(seconds=1)]


async def test_osmand_oversized_body_is_413(
    client: httpx.AsyncClient, tracker: Tracker, conn: asyncpg.Connection
) -> None:
    r = await client.post("/osmand", content=b"id=" + b"9" * BIG_MIB)
    assert r.status_code == 413 and str(BIG_MIB) in r.json()["detail"]
    assert await count(conn) == 0
