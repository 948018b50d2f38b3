-- The sealer's working copy (issue 19): the canonical lines of the latest version of each sealed vehicle-day,
-- zlib-compressed. A new version has to name every line it adds or removes against the version before, and the
-- fixes it was computed from may have changed since (a late fix, a tracker move), so the lines of the version
-- before are kept here, replaced when a new version is sealed. Not part of the record (day_seals is): a
-- hypertable by local day, so retention drops it together with the fixes of the same days.
CREATE TABLE seal_lines (
    vehicle_id  integer NOT NULL,
    day         date NOT NULL,
    version     integer NOT NULL,
    lines       bytea NOT NULL,     -- zlib of the version's canonical lines (telemetria/seals/canonical.py)
    PRIMARY KEY (vehicle_id, day)
);
SELECT create_hypertable('seal_lines', by_range('day', INTERVAL '1 day'), create_default_indexes => false);
