"""SQL of the reports: read-only queries, run through `app.state.reports_pool` (a replica when configured)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from telemetria.db import Pool

# Each vehicle's newest fix (valid or not) from latest_fixes, kept by the ingest writer: looking it
# up in `fixes` has no time bound and visits every chunk, years of them on an old installation.
LAST_FIXES = """
SELECT v.id AS vehicle_id, v.plate, f.last_ts, extract(epoch FROM now() - f.last_ts)::float8 AS age_s
FROM vehicles v
LEFT JOIN latest_fixes f ON f.vehicle_id = v.id
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


# --- what a report is about -------------------------------------------------------------------
# $1 the caller's contractor scope (NULL: everything), $2 vehicle ids (NULL: no filter),
# $3 contractor id, $4 route id (vehicles assigned to it in [$5, $6] local dates).
VEHICLES = """
SELECT v.id, v.plate, v.prefix, v.contractor_id, c.name AS contractor, v.speed_limit_kmh
FROM vehicles v LEFT JOIN contractors c ON c.id = v.contractor_id
WHERE ($1::int IS NULL OR v.contractor_id = $1)
  AND ($2::int[] IS NULL OR v.id = ANY ($2))
  AND ($3::int IS NULL OR v.contractor_id = $3)
  AND ($4::int IS NULL OR EXISTS (
        SELECT 1 FROM route_assignments a WHERE a.vehicle_id = v.id AND a.route_id = $4
          AND a.valid_from <= $6 AND (a.valid_to IS NULL OR a.valid_to >= $5)))
  AND ($2::int[] IS NOT NULL OR v.active)
ORDER BY v.plate"""

# Which vehicle runs which route on local dates [$2, $3] (the routes themselves: ROUTE_DETAILS).
ASSIGNMENTS = """
SELECT a.vehicle_id, a.route_id, a.valid_from, a.valid_to, a.weekdays
FROM route_assignments a
WHERE a.vehicle_id = ANY ($1) AND a.valid_from <= $3 AND (a.valid_to IS NULL OR a.valid_to >= $2)
ORDER BY a.vehicle_id, a.route_id"""

# The assignments of routes $1 that touch local dates [$2, $3] (the measurement's due runs).
ROUTE_ASSIGNMENTS = """
SELECT a.id, a.route_id, a.vehicle_id, a.valid_from, a.valid_to, a.weekdays
FROM route_assignments a
WHERE a.route_id = ANY ($1) AND a.valid_from <= $3 AND (a.valid_to IS NULL OR a.valid_to >= $2)
ORDER BY a.route_id, a.valid_from, a.id"""

ROUTE_DETAILS = """
SELECT r.id, r.code, r.name, r.geometry, r.speed_limit_kmh, r.deviation_tolerance_m,
       coalesce(r.declared_km, r.length_m / 1000) AS planned_km,
       coalesce((SELECT jsonb_agg(jsonb_build_object('seq', s.seq, 'name', s.name, 'lat', s.lat, 'lon', s.lon,
                                                     'kind', s.kind, 'scheduled_time', s.scheduled_time::text)
                                  ORDER BY s.seq)
                 FROM route_stops s WHERE s.route_id = r.id), '[]') AS stops
FROM routes r WHERE r.id = ANY ($1)"""

ZONES = "SELECT id, name, limit_kmh, geometry FROM speed_zones WHERE active ORDER BY id"

GENERATION = "SELECT n FROM report_generation"
# The cache of decoded routes is per database and generation (tests and tools open several databases).
GENERATION_OF_DB = "SELECT n, current_database() AS db FROM report_generation"

# One vehicle's fixes in [$2, $3) and up to $5 fixes on each side within $4 of it (context for the
# derivations at the window's edges). Sorted by the caller.
_FIX_COLUMNS = """extract(epoch FROM ts)::float8 AS t, lat, lon, speed_kmh, heading_deg, accuracy_m, ignition,
       odometer_m, valid, extract(epoch FROM received_at)::float8 AS received"""
TRACK = f"""
(SELECT {_FIX_COLUMNS} FROM fixes WHERE vehicle_id = $1 AND ts < $2 AND ts >= $2 - $4::interval
 ORDER BY ts DESC LIMIT $5)
UNION ALL
(SELECT {_FIX_COLUMNS} FROM fixes WHERE vehicle_id = $1 AND ts >= $2 AND ts < $3)
UNION ALL
(SELECT {_FIX_COLUMNS} FROM fixes WHERE vehicle_id = $1 AND ts >= $3 AND ts < $3 + $4::interval
 ORDER BY ts LIMIT $5)"""

# Drivers of a vehicle's fixes at the given instants (the card the fix carries, else the
# assignment), one row per instant in the order given.
DRIVERS_AT = """
SELECT u.ts, d.id, d.name
FROM unnest($2::timestamptz[]) WITH ORDINALITY AS u(ts, ord)
LEFT JOIN LATERAL (SELECT f.driver_id FROM fixes f WHERE f.vehicle_id = $1 AND f.ts = u.ts) f ON true
LEFT JOIN drivers d ON d.id = fix_driver($1, u.ts, f.driver_id)
ORDER BY u.ord"""

# --- rollups ----------------------------------------------------------------------------------
# Current rollups of the vehicles for local days [$2, $3] with basis $4: no stale mark pending.
ROLLUPS = """
SELECT r.vehicle_id, r.day, r.basis, r.fixes, r.kept, r.route_m, r.chord_m, r.gap_m, r.moving_s, r.max_kmh, r.trips,
       r.stops, r.unauthorized_stops, r.speeding, r.deviations, r.odometer_m, r.first_ts, r.last_ts
FROM report_rollups r
WHERE r.vehicle_id = ANY ($1) AND r.day BETWEEN $2 AND $3
  AND r.day <= (SELECT closed_through FROM rollup_horizon)
  AND NOT EXISTS (SELECT 1 FROM rollup_stale s WHERE s.vehicle_id = r.vehicle_id AND s.day = r.day)"""

