"""SQL of the reports: read-only queries, run through `app.state.reports_pool` (a replica when configured)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from telemetria.db import Pool

# One index probe per vehicle on fixes_vehicle_ts, newest chunk first (TimescaleDB's ordered
# append stops at the first chunk that has a row), so it stays cheap with years of data.
LAST_FIXES = """
SELECT v.id AS vehicle_id, v.plate, f.ts AS last_ts, extract(epoch FROM now() - f.ts)::float8 AS age_s
FROM vehicles v
LEFT JOIN LATERAL (SELECT ts FROM fixes WHERE vehicle_id = v.id ORDER BY ts DESC LIMIT 1) f ON true
WHERE v.active
ORDER BY v.plate"""


@dataclass(frozen=True, slots=True)
class LastFix:
    vehicle_id: int
    plate: str
    last_ts: datetime | None  # None: the vehicle never had a fix
    age_s: float | None  # seconds, by the database's clock


async def last_fixes(pool: Pool, timeout_s: float = 5.0) -> list[LastFix]:
    """Each active vehicle's newest fix time and its age in seconds."""
    rows = await pool.fetch(LAST_FIXES, timeout=timeout_s)
    return [LastFix(r["vehicle_id"], r["plate"], r["last_ts"], r["age_s"]) for r in rows]
