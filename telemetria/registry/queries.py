"""SQL of the fleet registry: vehicles, trackers and installations."""

from __future__ import annotations

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
