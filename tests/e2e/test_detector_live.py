"""The detector in a real server process: fixes posted over HTTP become a stored occurrence within 60 s.

The server runs its detector (in the child process it starts at lower CPU priority) every second; the test
posts a live speeding episode, then the fix that ends it, and waits for the occurrence to be in the database.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta

import asyncpg
import httpx
import orjson

from telemetria.registry import fleet
from tests.e2e.conftest import serve

LINE = {"type": "LineString", "coordinates": [[-62.4700, -10.4400], [-62.4500, -10.4400]]}


async def test_a_speeding_episode_is_stored_within_60_s_of_the_fix_that_ends_it(
    db_env: dict[str, str], conn: asyncpg.Connection, clean: None
) -> None:
    vehicle = await fleet.add_vehicle(conn, "DET1E23")
    tracker = await fleet.add_tracker(conn, "detector-e2e-1", "DET1E23")
    route = await conn.fetchval(
        "INSERT INTO routes (code, name, school_year, geometry, length_m) VALUES ('DETE2E', 'Linha', 2026, $1, 2200)"
        " RETURNING id",
        LINE,
    )
    await conn.execute(
        "INSERT INTO route_assignments (route_id, vehicle_id, valid_from, weekdays)"
        " VALUES ($1, $2, '2026-01-01', '{1,2,3,4,5,6,7}')",
        route,
        vehicle["id"],
    )
    # Nice 0: on a loaded CI machine a niced detector may wait its turn longer than the test does.
    server = serve({**db_env, "TELEMETRIA_DETECTOR_INTERVAL_S": "1", "TELEMETRIA_DETECTOR_NICE": "0"})
    url = next(server)
    try:
        t0 = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=200)
        # 88 km/h for 90 s on a 60 km/h route, along the line, then back to 30 km/h (the completing fix).
        fixes = [
            {"ts": (t0 + timedelta(seconds=15 * k)).isoformat(), "lat": -10.44, "lon": -62.47 + 0.0004 * k,
             "speed_kmh": 88.0 if 2 <= k <= 8 else 30.0}
            for k in range(11)
        ]  # fmt: skip
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {tracker['token']}"}) as http:
            r = await http.post("/api/v1/fixes", content=orjson.dumps({"fixes": fixes}),
                                headers={"Content-Type": "application/json"})  # fmt: skip
            assert r.status_code == 200 and r.json()["accepted"] == len(fixes), r.text
        posted = time.monotonic()
        row = None
        while time.monotonic() - posted < 60:
            row = await conn.fetchrow(
                "SELECT * FROM occurrences WHERE vehicle_id = $1 AND kind = 'speeding'", vehicle["id"]
            )
            if row is not None:
                break
            await asyncio.sleep(0.5)
        assert row is not None, "no speeding occurrence 60 s after the fixes were posted"
        assert row["status"] == "detected" and not row["late"]
        # the episode starts midway between the last fix under the limit (k=1) and the first above it (k=2), issue 34
        assert row["start_ts"] == t0 + timedelta(seconds=22.5) and row["facts"]["max_kmh"] == 88.0
        assert row["article"] == "Art. 37, X" and row["route_id"] == route
        history = await conn.fetch("SELECT actor, action FROM occurrence_history WHERE occurrence_id = $1", row["id"])
        assert [(h["actor"], h["action"]) for h in history] == [("detector", "detected")]
    finally:
        server.close()
