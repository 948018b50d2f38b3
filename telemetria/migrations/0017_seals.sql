-- Records that hold up (issue 19): each closed vehicle-day's fixes sealed by a SHA-256 over their canonical
-- serialization (telemetria/seals/canonical.py, docs/verification.md), chained to the vehicle's previous seal,
-- and a daily fleet-wide Merkle root over all vehicles' seals of the day. Both tables are append-only: a late
-- fix into a sealed day adds a version that points to the one before and says what changed.

CREATE TABLE day_seals (
    vehicle_id      integer NOT NULL REFERENCES vehicles (id),
    day             date NOT NULL,                 -- local day (America/Porto_Velho), as the rollups
    version         integer NOT NULL CHECK (version >= 1),
    fixes           integer NOT NULL CHECK (fixes >= 0),
    sha256          text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),   -- over the day's canonical lines
    -- version 1: the vehicle's latest seal of its latest earlier sealed day (NULL: its first);
    -- version k > 1: version k-1 of the same day.
    previous_sha256 text CHECK (previous_sha256 ~ '^[0-9a-f]{64}$'),
    leaf_sha256     text NOT NULL CHECK (leaf_sha256 ~ '^[0-9a-f]{64}$'),  -- canonical.leaf(): the Merkle leaf
    added           integer NOT NULL DEFAULT 0,    -- lines in this version not in the one before
    removed         integer NOT NULL DEFAULT 0,    -- lines of the one before not in this one (fixes moved away)
    changes         jsonb NOT NULL DEFAULT '[]',   -- every {"op": "+" or "-", "line": "..."} against the version before
    sealed_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (vehicle_id, day, version)
);
CREATE INDEX day_seals_day ON day_seals (day);

CREATE TABLE seal_roots (
    day             date NOT NULL,
    version         integer NOT NULL CHECK (version >= 1),
    vehicles        integer NOT NULL CHECK (vehicles >= 0),       -- leaves
    root_sha256     text NOT NULL CHECK (root_sha256 ~ '^[0-9a-f]{64}$'),
    previous_sha256 text CHECK (previous_sha256 ~ '^[0-9a-f]{64}$'),  -- the day's version before, if any
    computed_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (day, version)
);

CREATE FUNCTION seals_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER day_seals_append_only BEFORE UPDATE OR DELETE ON day_seals
    FOR EACH ROW EXECUTE FUNCTION seals_append_only();
CREATE TRIGGER seal_roots_append_only BEFORE UPDATE OR DELETE ON seal_roots
    FOR EACH ROW EXECUTE FUNCTION seals_append_only();
-- TRUNCATE stays possible for the database owner (as for audit_log): tests start from empty tables with it.