# The neutral rows of kind $4 (events.py) kept by the same rollups.
ROLLUP_EVENTS = """
SELECT r.vehicle_id, r.day, r.basis, r.events -> $4::text AS rows FROM report_rollups r
WHERE r.vehicle_id = ANY ($1) AND r.day BETWEEN $2 AND $3
  AND r.day <= (SELECT closed_through FROM rollup_horizon)
  AND NOT EXISTS (SELECT 1 FROM rollup_stale s WHERE s.vehicle_id = r.vehicle_id AND s.day = r.day)"""

# The refresher's work: marks of closed days, oldest first.
STALE_MARKS = """
SELECT vehicle_id, day FROM rollup_stale WHERE day <= (SELECT closed_through FROM rollup_horizon)
GROUP BY vehicle_id, day ORDER BY min(marked_at) LIMIT $1"""
DELETE_MARKS = "DELETE FROM rollup_stale WHERE vehicle_id = $1 AND day = $2"
# Checking the rollups against the registry once it changed: each vehicle's rollups and their
# bases, and the generation last checked.
ROLLUP_BASES = "SELECT day, basis FROM report_rollups WHERE vehicle_id = $1 ORDER BY day"
ROLLED_VEHICLES = "SELECT DISTINCT vehicle_id FROM report_rollups ORDER BY vehicle_id"
CHECKED = "SELECT checked_generation FROM rollup_horizon"
SET_CHECKED = "UPDATE rollup_horizon SET checked_generation = $1"
MARK_DAYS = "INSERT INTO rollup_stale (vehicle_id, day) SELECT $1, unnest($2::date[])"
UPSERT_ROLLUP = """
INSERT INTO report_rollups (vehicle_id, day, basis, fixes, kept, route_m, chord_m, gap_m, moving_s, max_kmh,
                            trips, stops, unauthorized_stops, speeding, deviations, odometer_m, first_ts, last_ts,
                            events)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)
ON CONFLICT (vehicle_id, day) DO UPDATE SET
    basis = EXCLUDED.basis, fixes = EXCLUDED.fixes, kept = EXCLUDED.kept, route_m = EXCLUDED.route_m,
    chord_m = EXCLUDED.chord_m, gap_m = EXCLUDED.gap_m, moving_s = EXCLUDED.moving_s,
    max_kmh = EXCLUDED.max_kmh, trips = EXCLUDED.trips, stops = EXCLUDED.stops,
    unauthorized_stops = EXCLUDED.unauthorized_stops, speeding = EXCLUDED.speeding,
    deviations = EXCLUDED.deviations, odometer_m = EXCLUDED.odometer_m, first_ts = EXCLUDED.first_ts,
    last_ts = EXCLUDED.last_ts, events = EXCLUDED.events, computed_at = now()"""
VEHICLE_EXISTS = "SELECT EXISTS (SELECT 1 FROM vehicles WHERE id = $1)"

# Closing days (migrations/0007_report_rollups.sql): the horizon, moved under the lock every ingest
# write holds in SHARE mode, then the newly closed days' vehicle-days marked.
HORIZON = "SELECT closed_through, swept_through FROM rollup_horizon"
LOCK_INGEST = "LOCK TABLE tracker_installations IN SHARE ROW EXCLUSIVE MODE"
CLOSE_THROUGH = "UPDATE rollup_horizon SET closed_through = $1"
SWEPT_THROUGH = "UPDATE rollup_horizon SET swept_through = $1"
RESWEEP = "UPDATE rollup_horizon SET swept_through = NULL"
# Every vehicle-day of local days ($1, $2] ($1 NULL: from the first fix) that fixes can touch, in
# zone $3 with links of $4; and every day of an active vehicle since it was registered, so idle
# days get their (empty) rollup too and reports need not look at them again.
SWEEP = """
INSERT INTO rollup_stale (vehicle_id, day)
SELECT DISTINCT vehicle_id, day FROM (
    SELECT f.vehicle_id, d::date AS day
    FROM (SELECT vehicle_id, min(ts) AS lo, max(ts) AS hi FROM fixes
          WHERE ($1::date IS NULL OR ts >= (($1::date + 1)::timestamp AT TIME ZONE $3::text) - $4::interval)
            AND ts < (($2::date + 1)::timestamp AT TIME ZONE $3::text) + $4::interval
          GROUP BY vehicle_id) f,
         generate_series(greatest(((f.lo - $4::interval) AT TIME ZONE $3::text)::date, $1::date + 1),
                         least(((f.hi + $4::interval) AT TIME ZONE $3::text)::date, $2::date),
                         INTERVAL '1 day') AS d
    UNION ALL
    SELECT v.id, d::date
    FROM vehicles v,
         generate_series(greatest((v.created_at AT TIME ZONE $3::text)::date, $1::date + 1), $2::date,
                         INTERVAL '1 day') AS d
    WHERE v.active
) marks"""

# Drivers of a vehicle in [$2, $3): assigned in the period, or carried as a registered card.
DRIVERS_IN = """
SELECT d.name FROM drivers d
WHERE EXISTS (SELECT 1 FROM driver_assignments a
              WHERE a.driver_id = d.id AND a.vehicle_id = $1 AND a.during && tstzrange($2, $3))
   OR d.card_id IN (SELECT DISTINCT f.driver_id FROM fixes f
                    WHERE f.vehicle_id = $1 AND f.ts >= $2 AND f.ts < $3 AND f.driver_id IS NOT NULL)
ORDER BY d.name"""
