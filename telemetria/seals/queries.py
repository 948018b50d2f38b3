"""SQL of the seals: the fixes a vehicle-day is sealed from, the append-only seals and fleet roots, their reads."""

from __future__ import annotations

# Every stored fix of a vehicle in [$2, $3), in fix-time order: what a vehicle-day's seal is computed from.
DAY_FIXES = """
SELECT ts, lat, lon, speed_kmh FROM fixes WHERE vehicle_id = $1 AND ts >= $2 AND ts < $3 ORDER BY ts"""
# Where the stored fixes begin: retention drops whole chunks before its cutoff, so a day before the oldest chunk
# left, or with no chunk left before the latest cutoff, is no longer kept whole (NULL: nothing was ever dropped).
FIXES_KEPT_FROM = """
SELECT coalesce(
    (SELECT min(range_start) FROM timescaledb_information.chunks
     WHERE hypertable_schema = 'public' AND hypertable_name = 'fixes'),
    (SELECT max(cutoff) FROM retention_runs))"""

_SEAL_COLUMNS = """
s.vehicle_id, v.plate, s.day, s.version, s.fixes, s.sha256, s.previous_sha256, s.leaf_sha256, s.added, s.removed,
s.sealed_at"""
LATEST_SEAL = f"""
SELECT {_SEAL_COLUMNS} FROM day_seals s JOIN vehicles v ON v.id = s.vehicle_id
WHERE s.vehicle_id = $1 AND s.day = $2 ORDER BY s.version DESC LIMIT 1"""
# Version 1 of a day chains to the vehicle's latest seal of its latest earlier sealed day.
PREVIOUS_DAY_SHA256 = """
SELECT sha256 FROM day_seals WHERE vehicle_id = $1 AND day < $2 ORDER BY day DESC, version DESC LIMIT 1"""
# sealed_at is the clock once the day's lock is held (not now(), the transaction's start, which may be before it):
# a root computed after it sees the seal, one computed before it (holding the lock) has an earlier computed_at.
INSERT_SEAL = """
INSERT INTO day_seals (vehicle_id, day, version, fixes, sha256, previous_sha256, leaf_sha256, added, removed, changes,
                       sealed_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, clock_timestamp())"""
# Advisory locks (one-bigint form, keys from sealer._key): a vehicle-day's, held by whoever seals it, so versions
# are computed one at a time from what the version before stored; and a day's, shared by every seal of the day and
# exclusive for its fleet root, so a root sees every seal whose sealed_at is before its computed_at.
LOCK_VEHICLE_DAY = "SELECT pg_advisory_xact_lock($1)"
LOCK_VEHICLE_DAY_SESSION = "SELECT pg_advisory_lock($1)"
UNLOCK_VEHICLE_DAY_SESSION = "SELECT pg_advisory_unlock($1)"
SHARE_DAY = "SELECT pg_advisory_xact_lock_shared($1)"
LOCK_DAY = "SELECT pg_advisory_xact_lock($1)"
WORKING_LINES = "SELECT version, lines FROM seal_lines WHERE vehicle_id = $1 AND day = $2"
PUT_WORKING_LINES = """
INSERT INTO seal_lines (vehicle_id, day, version, lines) VALUES ($1, $2, $3, $4)
ON CONFLICT (vehicle_id, day) DO UPDATE SET version = EXCLUDED.version, lines = EXCLUDED.lines"""
# The changes of versions > $3 of a vehicle-day, newest first: undone one by one, they give version $3's lines.
LATER_CHANGES = """
SELECT version, changes FROM day_seals WHERE vehicle_id = $1 AND day = $2 AND version > $3 ORDER BY version DESC"""

