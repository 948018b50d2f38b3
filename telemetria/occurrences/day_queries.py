"""SQL of the day panel (`GET /api/v1/day`): the fleet's newest fixes and today's open alerts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from telemetria.db import Conn

# $1 the caller's contractor scope (NULL: all). Active vehicles with their newest valid fix (latest_fixes, kept by
# the ingest writer: the panel costs the same on an old installation as on a new one). Scope by day (issue 33,
# as the live map): the contractor that has the vehicle today, and its newest fix only if of one of its days.
FLEET = """
SELECT v.id, v.plate, v.prefix, k.contractor_id, c.name AS contractor,
       f.valid_ts AS ts, f.lat, f.lon, f.speed_kmh
FROM vehicles v
CROSS JOIN LATERAL (SELECT vehicle_contractor_on(v.id, (now() AT TIME ZONE 'America/Porto_Velho')::date)
                           AS contractor_id) k
LEFT JOIN contractors c ON c.id = k.contractor_id
LEFT JOIN latest_fixes f ON f.vehicle_id = v.id
      AND ($1::int IS NULL OR vehicle_in_scope($1, v.id, (f.valid_ts AT TIME ZONE 'America/Porto_Velho')::date))
WHERE v.active AND ($1::int IS NULL OR k.contractor_id = $1)
ORDER BY v.plate"""

# Occurrences since $1 (the local midnight starting yesterday) that nobody has reviewed yet (status detected), per
# kind: not only today's, so that just after midnight the alerts of the evening before still wait on the panel;
# whole local days, so that the occurrences list opened on the same days (from yesterday to today) shows exactly
# these (issue 36: the panel said 70 waiting and its link opened 52).
OPEN_ALERTS = """
SELECT kind, count(*)::int AS n
FROM occurrences
WHERE start_ts >= $1::timestamptz AND status = 'detected'
GROUP BY kind
ORDER BY kind"""


@dataclass(frozen=True, slots=True)
class FleetRow:
    vehicle_id: int
    plate: str
    prefix: str | None
    contractor_id: int | None
    contractor: str | None
    ts: datetime | None  # the newest valid fix's time (None: never reported)
    lat: float | None
    lon: float | None
    speed_kmh: float | None


async def fleet(conn: Conn, scope: int | None) -> list[FleetRow]:
    return [
        FleetRow(r["id"], r["plate"], r["prefix"], r["contractor_id"], r["contractor"], r["ts"], r["lat"], r["lon"],
                 r["speed_kmh"])
        for r in await conn.fetch(FLEET, scope)
    ]  # fmt: skip


async def open_alerts(conn: Conn, since: datetime) -> dict[str, int]:
    """Kind → how many occurrences starting from `since` on still wait for review."""
    return {r["kind"]: r["n"] for r in await conn.fetch(OPEN_ALERTS, since)}
