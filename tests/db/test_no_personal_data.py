"""Nothing personal or secret reaches the logs or the error messages (LGPD; Lei 3.588/2023 Art. 49).

Every kind of request that carries personal data or a secret is made, good and bad, with the
access log on and every logger at DEBUG; then no log record and no error body may contain any of
them: CPFs, names, passwords, tokens, driver cards, device ids.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from datetime import UTC, datetime

import asyncpg
import httpx
import pytest

from telemetria.app import create_app
from tests.conftest import ScratchDb
from tests.db.conftest import People, register

CPF, CPF_DIGITS, BAD_CPF = "529.982.247-25", "52998224725", "111.444.777-00"
NAME, CARD, DEVICE = "Maria Sigilosa da Silva", "CARD-SIGILO-77", "IMEI-SIGILO-555"
PASSWORD = "Hunter2-Senha-Forte"
SECRETS = (CPF, CPF_DIGITS, BAD_CPF, "11144477700", NAME, CARD, DEVICE, PASSWORD, "tlm_naoexiste_SIGILO", "trk-SIGILO")


@pytest.fixture
async def logged_client(test_db: ScratchDb) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(test_db.settings(rollup_interval_s=0, access_log=True))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            yield c


async def test_no_personal_data_or_secret_in_logs_or_errors(
    logged_client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, caplog: pytest.LogCaptureFixture
) -> None:
    client = logged_client
    caplog.set_level(logging.DEBUG)
    t = await register(conn, "PII1A23", "860000000000777")
    errors: list[httpx.Response] = []

    async def call(method: str, url: str, **kw: object) -> httpx.Response:
        r = await client.request(method, url, **kw)  # type: ignore[arg-type]
        if r.status_code >= 400:
            errors.append(r)
        return r

    admin = people.auth("admin")
    driver = {"name": NAME, "cpf": CPF, "cnh_category": "D", "card_id": CARD, "contractor_id": people.contractor_id}
    assert (await call("POST", "/api/v1/drivers", json=driver, headers=admin)).status_code == 201
    bad = await call("POST", "/api/v1/drivers", json={**driver, "cpf": BAD_CPF, "card_id": "X1"}, headers=admin)
    assert bad.status_code in (400, 422) and "cpf" in bad.text
    assert (await call("GET", "/api/v1/drivers", headers=people.auth("auditor"))).status_code == 200
    for username, password in (("admin", PASSWORD), (PASSWORD, "x"), ("ninguem", PASSWORD)):
        r = await call("POST", "/api/v1/auth/login", json={"username": username, "password": password})
        assert r.status_code == 401
    unknown = {"Authorization": "Bearer tlm_naoexiste_SIGILO"}
    assert (await call("GET", "/api/v1/vehicles", headers=unknown)).status_code == 401
    fix = {"ts": datetime.now(UTC).isoformat(), "lat": -10.44, "lon": -62.46, "driver_id": CARD}
    wrong = {"Authorization": "Bearer trk-SIGILO"}
    assert (await call("POST", "/api/v1/fixes", json=fix, headers=wrong)).status_code == 401
    assert (await call("POST", "/api/v1/fixes", json=fix, headers=t.auth)).status_code == 200
    weird = {**fix, "lat": 123.0, "driver_id": CARD}  # rejected: its reason must not repeat the card
    assert (await call("POST", "/api/v1/fixes", json={"fixes": [weird]}, headers=t.auth)).json()["rejected"]
    q = {"id": DEVICE, "lat": "-10.44", "lon": "-62.46", "timestamp": str(int(datetime.now(UTC).timestamp()))}
    assert (await call("GET", "/osmand", params=q)).status_code == 403
    osmand_bad = {"id": t.unique_id, "lat": "999", "lon": "-62.46", "driverUniqueId": CARD}
    assert (await call("GET", "/osmand", params=osmand_bad)).status_code < 500

    service = [r for r in caplog.records if not r.name.startswith(("httpx", "httpcore"))]  # not the test's client
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.exc_text or ''} {getattr(r, 'path', '')}" for r in service)
    assert any(r.name == "telemetria.access" for r in caplog.records)  # the access log was on
    leaks = [s for s in SECRETS if s in logged]
    assert leaks == [], f"in the logs: {leaks}"
    for r in errors:
        assert [s for s in SECRETS if s in r.text] == [], (r.request.url.path, r.status_code, r.text)
