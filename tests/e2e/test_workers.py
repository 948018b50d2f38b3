"""`telemetria serve --workers 2`: both processes take connections, and a dead one is replaced."""

from __future__ import annotations

import os
import signal
import time

import httpx

from tests.e2e.conftest import serve


def pids_answering(url: str, n: int = 60) -> set[int]:
    # A fresh connection per request, so the kernel picks a process each time.
    return {httpx.get(f"{url}/healthz", headers={"Connection": "close"}).json()["pid"] for _ in range(n)}


def test_two_workers_share_the_port_and_survive_a_kill(db_env: dict[str, str]) -> None:
    server = serve(db_env, "--workers", "2")
    url = next(server)
    try:
        deadline = time.monotonic() + 20
        pids = pids_answering(url)
        while len(pids) < 2 and time.monotonic() < deadline:  # the second may still be starting
            time.sleep(0.2)
            pids |= pids_answering(url)
        assert len(pids) == 2, pids
        victim = min(pids)
        os.kill(victim, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            time.sleep(0.3)
            now = pids_answering(url, 30)
            if len(now) == 2 and victim not in now:
                break
        assert len(now) == 2 and victim not in now, now
    finally:
        server.close()
