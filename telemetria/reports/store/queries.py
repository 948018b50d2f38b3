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
# The registry a report reads is its versions (migrations/0011_registry_versions.sql): each version in
# force with the local days it applies to, `during` (lower bound NULL: from the beginning).
# $1 the caller's contractor scope (NULL: everything): the vehicles it had on some day of [$5, $6] (0028),
# $2 vehicle ids (NULL: no filter),
# $3 contractor id, $4 route id (vehicles assigned to it on some day of [$5, $6] local dates).
VEHICLES = """
SELECT v.id, v.plate, v.prefix, v.contractor_id, c.name AS contractor, v.speed_limit_kmh
FROM vehicles v LEFT JOIN contractors c ON c.id = v.contractor_id
WHERE ($1::int IS NULL OR EXISTS (
        SELECT 1 FROM vehicle_contractor_spans s
        WHERE s.vehicle_id = v.id AND s.contractor_id = $1 AND s.during && daterange($5, $6, '[]')))
  AND ($2::int[] IS NULL OR v.id = ANY ($2))
  AND ($3::int IS NULL OR v.contractor_id = $3)
  AND ($4::int IS NULL OR EXISTS (
        SELECT 1 FROM registry_versions_in_force a
        WHERE a.kind = 'route_assignment' AND a.data IS NOT NULL
          AND (a.data ->> 'vehicle_id')::int = v.id AND (a.data ->> 'route_id')::int = $4
          AND a.during && daterange($5, $6, '[]')
          AND (a.data ->> 'valid_from')::date <= $6
          AND (a.data ->> 'valid_to' IS NULL OR (a.data ->> 'valid_to')::date >= $5)))
  AND ($2::int[] IS NOT NULL OR v.active)
ORDER BY v.plate"""

# The local days contractor $2 had each vehicle $1 on: (vehicle_id, lo, hi), hi exclusive, NULL bounds open
# (migrations/0028_scope_by_day.sql).
SCOPE_SPANS = """
SELECT s.vehicle_id, lower(s.during) AS lo, upper(s.during) AS hi FROM vehicle_contractor_spans s
WHERE s.vehicle_id = ANY ($1::int[]) AND s.contractor_id = $2 AND NOT isempty(s.during)
ORDER BY s.vehicle_id, lo NULLS FIRST"""

# The assignment versions in force on some day of local dates [$2, $3] whose own period touches it:
# vehicles $1 (the reports), or routes $4 (the measurement's due runs). lo/hi: `during`'s bounds.
_ASSIGNMENT_VERSIONS = """
SELECT a.item_id AS id, a.id AS version, (a.data ->> 'vehicle_id')::int AS vehicle_id,
       (a.data ->> 'route_id')::int AS route_id, (a.data ->> 'valid_from')::date AS valid_from,
       (a.data ->> 'valid_to')::date AS valid_to,
       ARRAY(SELECT jsonb_array_elements_text(a.data -> 'weekdays')::int) AS weekdays,
       lower(a.during) AS lo, upper(a.during) AS hi
FROM registry_versions_in_force a
WHERE a.kind = 'route_assignment' AND a.data IS NOT NULL AND a.during && daterange($2, $3, '[]')
  AND (a.data ->> 'valid_from')::date <= $3 AND (a.data ->> 'valid_to' IS NULL OR (a.data ->> 'valid_to')::date >= $2)
"""
ASSIGNMENTS = (
    _ASSIGNMENT_VERSIONS
    + """  AND (a.data ->> 'vehicle_id')::int = ANY ($1)
ORDER BY vehicle_id, route_id, a.valid_from"""
)
ROUTE_ASSIGNMENTS = (
    _ASSIGNMENT_VERSIONS
    + """  AND (a.data ->> 'route_id')::int = ANY ($1)
ORDER BY route_id, valid_from, id, a.valid_from"""
)

# The versions of routes $1 in force on some day of local dates [$2, $3].
ROUTE_VERSIONS = """
SELECT v.item_id AS route_id, v.id AS version, v.txid, lower(v.during) AS lo, upper(v.during) AS hi
FROM registry_versions_in_force v
WHERE v.kind = 'route' AND v.item_id = ANY ($1) AND v.data IS NOT NULL AND v.during && daterange($2, $3, '[]')
ORDER BY v.item_id, v.valid_from"""

# Route versions $1, decoded as the reports use them (ROUTE_VERSIONS says which apply when).
ROUTE_DETAILS = """
SELECT v.id AS version, v.txid, v.item_id AS id, v.data ->> 'code' AS code, v.data ->> 'name' AS name,
       v.data -> 'geometry' AS geometry, (v.data ->> 'speed_limit_kmh')::real AS speed_limit_kmh,
       (v.data ->> 'deviation_tolerance_m')::real AS deviation_tolerance_m,
       (v.data ->> 'length_m')::float8 AS length_m, (v.data ->> 'declared_km')::numeric(9, 3) AS declared_km,
       (v.data ->> 'contract_id')::int AS contract_id, coalesce(v.data -> 'stops', '[]') AS stops
FROM registry_versions v WHERE v.kind = 'route' AND v.id = ANY ($1)"""

