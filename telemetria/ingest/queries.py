"""SQL of the ingest path: resolve trackers to vehicles at fix time, then insert with dedup."""

from __future__ import annotations

# Held for the writer's transaction: a tracker move (SHARE ROW EXCLUSIVE) waits for in-flight
# writes and re-attributes them, and writes after it see the new installation.
BEGIN_LOCKED = "BEGIN; LOCK TABLE tracker_installations IN SHARE MODE"

INSTALLATIONS = """
SELECT t.id AS tracker_id, t.active, i.vehicle_id, lower(i.during) AS since, upper(i.during) AS until
FROM trackers t LEFT JOIN tracker_installations i ON i.tracker_id = t.id
WHERE t.id = ANY($1::int[])"""

INSERT_FIXES = """
INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon, speed_kmh, heading_deg, altitude_m,
                   accuracy_m, hdop, satellites, ignition, odometer_m, driver_id, valid, attributes)
SELECT * FROM unnest($1::int[], $2::int[], $3::timestamptz[], $4::float8[], $5::float8[],
                     $6::real[], $7::real[], $8::real[], $9::real[], $10::real[], $11::int2[],
                     $12::bool[], $13::float8[], $14::text[], $15::bool[], $16::jsonb[])
ON CONFLICT (vehicle_id, ts) DO NOTHING
RETURNING vehicle_id, ts"""

TRACKER_BY_TOKEN = "SELECT id FROM trackers WHERE token_hash = $1 AND active"

TRACKER_BY_UNIQUE_ID = "SELECT id FROM trackers WHERE unique_id = $1 AND active"

FIX_TOTALS = "SELECT count(*) AS n, count(DISTINCT vehicle_id) AS v, max(ts) AS last FROM fixes"
