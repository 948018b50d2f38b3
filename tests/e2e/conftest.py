"""Fixtures that run the real CLI and the real server as separate processes."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator, Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import ScratchDb

CLI = [sys.executable, "-m", "telemetria.cli"]
ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def cli(env: dict[str, str], *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, cwd=ROOT, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"telemetria {' '.join(args)} failed: {proc.stderr}")
    return proc


@pytest.fixture
def fresh_cluster_env() -> Iterator[dict[str, str]]:
    """Settings for a local cluster of the test's own (not started), removed afterwards."""
    # Under /tmp itself: as root the cluster runs as `postgres`, which must reach the directory.
    data = tempfile.mkdtemp(prefix="telemetria-cluster-", dir="/tmp")
    os.chmod(data, 0o755)
    env = {k: v for k, v in os.environ.items() if k != "TELEMETRIA_DATABASE_URL"}
    env.update(TELEMETRIA_DATA_DIR=data, TELEMETRIA_DB_PORT=str(free_port()))
    yield env
    cli(env, "db", "stop", "--mode", "immediate", check=False)
    shutil.rmtree(data, ignore_errors=True)


@pytest.fixture(scope="session")
def db_env(test_db: ScratchDb) -> dict[str, str]:
    # The detector's process only where a test asks for it (TELEMETRIA_DETECTOR_INTERVAL_S): elsewhere it is load.
    return {**os.environ, "TELEMETRIA_DATABASE_URL": test_db.dsn, "TELEMETRIA_DETECTOR_INTERVAL_S": "0"}


@pytest.fixture
def server(db_env: dict[str, str]) -> Iterator[str]:
    """`telemetria serve` on a free port, as a real process; yields its base URL."""
    yield from serve(db_env)


def serve(env: dict[str, str], *args: str, log: Path | None = None) -> Generator[str, None, None]:
    """Start the server; the generator yields its URL once and stops it when closed.

    With `log`, the server's output goes to that file (to be read after it stops), else to a pipe."""
    port = free_port()
    out = log.open("w") if log else None
    proc = subprocess.Popen(
        [*CLI, "serve", "--port", str(port), *args],
        env=env,
        cwd=ROOT,
        stdout=out or subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    if out:
        out.close()  # the server holds its own copy of the file
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            if httpx.get(f"{url}/readyz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            said = proc.stdout.read() if proc.stdout else log.read_text() if log else ""
            raise AssertionError(f"server did not become ready: {said}")
        time.sleep(0.1)
    try:
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
