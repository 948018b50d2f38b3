"""`telemetria demo` (what `./dev run` starts) on an empty database: once the service is up it fills in the past
school days through its own API (sim/backfill.py), so the first screen has something to act on (issue 36, item 7);
a second start changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg

from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings
from telemetria.sim.backfill import closed_month
from telemetria.sim.demo import DEMO_SINCE_DAYS
from tests.conftest import scratch_database
from tests.e2e.conftest import CLI, ROOT, free_port

DONE = "[demo] past weeks filled in"
STARTED = "[demo] filling in the school days"
FAILED = "[demo] filling in the past weeks failed"

FACTS = """
SELECT (SELECT count(*) FROM fixes WHERE ts < $1) AS past_fixes,
       (SELECT count(DISTINCT day) FROM day_seals WHERE day < $2) AS sealed_days,
       (SELECT count(*) FROM run_justifications WHERE day < $2) AS justified,
       (SELECT count(*) FROM users) AS users,
       (SELECT count(*) FROM occurrences) AS occurrences"""
STEPS = "SELECT status, penalty, fine_upfm, fine_brl FROM occurrences WHERE status NOT IN ('detected', 'withdrawn')"


def _start(env: dict[str, str], log: Path) -> subprocess.Popen[str]:
    with log.open("w") as out:
        return subprocess.Popen([*CLI, "demo", "--host", "127.0.0.1", "--port", str(free_port())], env=env, cwd=ROOT,
                                stdout=out, stderr=subprocess.STDOUT, text=True)  # fmt: skip


def _until_done(proc: subprocess.Popen[str], log: Path) -> str:
    """The console once the backfill is done; fails at once if the demo stops, says it failed, or never starts it."""
    t0 = time.monotonic()
    try:
        while True:
            text = log.read_text()
            assert FAILED not in text and proc.poll() is None, text
            if DONE in text:
                return text
            waited = time.monotonic() - t0
            assert waited < 60 or STARTED in text, f"no backfill started:\n{text}"
            assert waited < 300, f"backfill not done in 300 s:\n{text}"
            time.sleep(1.0)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()


async def _facts(conn: asyncpg.Connection, today: date) -> dict[str, Any]:
    since = datetime.combine(today, datetime.min.time(), LOCAL_TZ)
    out = dict(await conn.fetchrow(FACTS, since, today))
    out["steps"] = sorted(tuple(map(str, r.values())) for r in await conn.fetch(STEPS))
    out["closures"] = await conn.fetchval("SELECT count(*) FROM measurement_closures")
    return out


async def test_the_demo_fills_in_its_past_weeks_once(base_settings: Settings, tmp_path: Path) -> None:
    async with scratch_database(base_settings, "telemetria_demo_backfill") as db:
        env = {k: v for k, v in os.environ.items() if k != "TELEMETRIA_UPFM_BRL"}  # the demo seeds the year's value
        env.update(TELEMETRIA_DATABASE_URL=db.dsn, TELEMETRIA_DATA_DIR=str(tmp_path))
        today = datetime.now(LOCAL_TZ).date()
        first = _until_done(_start(env, tmp_path / "first.log"), tmp_path / "first.log")
        # The service answers before the past is filled in: the console says so, then what was done.
        assert first.index("Telemetria is running") < first.index(STARTED) < first.index(DONE)
        assert "UPFM" in first and "example value" in first
        assert "school days sealed" in first

        conn = await asyncpg.connect(db.dsn)
        try:
            facts = await _facts(conn, today)
            assert facts["past_fixes"] > 5000 and facts["sealed_days"] >= 10 and facts["justified"] == 1, facts
            assert facts["users"] == 2  # the admin and the contractor's user who defends and appeals
            statuses = [s[0] for s in facts["steps"]]
            assert sorted(statuses) == ["confirmed", "decided", "defense", "notified", "under_appeal"], facts
            for status, penalty, fine_upfm, fine_brl in facts["steps"]:
                if status in ("decided", "under_appeal"):
                    assert "fine" in penalty and float(fine_upfm) > 0 and float(fine_brl) > 0, facts["steps"]
            month = closed_month(today)
            if today - timedelta(days=DEMO_SINCE_DAYS) <= month + timedelta(days=27):
                content = await conn.fetchval(
                    "SELECT convert_from(content, 'UTF8') FROM measurement_closures WHERE month = $1", month
                )
                runs = json.loads(content)["runs"]
                assert {r["status"] for r in runs} == {"made", "partial", "not_made"}, runs
                assert any(r["substitution"] and r["status"] == "made" for r in runs)
            # the current month: a not-made run the Secretaria justified
            justified = await conn.fetchrow("SELECT route_id, day, reason FROM run_justifications")
            assert justified["reason"].strip()

            second = _until_done(_start(env, tmp_path / "second.log"), tmp_path / "second.log")
            assert "0 fixes stored" in second, second
            again = await _facts(conn, today)
            same = ("past_fixes", "justified", "users", "steps", "closures")
            assert {k: again[k] for k in same} == {k: facts[k] for k in same}
        finally:
            await conn.close()
