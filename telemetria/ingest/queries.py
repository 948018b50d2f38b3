"""SQL of the ingest path: resolve trackers to vehicles at fix time, then insert with dedup."""

from __future__ import annotations

# Every write of the ingest writer holds SHARE on tracker_installations: a tracker move (SHARE
# ROW EXCLUSIVE) waits for in-flight writes and re-attributes them, and writes after it see the
# new installation. Under that lock it checks that its in-memory copy of the registry is current
# (SQLSTATE TL001 if not). A large flush is an explicit transaction opened like this; the
# savepoint lets its optimistic COPY be undone alone.
REGISTRY_CHANGED = "TL001"


def begin_locked(epoch: int) -> str:
    return (
        "BEGIN; LOCK TABLE tracker_installations IN SHARE MODE; "
        f"SELECT ingest_check_epoch({int(epoch)}); SAVEPOINT fast_path"
    )


ROLLBACK_TO_FAST_PATH = "ROLLBACK TO SAVEPOINT fast_path"

# Every tracker with its installations and the epoch they belong to, in one snapshot.
REGISTRY = """
SELECT e.n AS epoch, t.id AS tracker_id, t.active, i.vehicle_id,
       lower(i.during) AS since, upper(i.during) AS until
FROM registry_epoch e
LEFT JOIN trackers t ON true
LEFT JOIN tracker_installations i ON i.tracker_id = t.id"""

FIX_COLUMNS = [
    "vehicle_id",
    "tracker_id",
    "ts",
    "lat",
    "lon",
    "speed_kmh",
    "heading_deg",
    "altitude_m",
    "accuracy_m",
    "hdop",
    "satellites",
    "ignition",
    "odometer_m",
    "driver_id",
    "valid",
    "attributes",
]

# A small flush (live single fixes) is one round trip: ingest_fixes, as migrations/0009_latest_fix.sql
# last replaced it (first written in 0003_ingest_function.sql, given the rollup staleness in 0007).
INGEST_FIXES = "SELECT * FROM ingest_fixes($1, " + ", ".join(f"${n}" for n in range(2, 20)) + ")"

# A large flush's bookkeeping for the fixes it stored, in one round trip of its transaction: each
# vehicle's newest fix noted (migrations/0009_latest_fix.sql; $1-$10, rows.newest_stored) and the
# report rollups of the days they can change marked stale (migrations/0007_report_rollups.sql;
# $11-$14), and the occurrence detector's dirty mark in the same upsert (note_stored_fixes,
# migrations/0014_detector.sql). The small-flush function does all of it itself.
NOTE_STORED = "SELECT note_stored_fixes($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)"

REGISTRY_EPOCH = "SELECT n FROM registry_epoch"

# When a flush holds fixes already stored, it is staged (binary COPY: cheaper to encode than 16
# arrays) and inserted in key order, so concurrent flushers lock index entries in the same order
# and cannot deadlock on each other's re-sent fixes; `ord` (COPY order) keeps a key's first
# occurrence first.
CREATE_STAGE = """
CREATE TEMP TABLE IF NOT EXISTS fix_stage (
    ord bigint GENERATED ALWAYS AS IDENTITY, vehicle_id int NOT NULL, tracker_id int NOT NULL,
    ts timestamptz NOT NULL, lat float8 NOT NULL, lon float8 NOT NULL, speed_kmh real,
    heading_deg real, altitude_m real, accuracy_m real, hdop real, satellites int2, ignition bool,
    odometer_m float8, driver_id text, valid bool NOT NULL, attributes jsonb
) ON COMMIT DELETE ROWS"""

_COLUMNS = ", ".join(FIX_COLUMNS)
INSERT_FROM_STAGE = f"""
INSERT INTO fixes ({_COLUMNS})
SELECT {_COLUMNS} FROM fix_stage ORDER BY vehicle_id, ts, ord
ON CONFLICT (vehicle_id, ts) DO NOTHING
RETURNING vehicle_id, ts"""

TRACKER_BY_TOKEN = "SELECT id FROM trackers WHERE token_hash = $1 AND active"

TRACKER_BY_UNIQUE_ID = "SELECT id FROM trackers WHERE unique_id = $1 AND active"

FIX_TOTALS = "SELECT count(*) AS n, count(DISTINCT vehicle_id) AS v, max(ts) AS last FROM fixes"
