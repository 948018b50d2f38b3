-- Finding the days whose fleet root is due (telemetria/seals/queries.py ROOTS_DUE) from the database after every
-- refresh batch, also one that failed: per sealed day, its latest sealed_at, and whether it has stale marks left.
CREATE INDEX day_seals_day_sealed_at ON day_seals (day, sealed_at);
CREATE INDEX rollup_stale_day ON rollup_stale (day);
