"""Schemathesis over every operation of the OpenAPI document, on the in-process app and the real database:
no request, valid or not, is answered with a 5xx (schemathesis' `not_a_server_error` check).

Cases are generated first (hypothesis, a fixed seed, a fixed number per operation and mode) and then sent with
an in-process client like the suite's `client`, so the app runs in the test's own event loop. Every operation is
fuzzed, writes included, as the admin (the ingest endpoints as a registered tracker). Between requests the test
restores what fuzzed writes may take from it: its admin token (revoked, its user demoted or deactivated) and its
tracker (token rotated, deactivated); nothing is excluded.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import AsyncIterator
from datetime import datetime, timedelta
from typing import Any

import asyncpg
import httpx
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import Case, GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.core.failures import Failure
from schemathesis.core.result import Ok
from schemathesis.errors import FailureGroup

from telemetria.app import create_app
from telemetria.auth import store
from telemetria.auth.roles import Role
from telemetria.localtime import LOCAL_TZ
from telemetria.registry import fleet
from tests.conftest import ScratchDb, reset_classification
from tests.db.conftest import PASSWORD, Tracker, make_people, register
from tests.db.world import make_world

SEED = 20260630
REQUEST_ARGS = ("method", "url", "headers", "params", "json", "data", "files", "cookies")
INGEST = ("/api/v1/fixes", "/osmand")
Pass = tuple[GenerationMode, int, dict[str, Any]]  # mode, examples, parameters held fixed


def passes(operation: Any, spec: dict[str, Any], device: str) -> list[Pass]:
    """Per operation: schema-valid requests, requests that break the schema (not every operation has something
    to break: one without parameters has none), and valid requests anchored on real values where random ones
    would almost never get past the first check (a report period, a registered device and a position)."""
    out: list[Pass] = [(GenerationMode.POSITIVE, 24, {}), (GenerationMode.NEGATIVE, 16, {})]
    params = {p["name"] for p in spec["paths"][operation.path][operation.method.lower()].get("parameters", [])}
    if {"from", "to", "tz"} <= params:
        today = datetime.now(LOCAL_TZ).date()
        period = {"from": str(today - timedelta(days=1)), "to": str(today), "tz": LOCAL_TZ.key}
        out.append((GenerationMode.POSITIVE, 12, {"query": period}))
    if operation.path == "/osmand":  # without the device's id, every request stops at 403
        out.append((GenerationMode.POSITIVE, 12, {"query": {"id": device}}))
        out.append((GenerationMode.POSITIVE, 12, {"query": {"id": device, "lat": "-10.44", "lon": "-62.47"}}))
    return out


def generate(operation: Any, mode: GenerationMode, examples: int, fixed: dict[str, Any]) -> list[Case]:
    cases: list[Case] = []

    @seed(SEED)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(operation.as_strategy(generation_mode=mode, **fixed))
    def collect(case: Case) -> None:
        cases.append(case)

    try:
        collect()
    except Unsatisfiable:  # nothing in this operation can be made invalid
        pass
    return cases


def wire(case: Case) -> tuple[str, str, dict[str, str], bytes | str | None]:
    """The request as schemathesis would send it (method, URL, headers, body), for httpx to send in-process."""
    kwargs = case.as_transport_kwargs(base_url="http://test")
    prepared = requests.Request(**{k: kwargs[k] for k in REQUEST_ARGS if k in kwargs}).prepare()
    skip = {"content-length", "transfer-encoding", "authorization"}  # httpx sets the lengths, the test the token
    headers = {k: v if isinstance(v, str) else v.decode("latin-1") for k, v in prepared.headers.items()}
    body = prepared.body
    assert prepared.method and prepared.url and (body is None or isinstance(body, bytes | str))
    return prepared.method, prepared.url, {k: v for k, v in headers.items() if k.lower() not in skip}, body


@pytest.fixture
async def fuzz_client(test_db: ScratchDb) -> AsyncIterator[httpx.AsyncClient]:
    """The `client` fixture's app, but an exception escaping it is a 500 answer here, not a test error."""
    app = create_app(test_db.settings(rollup_interval_s=0))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://test", timeout=60) as c:
            yield c


