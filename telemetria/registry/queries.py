"""All SQL of the registry: vehicles, trackers, installations, contractors, drivers, routes, assignments, zones."""

from __future__ import annotations

from telemetria.registry.sqlgen import insert_sql, patch_sql

INSERT_VEHICLE = """
INSERT INTO vehicles (plate, prefix, description) VALUES ($1, $2, $3)
RETURNING id, plate, prefix, description, active"""

VEHICLE_BY_PLATE = "SELECT id, plate, prefix, description, active FROM vehicles WHERE plate = $1"

PLATE_BY_ID = "SELECT plate FROM vehicles WHERE id = $1"

LIST_VEHICLES = """
SELECT v.id, v.plate, v.prefix, v.description, v.active,
       (SELECT t.unique_id FROM tracker_installations i JOIN trackers t ON t.id = i.tracker_id
         WHERE i.vehicle_id = v.id AND i.during @> now() LIMIT 1) AS tracker
FROM vehicles v ORDER BY v.plate"""

SET_VEHICLE_ACTIVE = "UPDATE vehicles SET active = $2 WHERE plate = $1 RETURNING id"

INSERT_TRACKER = """
INSERT INTO trackers (unique_id, token_hash) VALUES ($1, $2) RETURNING id"""

TRACKER_BY_UNIQUE_ID = "SELECT id, unique_id, active FROM trackers WHERE unique_id = $1"

SET_TRACKER_ACTIVE = "UPDATE trackers SET active = $2 WHERE unique_id = $1 RETURNING id"

SET_TRACKER_TOKEN = "UPDATE trackers SET token_hash = $2 WHERE unique_id = $1 RETURNING id"

LIST_TRACKERS = """
SELECT t.id, t.unique_id, t.active,
       (SELECT v.plate FROM tracker_installations i JOIN vehicles v ON v.id = i.vehicle_id
         WHERE i.tracker_id = t.id AND i.during @> now() LIMIT 1) AS vehicle
FROM trackers t ORDER BY t.unique_id"""

INSERT_INSTALLATION = """
INSERT INTO tracker_installations (tracker_id, vehicle_id, during)
VALUES ($1, $2, tstzrange($3, NULL, '[)'))"""

# Installations change rarely; while one changes, ingest must neither read the old state nor
# write fixes the change has not re-attributed yet. Writers hold SHARE on this table for the
# length of their transaction; this mode conflicts with it (and with itself).
LOCK_INSTALLATIONS = "LOCK TABLE tracker_installations IN SHARE ROW EXCLUSIVE MODE"

INSTALLATION_AT = """
SELECT id, vehicle_id, lower(during) AS since FROM tracker_installations
WHERE tracker_id = $1 AND during @> $2::timestamptz"""

LATER_INSTALLATION = """
SELECT 1 FROM tracker_installations WHERE tracker_id = $1 AND lower(during) > $2::timestamptz LIMIT 1"""

CLOSE_INSTALLATION = """
UPDATE tracker_installations SET during = tstzrange(lower(during), $2, '[)') WHERE id = $1"""

DELETE_INSTALLATION = "DELETE FROM tracker_installations WHERE id = $1"

# Fixes the tracker already delivered for the time after the move now belong to the new vehicle.
# One whose instant the new vehicle already has (another tracker, same microsecond) cannot move
# under the (vehicle_id, ts) key and is dropped as the duplicate it is.
DROP_COLLIDING_FIXES = """
DELETE FROM fixes f
WHERE f.tracker_id = $1 AND f.vehicle_id = $2 AND f.ts >= $4
  AND EXISTS (SELECT 1 FROM fixes g WHERE g.vehicle_id = $3 AND g.ts = f.ts)"""

REATTRIBUTE_FIXES = """
UPDATE fixes SET vehicle_id = $3 WHERE tracker_id = $1 AND vehicle_id = $2 AND ts >= $4"""

# The time span of the fixes a move re-attributes (or drops): the days whose rollups it changes.
MOVING_SPAN = """
SELECT min(ts) AS lo, max(ts) AS hi FROM fixes WHERE tracker_id = $1 AND vehicle_id = $2 AND ts >= $3"""