# The latest version of each sealed vehicle-day of vehicles $1 on local days [$2, $3].
LATEST_REFS = """
SELECT DISTINCT ON (s.vehicle_id, s.day) s.vehicle_id, v.plate, s.day, s.version, s.fixes, s.sha256
FROM day_seals s JOIN vehicles v ON v.id = s.vehicle_id
WHERE s.vehicle_id = ANY ($1::int[]) AND s.day BETWEEN $2 AND $3
ORDER BY s.vehicle_id, s.day, s.version DESC"""
# GET /api/v1/seals: every version of the vehicle-days the caller may see ($1 contractor scope, NULL: all; a
# contractor the days it had the vehicle on, 0028_scope_by_day.sql), by vehicle, day and version.
LIST_SEALS = f"""
SELECT {_SEAL_COLUMNS} FROM day_seals s JOIN vehicles v ON v.id = s.vehicle_id
WHERE vehicle_in_scope($1, s.vehicle_id, s.day) AND ($2::int IS NULL OR s.vehicle_id = $2)
  AND s.day BETWEEN $3 AND $4
ORDER BY s.vehicle_id, s.day, s.version"""
# Whether scope $1 (NULL: all) had vehicle $2 on some day ($3 NULL), or on local day $3 (0028_scope_by_day.sql).
VISIBLE_VEHICLE = """
SELECT EXISTS (SELECT 1 FROM vehicles v WHERE v.id = $2 AND ($1::int IS NULL OR (
    CASE WHEN $3::date IS NULL
         THEN EXISTS (SELECT 1 FROM vehicle_contractors c WHERE c.vehicle_id = v.id AND c.contractor_id = $1)
         ELSE vehicle_in_scope($1, v.id, $3) END)))"""

# Fleet roots: a day's leaves are the latest version of each vehicle's seal, by vehicle id.
DAY_LEAVES = """
SELECT DISTINCT ON (vehicle_id) vehicle_id, version, fixes, sha256, previous_sha256, leaf_sha256
FROM day_seals WHERE day = $1 ORDER BY vehicle_id, version DESC"""
# The leaves a stored root was computed from: the latest version of each vehicle's seal sealed by then.
ROOT_LEAVES = """
SELECT DISTINCT ON (vehicle_id) vehicle_id, version, fixes, sha256, previous_sha256, leaf_sha256
FROM day_seals WHERE day = $1 AND sealed_at <= $2 ORDER BY vehicle_id, version DESC"""
# The days needing a fleet root, oldest first, at most $1: a seal sealed after the day's latest root (or no root
# yet) and no stale marks left. One probe per sealed day (a skip scan of day_seals_day_sealed_at, migration 0019),
# of its latest root (the primary key) and of its marks (rollup_stale_day).
ROOTS_DUE = """
WITH RECURSIVE days AS (
    (SELECT day FROM day_seals ORDER BY day LIMIT 1)
    UNION ALL
    SELECT (SELECT s.day FROM day_seals s WHERE s.day > days.day ORDER BY s.day LIMIT 1) FROM days
    WHERE days.day IS NOT NULL
)
SELECT d.day FROM days d
WHERE d.day IS NOT NULL
  AND (SELECT max(s.sealed_at) FROM day_seals s WHERE s.day = d.day)
      > coalesce((SELECT r.computed_at FROM seal_roots r WHERE r.day = d.day ORDER BY r.version DESC LIMIT 1),
                 '-infinity')
  AND NOT EXISTS (SELECT 1 FROM rollup_stale m WHERE m.day = d.day)
ORDER BY d.day
LIMIT $1"""
LATEST_ROOT = """
SELECT day, version, vehicles, root_sha256, previous_sha256, computed_at FROM seal_roots
WHERE day = $1 ORDER BY version DESC LIMIT 1"""
# computed_at: the clock once the day's lock is held, as a seal's sealed_at (INSERT_SEAL).
INSERT_ROOT = """
INSERT INTO seal_roots (day, version, vehicles, root_sha256, previous_sha256, computed_at)
VALUES ($1, $2, $3, $4, $5, clock_timestamp())"""
DAY_ROOTS = """
SELECT day, version, vehicles, root_sha256, previous_sha256, computed_at FROM seal_roots
WHERE day = $1 ORDER BY version"""
# GET /public/seals: each day with its latest root, newest day first.
LATEST_ROOTS = """
SELECT DISTINCT ON (day) day, version, vehicles, root_sha256, previous_sha256, computed_at FROM seal_roots
ORDER BY day DESC, version DESC
LIMIT $1"""
