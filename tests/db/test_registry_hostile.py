"""Hostile input to the registry and auth API: always a 4xx naming the problem, never a 500, nothing stored."""

from __future__ import annotations

import asyncpg
import httpx
import pytest

from tests.db.conftest import People

BIG = 99_999_999_999  # beyond PostgreSQL's integer
CASES: list[tuple[str, str, object]] = [
    ("GET", f"/api/v1/vehicles/{BIG}", None),
    ("GET", f"/api/v1/vehicles?contractor_id={BIG}", None),
    ("GET", "/api/v1/vehicles?limit=1e99", None),
    ("GET", "/api/v1/vehicles?offset=-1", None),
    ("GET", "/api/v1/trackers?vehicle_id=-1", None),
    ("GET", "/api/v1/audit?from=99999-01-01T00:00:00Z", None),
    ("POST", "/api/v1/vehicles", {"plate": "ABC1D99", "capacity": 10**20}),
    ("POST", "/api/v1/vehicles", {"plate": "ABC1D98", "contractor_id": BIG}),
    ("POST", "/api/v1/vehicles", {"plate": "ABC1D97", "description": "a\u0000b"}),
    ("POST", "/api/v1/vehicles", b'{"plate":"ABC1D96","description":"\\ud800"}'),
    ("POST", "/api/v1/vehicles", b"[" * 100_000),
    ("POST", "/api/v1/vehicles", b'{"plate": 1e999}'),
    ("POST", "/api/v1/vehicles", b'{"plate": "ABC1D95"'),
    ("POST", "/api/v1/vehicles", "plate=ABC1D94"),
    ("POST", "/api/v1/driver-assignments", {"driver_id": 2**40, "vehicle_id": 1}),
    ("POST", "/api/v1/contractors", {"name": "x'); DROP TABLE users;--", "cnpj": "11222333000181'--"}),
    ("POST", "/api/v1/contractors", {"name": "Empresa", "cnpj": "11222333000181", "contract_number": "\u0000"}),
    ("POST", "/api/v1/drivers", {"name": "A\u0000B", "cpf": "52998224725", "cnh_category": "D"}),
    ("POST", "/api/v1/drivers", {"name": "Ana", "cpf": "' OR 1=1 --", "cnh_category": "D"}),
    ("POST", "/api/v1/trackers", {"unique_id": "\u0000", "vehicle_id": 1}),
    ("PATCH", "/api/v1/routes/1", {"declared_km": "NaN"}),
    (
        "POST",
        "/api/v1/routes",
        {"code": "X", "name": "X", "geometry": {"type": "LineString", "coordinates": [[1e308, 1e308]] * 3}},
    ),
    (
        "POST",
        "/api/v1/speed-zones",
        {"name": "z", "limit_kmh": 30, "geometry": {"type": "Polygon", "coordinates": [[[1e308, 1]]]}},
    ),
    ("POST", "/api/v1/users", {"username": "é" * 10, "password": "long enough pw", "role": "monitor"}),
    ("POST", "/api/v1/auth/login", {"username": "a\u0000", "password": "x"}),
    ("POST", "/api/v1/auth/login", {"username": "x" * 10_000, "password": "x"}),
    ("POST", "/api/v1/tokens", {"name": "n" * 1000}),
]
TABLES = ("vehicles", "contractors", "drivers", "driver_assignments", "trackers", "routes", "speed_zones", "users")


@pytest.mark.parametrize(("method", "path", "body"), CASES)
async def test_hostile_input_gets_a_4xx_and_changes_nothing(
    client: httpx.AsyncClient, people: People, conn: asyncpg.Connection, method: str, path: str, body: object
) -> None:
    before = [await conn.fetchval(f"SELECT count(*) FROM {t}") for t in TABLES]
    headers = people.auth("admin")
    if isinstance(body, bytes | str):
        ctype = "application/json" if isinstance(body, bytes) else "application/x-www-form-urlencoded"
        r = await client.request(method, path, content=body, headers={**headers, "Content-Type": ctype})
    elif body is None:
        r = await client.request(method, path, headers=headers)
    else:
        r = await client.request(method, path, json=body, headers=headers)
    assert 400 <= r.status_code < 500, r.text
    assert r.json()["detail"]
    assert [await conn.fetchval(f"SELECT count(*) FROM {t}") for t in TABLES] == before
