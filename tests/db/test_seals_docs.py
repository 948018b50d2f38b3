"""docs/verification.md's scripts, run on a real export and a real public answer: an auditor following the page
gets the seal's digest from the CSV and the published root from the day's leaves."""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
import sys
from datetime import UTC, datetime, time, timedelta
from pathlib import Path

import asyncpg
import httpx

from telemetria.app import create_app
from telemetria.localtime import LOCAL_TZ
from telemetria.seals import canonical
from tests.conftest import ScratchDb
from tests.db.conftest import People, register
from tests.db.test_seals import post, refresh

DOC = Path(__file__).resolve().parents[2] / "docs" / "verification.md"
DAY = datetime.now(LOCAL_TZ).date() - timedelta(days=3)


def script(name: str) -> str:
    """The ```python block of the page that starts with `# <name>`."""
    found = re.search(rf"```python\n(# {re.escape(name)}.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert found, f"no {name} in {DOC.name}"
    return found.group(1)


def run(tmp_path: Path, name: str, *args: str) -> bytes:
    (tmp_path / name).write_text(script(name), encoding="utf-8")
    done = subprocess.run([sys.executable, str(tmp_path / name), *args], capture_output=True, check=True)
    return done.stdout


def fixes(n: int, start: datetime, lat: float) -> list[dict[str, object]]:
    return [
        {"ts": (start + timedelta(seconds=30 * i, microseconds=400_000)).isoformat(), "lat": lat + i * 0.00021,
         "lon": -62.4668301 - i * 0.00007, **({"speed_kmh": 30.04 + 3.3 * i} if i % 3 else {})}
        for i in range(n)
    ]  # fmt: skip


async def test_the_pages_scripts_give_the_seal_and_the_root(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People, test_db: ScratchDb,
    tmp_path: Path,
) -> None:  # fmt: skip
    since = datetime.now(UTC) - timedelta(days=30)
    trackers = [await register(conn, plate, f"doc-{plate}", since) for plate in ("NBX4C21", "NBX4C22", "NBX4C23")]
    start = datetime.combine(DAY, time(6, 40, 12), LOCAL_TZ).astimezone(UTC)
    for k, t in enumerate(trackers):
        await post(client, t, fixes(40 + k, start + timedelta(minutes=k), -10.4375123 - k / 100))
    # One fix just after the local midnight that ends the day, one just before it starts: not the day's.
    await post(client, trackers[0], fixes(1, datetime.combine(DAY, time(), LOCAL_TZ) - timedelta(seconds=1), -10.4))
    await refresh(pool)
    seal = await conn.fetchrow("SELECT * FROM day_seals WHERE vehicle_id = $1 AND day = $2", trackers[0].vehicle_id,
                               DAY)  # fmt: skip

    r = await client.get(
        "/api/v1/reports/track", headers=people.auth("admin"),
        params={"vehicle_id": str(trackers[0].vehicle_id), "from": DAY.isoformat(), "to": DAY.isoformat(),
                "format": "csv"},
    )  # fmt: skip
    assert r.status_code == 200
    (tmp_path / "trajetoria.csv").write_bytes(r.content)
    lines = run(tmp_path, "linhas.py", str(tmp_path / "trajetoria.csv"), "NBX4C21", DAY.strftime("%d/%m/%Y"))
    assert lines.count(b"\n") == seal["fixes"] == 40
    assert hashlib.sha256(lines).hexdigest() == seal["sha256"]

    app = create_app(test_db.settings(rollup_interval_s=0, public_enabled=True))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://test") as public:
            r = await public.get(f"/public/seals/{DAY.isoformat()}")
    assert r.status_code == 200 and len(r.json()["leaves"]) == 3
    (tmp_path / "dia.json").write_bytes(r.content)
    leaves = [x["leaf_sha256"] for x in r.json()["leaves"]]
    for i, t in enumerate(trackers):
        proof, result = run(tmp_path, "raiz.py", str(tmp_path / "dia.json"), str(t.vehicle_id)).decode().splitlines()
        assert result == f"{r.json()['roots'][-1]['root_sha256']} True"
        assert [tuple(x) for x in ast.literal_eval(proof)] == canonical.merkle_path(leaves, i)
