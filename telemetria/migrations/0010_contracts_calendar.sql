-- The school calendar and the contracts the Secretaria pays by (issue 17). Money is numeric, never float.

-- A school year: its first and last day; the Secretaria's marks are in school_calendar_days.
-- Holidays are not stored: they are computed (telemetria/contracts/holidays.py).
CREATE TABLE school_years (
    year       integer PRIMARY KEY CHECK (year BETWEEN 2000 AND 2100),
    start_date date NOT NULL CHECK (extract(year FROM start_date) = year),
    end_date   date NOT NULL CHECK (extract(year FROM end_date) = year),
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by text,
    CHECK (end_date >= start_date)
);

-- A day the Secretaria marks: without school (school = false; the reason is required) or an extra school
-- day (school = true: a Saturday of classes, a ponto facultativo with classes).
CREATE TABLE school_calendar_days (
    day    date PRIMARY KEY,
    year   integer NOT NULL REFERENCES school_years (year) ON DELETE CASCADE,
    school boolean NOT NULL,
    reason text CHECK (reason IS NULL OR btrim(reason) <> ''),
    CHECK (extract(year FROM day) = year),
    CHECK (school OR reason IS NOT NULL)
);
CREATE INDEX school_calendar_days_year ON school_calendar_days (year);

-- A contract with a contractor: its identity and validity. Its priced terms are versions (contract_terms).
CREATE TABLE contracts (
    id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    contractor_id integer NOT NULL REFERENCES contractors (id),
    number        text NOT NULL UNIQUE CHECK (btrim(number) <> ''),
    lot           text CHECK (lot IS NULL OR btrim(lot) <> ''),
    valid_from    date NOT NULL,
    valid_to      date NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    CHECK (valid_to >= valid_from)
);
CREATE INDEX contracts_contractor ON contracts (contractor_id);

-- The priced terms of a contract, effective-dated: a version applies from its valid_from to the day before
-- the next version's (the first one also to every day before it). Rows are never changed but for
-- `superseded_at`, set when a later edit gives the same valid_from new terms: the history keeps both, only
-- the newer applies. One version in force per contract and day: the unique index below.
CREATE TABLE contract_terms (
    id                       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    contract_id              integer NOT NULL REFERENCES contracts (id),
    valid_from               date NOT NULL,
    price_per_km             numeric(12, 2) NOT NULL CHECK (price_per_km > 0),
    price_per_km_unpaved     numeric(12, 2) CHECK (price_per_km_unpaved > 0),
    made_min_coverage_pct    numeric(5, 2) NOT NULL DEFAULT 95,
    partial_min_coverage_pct numeric(5, 2) NOT NULL DEFAULT 50,
    partial_pay              text NOT NULL DEFAULT 'proportional'
                             CHECK (partial_pay IN ('proportional', 'declared_km', 'none')),
    off_route_km_paid        boolean NOT NULL DEFAULT false,
    justified_paid           boolean NOT NULL DEFAULT false,
    changed                  text[] NOT NULL DEFAULT '{}',  -- the fields this version changed from the one before
    created_at               timestamptz NOT NULL DEFAULT now(),
    created_by               text,
    superseded_at            timestamptz,
    CHECK (0 <= partial_min_coverage_pct AND partial_min_coverage_pct <= made_min_coverage_pct
           AND made_min_coverage_pct <= 100)
);
CREATE UNIQUE INDEX contract_terms_one_per_day ON contract_terms (contract_id, valid_from)
    WHERE superseded_at IS NULL;

-- The versions in force with the days each applies to: `during` is [valid_from, next valid_from), and the
-- earliest version's lower bound is open. The measurement joins it with `during @> day`.
CREATE VIEW contract_terms_in_force AS
SELECT t.*,
       daterange(CASE WHEN lag(t.valid_from) OVER w IS NULL THEN NULL ELSE t.valid_from END,
                 lead(t.valid_from) OVER w, '[)') AS during
FROM contract_terms t
WHERE t.superseded_at IS NULL
WINDOW w AS (PARTITION BY t.contract_id ORDER BY t.valid_from);

-- Routes belong to a contract (nullable: a route may be registered before its contract).
ALTER TABLE routes ADD COLUMN contract_id integer REFERENCES contracts (id);
CREATE INDEX routes_contract ON routes (contract_id);