# Both vehicles' report rollups of those days are stale (reports' mark_rollups_stale, migration 0007:
# closed days only, the days between the two times included, one link around them).
MARK_ROLLUPS_STALE = "SELECT mark_rollups_stale($1::int[], $2::timestamptz[], $3, $4)"

# The vehicles' newest fixes after fixes moved between them (migrations/0009_latest_fix.sql).
REFRESH_LATEST_FIXES = "SELECT refresh_latest_fixes($1::int[])"

# Both vehicles' occurrences are recomputed from the first moved fix: the detector's dirty mark, as a flush sets
# it (migrations/0014_detector.sql), set after the refresh (which re-creates the rows it had to drop).
MARK_DETECTOR_DIRTY = """
UPDATE latest_fixes SET dirty_from = least(dirty_from, $2), dirty_at = clock_timestamp(),
       dirty_since = CASE WHEN dirty_from IS NULL THEN clock_timestamp() ELSE dirty_since END
WHERE vehicle_id = ANY ($1::int[])"""

# --- the registry API (ids, scoped): $1 is always the contractor scope (NULL: everything) ------

CONTRACTOR_COLUMNS = ("name", "cnpj", "contract_number", "active")
INSERT_CONTRACTOR = insert_sql("contractors", CONTRACTOR_COLUMNS)
PATCH_CONTRACTOR = patch_sql("contractors", CONTRACTOR_COLUMNS)
SELECT_CONTRACTORS = """
SELECT c.id, c.name, c.cnpj, c.contract_number, c.active, c.created_at,
       (SELECT count(*) FROM vehicles v WHERE v.contractor_id = c.id) AS vehicles,
       count(*) OVER () AS total
FROM contractors c
WHERE ($1::int IS NULL OR c.id = $1) AND ($2::int IS NULL OR c.id = $2)
  AND ($3::text IS NULL OR c.name ILIKE '%' || $3 || '%' OR c.cnpj = $3)"""
LIST_CONTRACTORS = SELECT_CONTRACTORS + " ORDER BY c.name, c.id LIMIT $4 OFFSET $5"
GET_CONTRACTOR = SELECT_CONTRACTORS + " LIMIT 1"
CONTRACTOR_NAME = "SELECT name FROM contractors WHERE id = $1"  # the page header of a contractor's users

VEHICLE_COLUMNS = (
    "plate", "prefix", "description", "contractor_id", "capacity", "manufacture_year", "kind",
    "speed_limit_kmh", "active",
)  # fmt: skip
INSERT_VEHICLE_FULL = insert_sql("vehicles", VEHICLE_COLUMNS)
PATCH_VEHICLE = patch_sql("vehicles", VEHICLE_COLUMNS)
# last_fix_at comes from latest_fixes (kept by the ingest writer): a lookup in `fixes` without a
# time bound visits every chunk, so the list would slow down as the installation ages.
SELECT_VEHICLES = """
SELECT v.id, v.plate, v.prefix, v.description, v.contractor_id, c.name AS contractor, v.capacity,
       v.manufacture_year, v.kind, v.speed_limit_kmh, v.active, v.created_at,
       (SELECT t.unique_id FROM tracker_installations i JOIN trackers t ON t.id = i.tracker_id
         WHERE i.vehicle_id = v.id AND i.during @> now() LIMIT 1) AS tracker,
       (SELECT d.name FROM driver_assignments a JOIN drivers d ON d.id = a.driver_id
         WHERE a.vehicle_id = v.id AND a.during @> now() LIMIT 1) AS driver,
       (SELECT l.last_ts FROM latest_fixes l WHERE l.vehicle_id = v.id) AS last_fix_at,
       count(*) OVER () AS total
FROM vehicles v LEFT JOIN contractors c ON c.id = v.contractor_id
WHERE ($1::int IS NULL OR v.contractor_id = $1) AND ($2::int IS NULL OR v.id = $2)
  AND ($3::text IS NULL OR v.plate = $3) AND ($4::int IS NULL OR v.contractor_id = $4)
  AND ($5::bool IS NULL OR v.active = $5)"""
LIST_VEHICLES_PAGE = SELECT_VEHICLES + " ORDER BY v.plate LIMIT $6 OFFSET $7"
GET_VEHICLE = SELECT_VEHICLES + " LIMIT 1"