class Credentials:
    """An admin token and a tracker, renewed when a fuzzed write has taken them away."""

    def __init__(self, conn: asyncpg.Connection, admin_token: str, tracker: Tracker) -> None:
        self.conn = conn
        self.admin_token = admin_token
        self.tracker = tracker
        self.renewed = Counter[str]()

    async def check_admin(self) -> None:
        who = await store.token_principal(self.conn, self.admin_token)
        if who is None or who.role is not Role.ADMIN:
            self.renewed["admin"] += 1
            user = await store.add_user(self.conn, f"fuzzadmin{self.renewed['admin']}", PASSWORD, Role.ADMIN)
            self.admin_token = (await store.create_token(self.conn, user["id"], "fuzz"))["token"]

    async def check_tracker(self) -> None:
        active = await self.conn.fetchval(
            "SELECT active FROM trackers WHERE token_hash = $1", fleet.token_hash(self.tracker.token)
        )
        if not active:
            self.renewed["tracker"] += 1
            n = self.renewed["tracker"]
            self.tracker = await register(self.conn, f"FZZ{n % 10}F{n // 10 % 100:02d}", f"fuzz-tracker-{n}")


async def test_no_operation_answers_a_5xx(
    fuzz_client: httpx.AsyncClient, conn: asyncpg.Connection, clean: None
) -> None:
    people = await make_people(conn)
    await make_world(conn, people)
    creds = Credentials(conn, people.tokens["admin"], await register(conn, "FZZ0F00", "fuzz-tracker-0"))
    for i in range(5):  # a little history for the reports and the live map
        fix = {"ts": int(time.time()) - 600 + 60 * i, "lat": -10.44 + 1e-4 * i, "lon": -62.47}
        r = await fuzz_client.post("/api/v1/fixes", json=fix, headers=creds.tracker.auth)
        assert r.status_code == 200, r.text

    spec = (await fuzz_client.get("/openapi.json")).json()
    schema = schemathesis.openapi.from_dict(spec)
    results = list(schema.get_all_operations())
    operations = [result.ok() for result in results if isinstance(result, Ok)]
    assert len(operations) == len(results) >= 57  # every documented operation, ingest included, is fuzzed

    statuses: Counter[int] = Counter()
    failures: list[str] = []
    started = time.perf_counter()
    for operation in operations:
        path = operation.path
        for mode, examples, fixed in passes(operation, spec, creds.tracker.unique_id):
            for case in generate(operation, mode, examples, fixed):
                method, url, headers, body = wire(case)
                if path == "/api/v1/fixes":
                    await creds.check_tracker()
                    headers["Authorization"] = f"Bearer {creds.tracker.token}"
                elif path not in INGEST:
                    headers["Authorization"] = f"Bearer {creds.admin_token}"
                response = await fuzz_client.request(method, url, headers=headers, content=body)
                statuses[response.status_code] += 1
                try:
                    case.validate_response(response, checks=[not_a_server_error])
                except (Failure, FailureGroup) as e:  # schemathesis' failure, with the request to reproduce it
                    failures.append(f"{operation.label} [{mode.value}] → {response.status_code}: {e}\n"
                                    f"{method} {url}\n{headers}\n{body!r:.500}\n{response.text[:500]}")  # fmt: skip
                if method != "GET":
                    await creds.check_admin()
    await reset_classification(conn)  # the fuzzed PUTs of /occurrence-kinds must not reach the tests after this one
    took = time.perf_counter() - started
    print(f"\nschemathesis: {sum(statuses.values())} requests over {len(operations)} operations in {took:.1f} s; "
          f"statuses {dict(sorted(statuses.items()))}; renewed {dict(creds.renewed)}")  # fmt: skip
    assert not failures, "\n\n".join(failures[:10])
    assert sum(statuses.values()) >= 10 * len(operations)
