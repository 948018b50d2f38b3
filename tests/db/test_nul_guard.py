"""A NUL character (U+0000) in any text input is a clean 400 naming the field, never the database's own words.

PostgreSQL cannot store U+0000 in text. Before the guard, a NUL in a username, a search or a file's stop name
reached the database and came back as `invalid byte sequence for encoding "UTF8": 0x00`.
"""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import orjson

from tests.db.conftest import People

COORDS = [[-62.47, -10.43], [-62.46, -10.44]]
LINE = (
    b'{"type":"Feature","properties":{},"geometry":{"type":"LineString","coordinates":' + orjson.dumps(COORDS) + b"}}"
)
STOP = (
    b'{"type":"Feature","properties":{"name":"st\\u0000op"},"geometry":{"type":"Point","coordinates":[-62.47,-10.43]}}'
)
ADMIN = "admin"

# (case, method, url, request keyword arguments, the field the answer must name)
CASES: list[tuple[str, str, str, dict[str, Any], str]] = [
    ("login username", "POST", "/api/v1/auth/login", {"json": {"username": "ad\x00min", "password": "x"}}, "username"),
    ("login password", "POST", "/api/v1/auth/login", {"json": {"username": "admin", "password": "a\x00"}}, "password"),
    ("contractor search", "GET", "/api/v1/contractors", {"params": {"search": "a\x00"}}, "search"),
    ("driver card", "GET", "/api/v1/drivers", {"params": {"card_id": "a\x00"}}, "card_id"),
    ("route code", "GET", "/api/v1/routes", {"params": {"code": "a\x00"}}, "code"),
    ("audit username", "GET", "/api/v1/audit", {"params": {"username": "a\x00", "action": "b"}}, "username"),
    ("audit action", "GET", "/api/v1/audit", {"params": {"action": "b\x00"}}, "action"),
    ("report tz", "GET", "/api/v1/reports/km", {"params": {"from": "2026-01-01", "to": "2026-01-02", "tz": "\x00"}},
     "tz"),
    ("token name", "POST", "/api/v1/tokens", {"json": {"name": "a\x00"}}, "name"),
    ("new username", "POST", "/api/v1/users",
     {"json": {"username": "a\x00b", "password": "correct horse battery", "role": "admin"}}, "username"),
    ("user full name", "POST", "/api/v1/users",
     {"json": {"username": "ab", "password": "correct horse battery", "role": "admin", "full_name": "a\x00"}},
     "full_name"),
    ("stop name in a JSON route", "POST", "/api/v1/routes",
     {"json": {"code": "R0", "name": "R0", "geometry": {"type": "LineString", "coordinates": COORDS},
               "stops": [{"name": "ok", "lat": -10.43, "lon": -62.47},
                         {"name": "b\x00", "lat": -10.44, "lon": -62.46}]}},
     "stops[1].name"),
    ("a NUL in a key", "PATCH", "/api/v1/users/1", {"json": {"full\x00name": "x"}}, "full\\u0000name"),
    ("route code in a form", "POST", "/api/v1/routes",
     {"files": {"file": ("r.geojson", LINE)}, "data": {"code": "R\x003"}}, "code"),
    ("stop name in a route file", "POST", "/api/v1/routes",
     {"files": {"file": ("r.geojson", b'{"type":"FeatureCollection","features":[' + LINE + b"," + STOP + b"]}")},
      "data": {"code": "R4"}}, "stops[0].name"),
    ("path", "GET", "/api/v1/vehicles/1%00", {}, "path"),
]  # fmt: skip


async def test_a_nul_in_any_text_input_is_a_clean_400_naming_the_field(
    client: httpx.AsyncClient, people: People
) -> None:
    wrong = []  # every case is tried (one set of users for all), and every wrong answer reported
    for case, method, url, kwargs, field in CASES:
        r = await client.request(method, url, headers=people.auth(ADMIN), **kwargs)
        leaked = [w for w in ("UTF8", "0x00", "byte sequence", "encoding") if w in r.text]
        if not (400 <= r.status_code < 500 and field in r.json()["detail"]) or leaked:
            wrong.append(f"{case}: {r.status_code} {r.text[:300]}")
    assert wrong == []


async def test_text_that_merely_looks_like_a_nul_passes(client: httpx.AsyncClient, people: People) -> None:
    """A backslash before u0000, or "%00" as text, is no NUL: stored as sent."""
    for name in ("C:\\u0000", "100%00"):
        r = await client.post("/api/v1/tokens", json={"name": name}, headers=people.auth(ADMIN))
        assert r.status_code == 201 and r.json()["name"] == name
    r = await client.get("/api/v1/contractors", params={"search": "%00"}, headers=people.auth(ADMIN))
    assert r.status_code == 200


async def test_ingest_still_rejects_a_nul_per_item_and_keeps_the_batch(
    client: httpx.AsyncClient, conn: asyncpg.Connection
) -> None:
    from tests.db.conftest import register

    await conn.execute("TRUNCATE fixes, tracker_installations, trackers, vehicles RESTART IDENTITY CASCADE")
    tracker = await register(conn, "NUL1A00", "nul-0001")
    fixes = [
        {"ts": "2026-11-30T12:00:00Z", "lat": -10.43, "lon": -62.47, "driver_id": "a\x00"},
        {"ts": "2026-11-30T12:00:30Z", "lat": -10.43, "lon": -62.47, "driver_id": "ok"},
    ]
    r = await client.post("/api/v1/fixes", json={"fixes": fixes}, headers=tracker.auth)
    assert r.status_code == 200 and r.json()["accepted"] == 1
    assert "NUL" in r.json()["rejected"][0]["error"]


def test_the_backstop_answers_in_its_own_words() -> None:
    """Whatever still reaches the database is answered without the database's text, which can quote the value."""
    from telemetria.app import _refused_value

    nul = asyncpg.CharacterNotInRepertoireError('invalid byte sequence for encoding "UTF8": 0x00')
    assert "NUL" in _refused_value(nul) and 'UTF8"' not in _refused_value(nul)
    overflow = asyncpg.NumericValueOutOfRangeError('value "99999999999" is out of range for type integer')
    assert "99999999999" not in _refused_value(overflow)