SELECT_TRACKERS = """
SELECT t.id, t.unique_id, t.active, t.created_at, i.vehicle_id, v.plate, lower(i.during) AS installed_since,
       count(*) OVER () AS total
FROM trackers t
LEFT JOIN tracker_installations i ON i.tracker_id = t.id AND i.during @> now()
LEFT JOIN vehicles v ON v.id = i.vehicle_id
WHERE ($1::int IS NULL OR v.contractor_id = $1) AND ($2::int IS NULL OR t.id = $2)
  AND ($3::int IS NULL OR i.vehicle_id = $3)"""
LIST_TRACKERS_PAGE = SELECT_TRACKERS + " ORDER BY t.unique_id LIMIT $4 OFFSET $5"
GET_TRACKER = SELECT_TRACKERS + " LIMIT 1"
TRACKER_UNIQUE_ID = "SELECT unique_id FROM trackers WHERE id = $1"
VEHICLE_PLATE = "SELECT plate FROM vehicles WHERE id = $1"

DRIVER_COLUMNS = ("name", "cpf", "cnh_category", "card_id", "contractor_id", "active")
INSERT_DRIVER = insert_sql("drivers", DRIVER_COLUMNS)
PATCH_DRIVER = patch_sql("drivers", DRIVER_COLUMNS)
# $2: whether the caller may read personal data; without it the CPF never leaves the database.
SELECT_DRIVERS = """
SELECT d.id, d.name, CASE WHEN $2 THEN d.cpf ELSE NULL END AS cpf,
       '***.' || substr(d.cpf, 4, 3) || '.' || substr(d.cpf, 7, 3) || '-**' AS cpf_masked,
       d.cnh_category, d.card_id, d.contractor_id, c.name AS contractor, d.active, d.created_at,
       (SELECT v.plate FROM driver_assignments a JOIN vehicles v ON v.id = a.vehicle_id
         WHERE a.driver_id = d.id AND a.during @> now() LIMIT 1) AS vehicle,
       count(*) OVER () AS total
FROM drivers d LEFT JOIN contractors c ON c.id = d.contractor_id
WHERE ($1::int IS NULL OR d.contractor_id = $1) AND ($3::int IS NULL OR d.id = $3)
  AND ($4::text IS NULL OR d.card_id = $4) AND ($5::bool IS NULL OR d.active = $5)"""
LIST_DRIVERS = SELECT_DRIVERS + " ORDER BY d.name, d.id LIMIT $6 OFFSET $7"
GET_DRIVER = SELECT_DRIVERS + " LIMIT 1"

INSERT_DRIVER_ASSIGNMENT = """
INSERT INTO driver_assignments (driver_id, vehicle_id, during) VALUES ($1, $2, tstzrange($3, $4, '[)'))
RETURNING id"""
SELECT_DRIVER_ASSIGNMENTS = """
SELECT a.id, a.driver_id, d.name AS driver, a.vehicle_id, v.plate, lower(a.during) AS valid_from,
       upper(a.during) AS valid_to, a.created_at, count(*) OVER () AS total
FROM driver_assignments a JOIN drivers d ON d.id = a.driver_id JOIN vehicles v ON v.id = a.vehicle_id
WHERE ($1::int IS NULL OR v.contractor_id = $1) AND ($2::int IS NULL OR a.id = $2)
  AND ($3::int IS NULL OR a.vehicle_id = $3) AND ($4::int IS NULL OR a.driver_id = $4)"""
LIST_DRIVER_ASSIGNMENTS = (
    SELECT_DRIVER_ASSIGNMENTS + " ORDER BY lower(a.during) DESC NULLS LAST, a.id LIMIT $5 OFFSET $6"
)
GET_DRIVER_ASSIGNMENT = SELECT_DRIVER_ASSIGNMENTS + " LIMIT 1"
DELETE_DRIVER_ASSIGNMENT = "DELETE FROM driver_assignments WHERE id = $1 RETURNING id"

# --- routes, their stops and assignments, speed zones ----------------------------------------

