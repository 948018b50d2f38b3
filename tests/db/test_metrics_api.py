"""GET /metrics and request ids on the real app and database: counters move when fixes arrive."""

from __future__ import annotations

import os
import re
import shlex
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import orjson
import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from pydantic import SecretStr

from telemetria.app import create_app
from telemetria.logs import JsonFormatter
from telemetria.reports.store.queries import last_fixes
from telemetria.settings import Settings
from tests.conftest import ScratchDb
from tests.db.conftest import Tracker

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(client: httpx.AsyncClient) -> Samples:
    r = await client.get("/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


async def test_metrics_move_when_fixes_arrive(client: httpx.AsyncClient, tracker: Tracker) -> None:
    before = await scrape(client)
    now = datetime.now(UTC).replace(microsecond=0)
    fixes = [
        {"ts": (now - timedelta(minutes=10, seconds=30 * i)).isoformat(), "lat": -10.43, "lon": -62.47}
        for i in range(3)
    ]
    bad = [
        {"ts": (now - timedelta(days=800)).isoformat(), "lat": -10.43, "lon": -62.47},
        {"ts": now.isoformat(), "lat": 91.0, "lon": -62.47},
    ]
    r = await client.post("/api/v1/fixes", json={"fixes": fixes + bad}, headers=tracker.auth)
    assert r.json()["accepted"] == 3
    r = await client.post("/api/v1/fixes", json={"fixes": fixes[:1]}, headers=tracker.auth)
    assert r.json()["duplicates"] == 1
    r = await client.get("/osmand", params={"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "speed": "-5"})
    assert r.status_code == 200
    r = await client.get("/osmand", params={"id": tracker.unique_id, "lat": "0", "lon": "0"})  # rejected, 200
    assert r.status_code == 200
    after = await scrape(client)

    def delta(name: str, **labels: str) -> float:
        return value(after, name, **labels) - value(before, name, **labels)

    assert delta("telemetria_ingest_fixes_total", protocol="json", outcome="accepted") == 3
    assert delta("telemetria_ingest_fixes_total", protocol="json", outcome="duplicate") == 1
    assert delta("telemetria_ingest_fixes_total", protocol="json", outcome="rejected") == 2
    assert delta("telemetria_ingest_rejected_total", protocol="json", reason="ts_too_old") == 1
    assert delta("telemetria_ingest_rejected_total", protocol="json", reason="lat/lon") == 1
    assert delta("telemetria_ingest_fixes_total", protocol="osmand", outcome="accepted") == 1
    assert delta("telemetria_ingest_rejected_total", protocol="osmand", reason="lat/lon") == 1
    assert delta("telemetria_ingest_requests_total", protocol="json", status="200") == 2
    assert delta("telemetria_ingest_requests_total", protocol="osmand", status="200") == 2
    assert delta("telemetria_ingest_batch_fixes_count", protocol="json") == 2
    assert delta("telemetria_ingest_batch_fixes_sum", protocol="json") == 6
    assert delta("telemetria_writer_flush_rows_count") >= 3
    assert delta("telemetria_writer_commit_seconds_count") >= 3
    # The three JSON fixes were 10 to 11 minutes old when stored; the OsmAnd one (no time sent) ~0.
    assert delta("telemetria_ingest_fix_delay_seconds_count") == 4
    assert delta("telemetria_ingest_fix_delay_seconds_bucket", le="300.0") == 1
    assert delta("telemetria_ingest_fix_delay_seconds_bucket", le="600.0") == 1
    assert delta("telemetria_ingest_fix_delay_seconds_bucket", le="1800.0") == 4
    assert value(after, "telemetria_database_up") == 1
    age = value(after, "telemetria_vehicle_last_fix_age_seconds", vehicle="ABC1D23")
    assert 0 <= age < 60  # the OsmAnd fix, stamped on arrival


async def test_vehicle_without_fixes_has_infinite_age(client: httpx.AsyncClient, tracker: Tracker, conn) -> None:
    samples = await scrape(client)
    assert value(samples, "telemetria_vehicle_last_fix_age_seconds", vehicle="ABC1D23") == float("inf")
    [last] = await last_fixes(client.app.state.reports_pool)  # type: ignore[attr-defined]
    assert last.plate == "ABC1D23" and last.last_ts is None and last.age_s is None


async def test_request_ids_are_echoed_or_made(client: httpx.AsyncClient) -> None:
    r = await client.get("/healthz", headers={"X-Request-Id": "lb-7f3a.1"})
    assert r.headers["x-request-id"] == "lb-7f3a.1"
    made = (await client.get("/healthz")).headers["x-request-id"]
    assert len(made) == 32 and made != (await client.get("/healthz")).headers["x-request-id"]
    odd = (await client.get("/healthz", headers={"X-Request-Id": "bad id\twith spaces"})).headers["x-request-id"]
    assert len(odd) == 32 and " " not in odd
    assert (await client.post("/api/v1/fixes", json={})).headers["x-request-id"]  # on errors too


async def test_access_log_has_request_id_and_no_personal_data(test_db: ScratchDb, tracker: Tracker, caplog) -> None:
    app = create_app(test_db.settings(access_log=True))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            with caplog.at_level("INFO", logger="telemetria.access"):
                params = {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "driverUniqueId": "CARD42"}
                r = await c.get("/osmand", params=params, headers={"X-Request-Id": "req-1"})
    assert r.status_code == 200
    [record] = [rec for rec in caplog.records if rec.name == "telemetria.access"]
    assert record.path == "/osmand" and record.status == 200  # type: ignore[attr-defined]
    line = orjson.loads(JsonFormatter().format(record))
    assert line["request_id"] == "req-1" and line["path"] == "/osmand"
    text = orjson.dumps(line).decode()
    assert tracker.unique_id not in text and "CARD42" not in text and "-10.43" not in text and "127.0.0.1" not in text


async def test_metrics_token_when_configured(test_db: ScratchDb) -> None:
    app = create_app(test_db.settings(metrics_token="s3cret"))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            assert (await c.get("/metrics")).status_code == 401
            assert (await c.get("/metrics", headers={"Authorization": "Bearer nope"})).status_code == 401
            ok = await c.get("/metrics", headers={"Authorization": "Bearer s3cret"})
            assert ok.status_code == 200 and "telemetria_database_up 1.0" in ok.text


# --- the shipped deployment ------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]


def shipped_env(compose: bool, dotenv: dict[str, str]) -> dict[str, str]:
    """The TELEMETRIA_* variables the Docker image sets, overlaid (with `compose`) by docker-compose.yml's,
    its ${VAR} references filled from `dotenv` as docker compose would from .env."""
    env: dict[str, str] = {}
    for line in (ROOT / "Dockerfile").read_text().splitlines():
        if line.startswith("ENV "):
            env.update(pair.partition("=")[::2] for pair in shlex.split(line[4:]))
    if compose:
        app = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["app"]

        def fill(m: re.Match[str]) -> str:
            if m["name"] in dotenv:
                return dotenv[m["name"]]
            assert m["op"] != ":?", f"docker compose would refuse to start without {m['name']}"
            return m["default"] or ""

        for name, value in app["environment"].items():
            env[name] = re.sub(r"\$\{(?P<name>\w+)(?:(?P<op>:-|:\?)(?P<default>[^}]*))?\}", fill, str(value))
    return {k: v for k, v in env.items() if k.startswith("TELEMETRIA_")}


@pytest.mark.parametrize(
    ("compose", "dotenv", "token"),
    [
        (False, {}, None),
        (True, {"POSTGRES_PASSWORD": "x"}, None),
        (True, {"POSTGRES_PASSWORD": "x", "METRICS_TOKEN": "m3trics-t0ken"}, "m3trics-t0ken"),
    ],
    ids=["image alone", "compose without METRICS_TOKEN", "compose with METRICS_TOKEN"],
)
async def test_the_shipped_deployment_never_serves_metrics_without_the_token(
    test_db: ScratchDb, monkeypatch: pytest.MonkeyPatch, compose: bool, dotenv: dict[str, str], token: str | None
) -> None:
    """/metrics lists every plate with the age of its last fix: the image and the compose file keep it closed."""
    env = shipped_env(compose, dotenv)
    assert env.get("TELEMETRIA_HOST") == "0.0.0.0"  # the image listens on every address: the token is the guard
    for name in [n for n in os.environ if n.startswith("TELEMETRIA_")]:
        monkeypatch.delenv(name)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    app = create_app(Settings(database_url=test_db.dsn, rollup_interval_s=0))  # the database is the test's
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as c:
            anonymous = await c.get("/metrics")
            wrong = await c.get("/metrics", headers={"Authorization": "Bearer "})
            right = await c.get("/metrics", headers={"Authorization": f"Bearer {token}"}) if token else None
    assert anonymous.status_code in (401, 403) and "telemetria_" not in anonymous.text
    assert wrong.status_code in (401, 403)
    if token is None:
        assert anonymous.status_code == 403 and "TELEMETRIA_METRICS_TOKEN" in anonymous.json()["detail"]
    else:
        assert right is not None and right.status_code == 200 and "telemetria_database_up 1.0" in right.text


def test_an_empty_metrics_token_is_no_token() -> None:
    assert Settings(metrics_token=SecretStr("")).metrics_token is None
    assert Settings(metrics_token=SecretStr("  ")).metrics_token is None
    assert Settings(metrics_token=SecretStr("t")).metrics_token == SecretStr("t")
