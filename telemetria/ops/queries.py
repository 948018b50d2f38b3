"""SQL of operations: retention (drop_chunks on every hypertable) and the backup manifest's facts."""

from __future__ import annotations

# Every hypertable with its (first) time dimension, whoever created it: fixes now, and any later
# hypertable (audit log, rollups) is covered without touching retention.
HYPERTABLES = """
SELECT format('%I.%I', h.hypertable_schema, h.hypertable_name) AS hypertable,
       d.column_name::text AS time_column, d.column_type::text AS column_type
FROM timescaledb_information.hypertables h
JOIN timescaledb_information.dimensions d
  ON d.hypertable_schema = h.hypertable_schema AND d.hypertable_name = h.hypertable_name
 AND d.dimension_number = 1
ORDER BY 1"""

# The cutoff ($2, always timestamptz) in the type of the time column. Integer time columns are
# not supported (they need an integer_now function) and are reported as skipped.
CUTOFF_AS = {
    "timestamp with time zone": "$2::timestamptz",
    "timestamp without time zone": "($2::timestamptz AT TIME ZONE 'UTC')",
    "date": "($2::timestamptz AT TIME ZONE 'UTC')::date",
}

# show_chunks and drop_chunks take the same `older_than`: the chunks whose whole range lies
# before the cutoff, so what the dry run lists is exactly what the real run drops.
_CHUNKS_OLDER = """
SELECT format('%I.%I', c.chunk_schema, c.chunk_name) AS chunk, c.range_start, c.range_end
FROM timescaledb_information.chunks c
WHERE format('%I.%I', c.chunk_schema, c.chunk_name)::regclass
      IN (SELECT show_chunks($1::regclass, older_than => {cutoff}))
ORDER BY c.range_start"""
_DROP_CHUNKS = "SELECT drop_chunks($1::regclass, older_than => {cutoff})::text AS chunk"

CHUNKS_OLDER = {t: _CHUNKS_OLDER.format(cutoff=c) for t, c in CUTOFF_AS.items()}
DROP_CHUNKS = {t: _DROP_CHUNKS.format(cutoff=c) for t, c in CUTOFF_AS.items()}

# The oldest chunk that stays: the same after a run as a dry run predicts.
OLDEST_KEPT_START = """
SELECT min(range_start) FROM timescaledb_information.chunks
WHERE format('%I.%I', hypertable_schema, hypertable_name) = $1
  AND format('%I.%I', chunk_schema, chunk_name) <> ALL ($2::text[])"""

# After chunks of fixes are dropped, the vehicles whose newest fix (or newest valid fix) may have
# gone with them are re-derived from what is left (migrations/0009_latest_fix.sql).
REFRESH_LATEST_BEFORE = """
SELECT refresh_latest_fixes(array(SELECT vehicle_id FROM latest_fixes WHERE last_ts < $1 OR valid_ts < $1))"""

RECORD_RUN = """
INSERT INTO retention_runs (cutoff, retention_days, source, chunks) VALUES ($1, $2, $3, $4)"""

SECONDS_SINCE_LAST_RUN = "SELECT extract(epoch FROM now() - max(ran_at))::float8 FROM retention_runs"

# --- backup manifest ----------------------------------------------------------------------------

# The tables a dump holds rows of: everything outside the system and TimescaleDB's own schemas
# (a hypertable's rows are counted through it, not through its chunks) that no extension owns.
USER_TABLES = """
SELECT format('%I.%I', n.nspname, c.relname) AS name
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  AND n.nspname NOT LIKE 'pg\\_%' AND n.nspname NOT LIKE '\\_timescaledb%' AND n.nspname NOT LIKE 'timescaledb%'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d
                  WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
ORDER BY 1"""

# Any relation that is not the system's or an extension's: a database with one is not empty.
FOREIGN_RELATIONS = """
SELECT format('%I.%I', n.nspname, c.relname)
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind IN ('r', 'p', 'v', 'm', 'S', 'f')
  AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  AND n.nspname NOT LIKE 'pg\\_%'
  AND NOT EXISTS (SELECT 1 FROM pg_depend d
                  WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
ORDER BY 1 LIMIT 5"""

SERVER_VERSION = "SHOW server_version"
TIMESCALEDB_VERSION = "SELECT extversion FROM pg_extension WHERE extname = 'timescaledb'"
TIMESCALEDB_AVAILABLE = (
    "SELECT default_version, installed_version FROM pg_available_extensions WHERE name = 'timescaledb'"
)
MIGRATIONS_APPLIED = "SELECT coalesce(array_agg(version ORDER BY version), '{}') FROM schema_migrations"
EXPORT_SNAPSHOT = "SELECT pg_export_snapshot()"