ROUTE_COLUMNS = (
    "code", "name", "school_year", "shift", "geometry", "length_m", "declared_km", "speed_limit_kmh",
    "deviation_tolerance_m", "active", "contract_id",
)  # fmt: skip
INSERT_ROUTE = insert_sql("routes", ROUTE_COLUMNS)
PATCH_ROUTE = patch_sql("routes", ROUTE_COLUMNS)
# A contractor sees the routes its vehicles are assigned to and the routes of its contracts: of the contract the
# route has today, as the current tables hold the version in force today (0033), not one an edit dated ahead gives.
SELECT_ROUTES = """
SELECT r.id, r.code, r.name, r.school_year, r.shift, r.length_m, r.declared_km, r.contract_id, r.speed_limit_kmh,
       r.deviation_tolerance_m, r.active, r.created_at,
       (SELECT count(*) FROM route_stops s WHERE s.route_id = r.id) AS stops_count,
       count(*) OVER () AS total
FROM routes r
WHERE ($1::int IS NULL OR EXISTS (SELECT 1 FROM route_assignments ra JOIN vehicles v ON v.id = ra.vehicle_id
                                  WHERE ra.route_id = r.id AND v.contractor_id = $1)
                     OR EXISTS (SELECT 1 FROM contracts k WHERE k.id = r.contract_id AND k.contractor_id = $1))
  AND ($2::int IS NULL OR r.id = $2) AND ($3::int IS NULL OR r.school_year = $3)
  AND ($4::bool IS NULL OR r.active = $4) AND ($5::text IS NULL OR r.code = $5)"""
LIST_ROUTES = SELECT_ROUTES + " ORDER BY r.school_year DESC, r.code LIMIT $6 OFFSET $7"
GET_ROUTE = SELECT_ROUTES + " LIMIT 1"
ROUTE_GEOMETRY = "SELECT geometry FROM routes WHERE id = $1"
ROUTE_STOPS = """
SELECT seq, name, lat, lon, kind, scheduled_time FROM route_stops WHERE route_id = $1 ORDER BY seq"""
DELETE_ROUTE_STOPS = "DELETE FROM route_stops WHERE route_id = $1"
INSERT_ROUTE_STOPS = """
INSERT INTO route_stops (route_id, seq, name, lat, lon, kind, scheduled_time)
SELECT $1, s.seq, s.name, s.lat, s.lon, s.kind, s.t
FROM unnest($2::int[], $3::text[], $4::float8[], $5::float8[], $6::text[], $7::time[])
     AS s(seq, name, lat, lon, kind, t)"""

INSERT_ROUTE_ASSIGNMENT = """
INSERT INTO route_assignments (route_id, vehicle_id, valid_from, valid_to, weekdays)
VALUES ($1, $2, $3, $4, $5) RETURNING id"""
SELECT_ROUTE_ASSIGNMENTS = """
SELECT a.id, a.route_id, r.code AS route_code, r.name AS route, a.vehicle_id, v.plate, a.valid_from, a.valid_to,
       a.weekdays, a.created_at, count(*) OVER () AS total
FROM route_assignments a JOIN routes r ON r.id = a.route_id JOIN vehicles v ON v.id = a.vehicle_id
WHERE ($1::int IS NULL OR v.contractor_id = $1) AND ($2::int IS NULL OR a.id = $2)
  AND ($3::int IS NULL OR a.route_id = $3) AND ($4::int IS NULL OR a.vehicle_id = $4)
  AND ($5::date IS NULL OR (a.valid_from <= $5 AND (a.valid_to IS NULL OR a.valid_to >= $5)
                            AND extract(isodow FROM $5)::smallint = ANY (a.weekdays)))"""
LIST_ROUTE_ASSIGNMENTS = SELECT_ROUTE_ASSIGNMENTS + " ORDER BY a.valid_from DESC, a.id LIMIT $6 OFFSET $7"
GET_ROUTE_ASSIGNMENT = SELECT_ROUTE_ASSIGNMENTS + " LIMIT 1"
DELETE_ROUTE_ASSIGNMENT = "DELETE FROM route_assignments WHERE id = $1 RETURNING id"

