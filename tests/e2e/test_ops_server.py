"""The real server for operations: /readyz follows the database down and back up; with two worker
processes, /metrics counts every fix once whichever worker answers the scrape."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.e2e.conftest import cli, serve


def wait_for(check: Callable[[], bool], seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return False


def test_readyz_goes_unready_while_the_database_is_down(fresh_cluster_env: dict[str, str]) -> None:
    env = fresh_cluster_env
    cli(env, "db", "start")
    cli(env, "migrate")
    server = serve(env)
    url = next(server)  # serve() waits for /readyz 200
    try:
        cli(env, "db", "stop", "--mode", "fast")
        down: list[httpx.Response] = []

        def unready() -> bool:
            down.append(httpx.get(f"{url}/readyz", timeout=10))
            return down[-1].status_code == 503

        assert wait_for(unready)
        assert "unreachable" in down[-1].json()["database"]
        assert httpx.get(f"{url}/healthz").status_code == 200  # the process is still up
        cli(env, "db", "start")
        assert wait_for(lambda: httpx.get(f"{url}/readyz", timeout=10).status_code == 200)
        assert httpx.get(f"{url}/readyz").json() == {"status": "ready"}
    finally:
        server.close()


def accepted_total(url: str) -> float:
    text = httpx.get(f"{url}/metrics", headers={"Connection": "close"}).text
    return sum(
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "telemetria_ingest_fixes_total" and s.labels.get("outcome") == "accepted"
    )


def test_metrics_add_up_across_worker_processes(db_env: dict[str, str]) -> None:
    t = json.loads(cli(db_env, "vehicle", "add", "--plate", "MET1A00").stdout)
    assert t["plate"] == "MET1A00"
    token = json.loads(cli(db_env, "tracker", "add", "--unique-id", "met-0001", "--vehicle", "MET1A00").stdout)["token"]
    server = serve(db_env, "--workers", "2")
    url = next(server)
    try:
        pids = set()
        start = datetime.now(UTC) - timedelta(hours=1)
        for i in range(40):  # a fresh connection each, so both workers take some
            r = httpx.post(
                f"{url}/api/v1/fixes",
                json={"ts": (start + timedelta(seconds=i)).isoformat(), "lat": -10.4, "lon": -62.4},
                headers={"Authorization": f"Bearer {token}", "Connection": "close"},
            )
            assert r.json()["accepted"] == 1
            pids.add(httpx.get(f"{url}/healthz", headers={"Connection": "close"}).json()["pid"])
        assert len(pids) == 2, pids
        # Every scrape, answered by either worker, sees all 40 (this server's counters start at 0).
        assert {accepted_total(url) for _ in range(10)} == {40.0}
        text = httpx.get(f"{url}/metrics").text
        assert 'telemetria_vehicle_last_fix_age_seconds{vehicle="MET1A00"}' in text
    finally:
        server.close()
