-- Vehicles, trackers, which tracker was in which vehicle when, and the fixes hypertable.
CREATE EXTENSION IF NOT EXISTS timescaledb;
CREATE EXTENSION IF NOT EXISTS btree_gist;

CREATE TABLE vehicles (
    id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    plate       text NOT NULL UNIQUE CHECK (plate ~ '^[A-Z0-9]{7}$'),
    prefix      text,
    description text,
    active      boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE trackers (
    id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    unique_id   text NOT NULL UNIQUE CHECK (unique_id <> ''),
    -- sha256 of the bearer token: tokens are 256-bit random, so a fast hash is enough and
    -- lets the lookup use an index; the token itself is shown once and never stored.
    token_hash  bytea NOT NULL UNIQUE,
    active      boolean NOT NULL DEFAULT true,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- A fix belongs to the vehicle its tracker was installed in at the fix's time. Unbounded
-- ends are NULL bounds; a tracker is in at most one vehicle at any instant.
CREATE TABLE tracker_installations (
    id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tracker_id  integer NOT NULL REFERENCES trackers (id),
    vehicle_id  integer NOT NULL REFERENCES vehicles (id),
    during      tstzrange NOT NULL DEFAULT tstzrange(NULL, NULL, '[)'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK (NOT isempty(during)),
    EXCLUDE USING gist (tracker_id WITH =, during WITH &&)
);
CREATE INDEX tracker_installations_vehicle ON tracker_installations (vehicle_id);

CREATE TABLE fixes (
    vehicle_id   integer NOT NULL,
    tracker_id   integer NOT NULL,
    ts           timestamptz NOT NULL,
    received_at  timestamptz NOT NULL DEFAULT now(),
    lat          double precision NOT NULL,
    lon          double precision NOT NULL,
    speed_kmh    real,
    heading_deg  real,
    altitude_m   real,
    accuracy_m   real,
    hdop         real,
    satellites   smallint,
    ignition     boolean,
    odometer_m   double precision,
    driver_id    text,
    valid        boolean NOT NULL DEFAULT true,
    attributes   jsonb
);
-- No default ts-DESC index: it costs 20-35 % of insert speed and every report query filters
-- by vehicle first, which the unique index below serves.
SELECT create_hypertable('fixes', by_range('ts', INTERVAL '1 day'), create_default_indexes => false);
-- The dedup key (a re-sent fix is the same vehicle at the same instant) and the reports' index.
CREATE UNIQUE INDEX fixes_vehicle_ts ON fixes (vehicle_id, ts);
