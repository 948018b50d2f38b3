-- The service the law regulates: contractors, their vehicles and drivers, the annual routes
-- (itinerários) with their stops, which vehicle runs which route when, and speed zones.
-- Geometries are GeoJSON in WGS84 (jsonb): the geo math is done in Python (shapely/pyproj).

CREATE TABLE contractors (
    id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name            text NOT NULL CHECK (btrim(name) <> ''),
    cnpj            text NOT NULL UNIQUE CHECK (cnpj ~ '^[0-9A-Z]{12}[0-9]{2}$'),
    contract_number text,
    active          boolean NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now()
);

ALTER TABLE vehicles
    ADD COLUMN contractor_id    integer REFERENCES contractors (id),
    ADD COLUMN capacity         integer CHECK (capacity BETWEEN 1 AND 200),
    ADD COLUMN manufacture_year integer CHECK (manufacture_year BETWEEN 1950 AND 2100),
    ADD COLUMN kind             text CHECK (kind IN ('onibus', 'micro-onibus', 'van', 'automovel', 'outro')),
    ADD COLUMN speed_limit_kmh  real CHECK (speed_limit_kmh > 0 AND speed_limit_kmh <= 150);
CREATE INDEX vehicles_contractor ON vehicles (contractor_id);

-- CPF is personal data (LGPD): only roles that need it read this column; the rest get a mask.
CREATE TABLE drivers (
    id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text NOT NULL CHECK (btrim(name) <> ''),
    cpf           text NOT NULL UNIQUE CHECK (cpf ~ '^[0-9]{11}$'),
    -- CTB Art. 138 II: school transport needs category D (or E).
    cnh_category  text NOT NULL CHECK (cnh_category IN ('D', 'E', 'AD', 'AE')),
    -- The RFID/iButton code trackers send as driver_id.
    card_id       text UNIQUE CHECK (card_id <> ''),
    contractor_id integer REFERENCES contractors (id),
    active        boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX drivers_contractor ON drivers (contractor_id);

-- Who drives a vehicle when no card says otherwise. One driver per vehicle at a time, one
-- vehicle per driver at a time.
CREATE TABLE driver_assignments (
    id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    driver_id  integer NOT NULL REFERENCES drivers (id),
    vehicle_id integer NOT NULL REFERENCES vehicles (id),
    during     tstzrange NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (NOT isempty(during)),
    EXCLUDE USING gist (vehicle_id WITH =, during WITH &&),
    EXCLUDE USING gist (driver_id WITH =, during WITH &&)
);

CREATE TABLE routes (
    id                    integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    code                  text NOT NULL CHECK (btrim(code) <> ''),
    name                  text NOT NULL CHECK (btrim(name) <> ''),
    school_year           integer NOT NULL CHECK (school_year BETWEEN 2000 AND 2100),
    shift                 text CHECK (shift IN ('matutino', 'vespertino', 'noturno', 'integral')),
    geometry              jsonb NOT NULL,
    length_m              double precision NOT NULL CHECK (length_m > 0),
    declared_km           double precision CHECK (declared_km > 0),
    -- CTB Art. 61: 60 km/h where no sign says otherwise on unpaved rural roads.
    speed_limit_kmh       real NOT NULL DEFAULT 60 CHECK (speed_limit_kmh > 0 AND speed_limit_kmh <= 150),
    deviation_tolerance_m real NOT NULL DEFAULT 100 CHECK (deviation_tolerance_m BETWEEN 10 AND 5000),
    active                boolean NOT NULL DEFAULT true,
    created_at            timestamptz NOT NULL DEFAULT now(),
    UNIQUE (code, school_year)
);

CREATE TABLE route_stops (
    route_id       integer NOT NULL REFERENCES routes (id) ON DELETE CASCADE,
    seq            integer NOT NULL CHECK (seq >= 1),
    name           text NOT NULL,
    lat            double precision NOT NULL CHECK (lat BETWEEN -90 AND 90),
    lon            double precision NOT NULL CHECK (lon BETWEEN -180 AND 180),
    kind           text NOT NULL CHECK (kind IN ('boarding', 'school', 'garage')),
    scheduled_time time,
    PRIMARY KEY (route_id, seq)
);

-- Which vehicle runs which route: from a date to a date (NULL: open), on ISO weekdays (1 = Monday).
CREATE TABLE route_assignments (
    id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    route_id   integer NOT NULL REFERENCES routes (id),
    vehicle_id integer NOT NULL REFERENCES vehicles (id),
    valid_from date NOT NULL,
    valid_to   date,
    weekdays   smallint[] NOT NULL DEFAULT '{1,2,3,4,5}'
               CHECK (weekdays <@ '{1,2,3,4,5,6,7}' AND cardinality(weekdays) > 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK (valid_to IS NULL OR valid_to >= valid_from)
);
CREATE INDEX route_assignments_vehicle ON route_assignments (vehicle_id);
CREATE INDEX route_assignments_route ON route_assignments (route_id);

CREATE TABLE speed_zones (
    id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL CHECK (btrim(name) <> ''),
    limit_kmh  real NOT NULL CHECK (limit_kmh > 0 AND limit_kmh <= 150),
    geometry   jsonb NOT NULL,
    active     boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- A fix's driver: the card it carries when that card is registered, else the driver assigned
-- to the vehicle at the fix's time.
CREATE FUNCTION fix_driver(vehicle integer, at timestamptz, card text) RETURNS integer
LANGUAGE sql STABLE AS $$
    SELECT coalesce(
        (SELECT d.id FROM drivers d WHERE card IS NOT NULL AND d.card_id = card),
        (SELECT a.driver_id FROM driver_assignments a WHERE a.vehicle_id = vehicle AND a.during @> at))
$$;