ZONE_COLUMNS = ("name", "limit_kmh", "geometry", "active")
INSERT_ZONE = insert_sql("speed_zones", ZONE_COLUMNS)
PATCH_ZONE = patch_sql("speed_zones", ZONE_COLUMNS)
SELECT_ZONES = """
SELECT z.id, z.name, z.limit_kmh, z.geometry, z.active, z.created_at, count(*) OVER () AS total
FROM speed_zones z WHERE ($1::int IS NULL OR z.id = $1) AND ($2::bool IS NULL OR z.active = $2)"""
LIST_ZONES = SELECT_ZONES + " ORDER BY z.name, z.id LIMIT $3 OFFSET $4"
GET_ZONE = SELECT_ZONES + " LIMIT 1"

# A route belongs to a contract (contract_id): the contract must be its contractor's.
CONTRACT_CONTRACTOR = "SELECT contractor_id FROM contracts WHERE id = $1"
# Contractors other than the contract's whose vehicles are assigned to the route.
ROUTE_OTHER_CONTRACTORS = """
SELECT DISTINCT c.name FROM route_assignments a
JOIN vehicles v ON v.id = a.vehicle_id JOIN contractors c ON c.id = v.contractor_id
WHERE a.route_id = $1 AND v.contractor_id <> (SELECT k.contractor_id FROM contracts k WHERE k.id = $2)
ORDER BY c.name"""
# The contract's contractor when the vehicle belongs to another one (no row: they agree, or one is unset).
VEHICLE_OUTSIDE_ROUTE_CONTRACT = """
SELECT k.number, c.name FROM routes r
JOIN contracts k ON k.id = r.contract_id JOIN contractors c ON c.id = k.contractor_id
JOIN vehicles v ON v.id = $2
WHERE r.id = $1 AND v.contractor_id <> k.contractor_id"""

# --- versions (migrations/0011_registry_versions.sql) ------------------------------------------
# The date the transaction's edits apply from ('' : today, local) and who makes them: read by the
# triggers that write registry_versions.
SET_EFFECTIVE = """
SELECT set_config('telemetria.effective_from', $1, true), set_config('telemetria.actor', $2, true)"""
# The newest version's first day (superseded ones aside), to refuse an edit dated before it.
NEWEST_VERSION_FROM = """
SELECT max(valid_from) FROM registry_versions WHERE kind = $1 AND item_id = $2 AND superseded_at IS NULL"""
# Make the item's current row hold its newest version when that is dated ahead (0033), before an edit of it.
LOAD_NEWEST = "SELECT registry_load_newest($1, $2)"
# The item's next version after today (0033: the current tables hold today's).
NEXT_VERSION = """
SELECT v.valid_from, v.changed, v.data FROM registry_versions v
WHERE v.kind = $1 AND v.item_id = $2 AND v.superseded_at IS NULL AND v.valid_from > $3
ORDER BY v.valid_from LIMIT 1"""
# Every version of an item, superseded ones too; next_from: the next version in force's first day.
VERSION_HISTORY = """
SELECT v.id AS version, v.valid_from, v.data, v.changed, v.created_at, v.created_by, v.superseded_at,
       CASE WHEN v.superseded_at IS NULL THEN lead(v.valid_from) OVER (
           PARTITION BY v.superseded_at IS NULL ORDER BY v.valid_from) END AS next_from
FROM registry_versions v
WHERE v.kind = $1 AND v.item_id = $2
ORDER BY v.valid_from, v.created_at, v.id"""
# A route assignment's vehicle as its newest version says (it may have been deleted since).
ASSIGNMENT_VEHICLE_EVER = """
SELECT (v.data ->> 'vehicle_id')::int AS vehicle_id, c.contractor_id
FROM registry_versions v LEFT JOIN vehicles c ON c.id = (v.data ->> 'vehicle_id')::int
WHERE v.kind = 'route_assignment' AND v.item_id = $1 AND v.data IS NOT NULL
ORDER BY v.id DESC LIMIT 1"""


# A row's values before and after a PATCH, for the audit log's old and new values (writes.update), by kind. Not
# a driver's: a person's name and CPF stay out of the log (LGPD Art. 6 III, necessity); only the fields are named.
OLD_ROW = {
    kind: f"SELECT to_jsonb(t) AS row FROM {table} t WHERE id = $1"
    for kind, table in (("route", "routes"), ("speed_zone", "speed_zones"), ("contractor", "contractors"),
                        ("vehicle", "vehicles"))
}  # fmt: skip