# Each vehicle's speed-limit versions on local dates [$2, $3].
VEHICLE_LIMITS = """
SELECT v.item_id AS vehicle_id, (v.data ->> 'speed_limit_kmh')::real AS speed_limit_kmh,
       lower(v.during) AS lo, upper(v.during) AS hi
FROM registry_versions_in_force v
WHERE v.kind = 'vehicle' AND v.item_id = ANY ($1) AND v.data IS NOT NULL AND v.during && daterange($2, $3, '[]')
ORDER BY v.item_id, v.valid_from"""

# The active speed zones' versions in force on some day of local dates [$1, $2].
ZONES = """
SELECT v.item_id AS id, v.data ->> 'name' AS name, (v.data ->> 'limit_kmh')::real AS limit_kmh,
       v.data -> 'geometry' AS geometry, lower(v.during) AS lo, upper(v.during) AS hi
FROM registry_versions_in_force v
WHERE v.kind = 'speed_zone' AND v.data IS NOT NULL AND (v.data ->> 'active')::boolean
  AND v.during && daterange($1, $2, '[]')
ORDER BY v.item_id, v.valid_from"""

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

# Several vehicles' fixes over one span [$2, $3) (the union of their pieces with context, cut per piece by
# fetch.tracks): one statement for a detector chunk instead of one per vehicle.
FIXES_OF = f"""
SELECT vehicle_id, {_FIX_COLUMNS} FROM fixes WHERE vehicle_id = ANY ($1::int[]) AND ts >= $2 AND ts < $3"""

# How many fixes each vehicle of $1 has in [$2, $3) (what FIXES_OF would read of it), vehicles with none left out.
FIX_COUNTS = """
SELECT vehicle_id, count(*) AS n FROM fixes WHERE vehicle_id = ANY ($1::int[]) AND ts >= $2 AND ts < $3
GROUP BY vehicle_id"""

# How many fixes each vehicle $1[i] has from $2[i] on, before $3 (what FIXES_SINCE would read of it).
FIX_COUNTS_SINCE = """
SELECT u.v AS vehicle_id, (SELECT count(*) FROM fixes WHERE vehicle_id = u.v AND ts >= u.since AND ts < $3) AS n
FROM unnest($1::int[], $2::timestamptz[]) AS u(v, since)"""

# Each vehicle $1[i]'s fixes from $2[i] on, before $3 (what was stored since a detector last read its day).
FIXES_SINCE = f"""
SELECT u.v AS vehicle_id, f.* FROM unnest($1::int[], $2::timestamptz[]) AS u(v, since)
CROSS JOIN LATERAL (SELECT {_FIX_COLUMNS} FROM fixes WHERE vehicle_id = u.v AND ts >= u.since AND ts < $3) f"""

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
SELECT r.vehicle_id, r.day, r.basis, r.fixes, r.kept, r.route_m, r.chord_m, r.gap_m, r.road_m, r.paved_m,
       r.unpaved_m, r.moving_s, r.max_kmh, r.trips, r.stops, r.unauthorized_stops, r.speeding, r.deviations,
       r.odometer_m, r.first_ts, r.last_ts
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
# A sweep marks its vehicle-days at one instant: those go oldest day first, so that each seal's chain link is the
# vehicle's day before.
STALE_MARKS = """
SELECT vehicle_id, day FROM rollup_stale WHERE day <= (SELECT closed_through FROM rollup_horizon)
GROUP BY vehicle_id, day ORDER BY min(marked_at), day, vehicle_id LIMIT $1"""
DELETE_MARKS = "DELETE FROM rollup_stale WHERE vehicle_id = $1 AND day = $2"
# Checking the rollups against the registry once it changed: each vehicle's rollups and their
# bases, and the generation last checked.
ROLLUP_BASES = "SELECT day, basis FROM report_rollups WHERE vehicle_id = $1 ORDER BY day"
ROLLED_VEHICLES = "SELECT DISTINCT vehicle_id FROM report_rollups ORDER BY vehicle_id"
CHECKED = "SELECT checked_generation, checked_fingerprint FROM rollup_horizon"
SET_CHECKED = "UPDATE rollup_horizon SET checked_generation = $1, checked_fingerprint = $2"
MARK_DAYS = "INSERT INTO rollup_stale (vehicle_id, day) SELECT $1, unnest($2::date[])"
UPSERT_ROLLUP = """
INSERT INTO report_rollups (vehicle_id, day, basis, fixes, kept, route_m, chord_m, gap_m, road_m, paved_m, unpaved_m,
                            moving_s, max_kmh, trips, stops, unauthorized_stops, speeding, deviations, odometer_m,
                            first_ts, last_ts, events)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
ON CONFLICT (vehicle_id, day) DO UPDATE SET
    basis = EXCLUDED.basis, fixes = EXCLUDED.fixes, kept = EXCLUDED.kept, route_m = EXCLUDED.route_m,
    chord_m = EXCLUDED.chord_m, gap_m = EXCLUDED.gap_m, road_m = EXCLUDED.road_m, paved_m = EXCLUDED.paved_m,
    unpaved_m = EXCLUDED.unpaved_m, moving_s = EXCLUDED.moving_s,
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


# How many fixes the vehicles $1 have in [$2, $3), counted up to $4 at most (a bound on the cost: the rows an
# XLSX sheet or a PDF may hold are checked before the file is begun).
COUNT_FIXES_UPTO = """
SELECT count(*) FROM (
    SELECT 1 FROM fixes WHERE vehicle_id = ANY($1::int[]) AND ts >= $2 AND ts < $3 LIMIT $4
) AS bounded"""
