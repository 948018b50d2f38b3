"""SQL of the live map: the newest fix of each visible vehicle and its recent trail."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from telemetria.db import Conn

# $1 the caller's contractor scope (NULL: every contractor), $2 one vehicle (NULL: all), $3 the
# service's local date (for the route assigned today). The newest valid fix is the vehicle's row of
# latest_fixes (kept by the ingest writer), so the poll costs the same on a two-year-old
# installation as on a new one; the driver is the fix's card, else the assignment (fix_driver).
# Scope by day (issue 33, migrations/0028): a vehicle is on the map of the contractor that has it today (a move
# dated ahead changes nothing until its day), and its newest fix is shown to a contractor only when that
# contractor had the vehicle on the fix's local day (a vehicle moved from B to A shows A no position of B's days).
LIVE = """
SELECT v.id AS vehicle_id, v.plate, v.prefix, k.contractor_id, c.name AS contractor,
       f.valid_ts AS ts, extract(epoch FROM now() - f.valid_ts)::float8 AS age_s, f.received_at,
       f.lat, f.lon, f.speed_kmh, f.heading_deg, f.ignition,
       d.id AS driver_id, d.name AS driver,
       (SELECT string_agg(r.code, ', ' ORDER BY r.code)
          FROM route_assignments a JOIN routes r ON r.id = a.route_id
         WHERE a.vehicle_id = v.id AND a.valid_from <= $3 AND (a.valid_to IS NULL OR a.valid_to >= $3)
           AND extract(isodow FROM $3::date)::smallint = ANY (a.weekdays)) AS routes
FROM vehicles v
CROSS JOIN LATERAL (SELECT vehicle_contractor_on(v.id, $3::date) AS contractor_id) k
LEFT JOIN contractors c ON c.id = k.contractor_id
LEFT JOIN latest_fixes f ON f.vehicle_id = v.id
      AND ($1::int IS NULL OR vehicle_in_scope($1, v.id, (f.valid_ts AT TIME ZONE 'America/Porto_Velho')::date))
LEFT JOIN drivers d ON d.id = fix_driver(v.id, coalesce(f.valid_ts, now()), f.driver_id)
WHERE v.active AND ($1::int IS NULL OR k.contractor_id = $1) AND ($2::int IS NULL OR v.id = $2)
ORDER BY v.plate"""

# The last positions of the vehicles $1 since $2, oldest first (the trail behind each marker); for contractor $3
# (NULL: every one) only those of the local days it had the vehicle.
TRAILS = """
SELECT vehicle_id, array_agg(lat ORDER BY ts) AS lat, array_agg(lon ORDER BY ts) AS lon
FROM fixes
WHERE vehicle_id = ANY ($1) AND ts >= $2 AND ts <= now() + interval '5 minutes' AND valid
  AND ($3::int IS NULL OR vehicle_in_scope($3, vehicle_id, (ts AT TIME ZONE 'America/Porto_Velho')::date))
GROUP BY vehicle_id"""


async def live(conn: Conn, scope: int | None, vehicle_id: int | None, today: Any) -> list[Any]:
    return list(await conn.fetch(LIVE, scope, vehicle_id, today))


async def trails(
    conn: Conn, vehicle_ids: list[int], since: datetime, scope: int | None = None
) -> dict[int, list[list[float]]]:
    """Each vehicle's positions since `since` as [lat, lon] pairs, oldest first (of `scope`'s days only)."""
    rows = await conn.fetch(TRAILS, vehicle_ids, since, scope)
    return {r["vehicle_id"]: [[la, lo] for la, lo in zip(r["lat"], r["lon"], strict=True)] for r in rows}
