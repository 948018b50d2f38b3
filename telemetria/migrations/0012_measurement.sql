-- The monthly measurement (issue 17): justifications of runs not made, and the closed months' frozen boletins.

-- A servidor's justification of a route's run not made (or partial) on a local day: run_no NULL covers every
-- run of that day. One per run (or per day); the write is audited (registry.run_justification.create).
CREATE TABLE run_justifications (
    id         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    route_id   integer NOT NULL REFERENCES routes (id),
    day        date NOT NULL,
    run_no     integer CHECK (run_no >= 1),
    reason     text NOT NULL CHECK (btrim(reason) <> ''),
    created_by text,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX run_justifications_one ON run_justifications (route_id, day, coalesce(run_no, 0));

-- A closed month's boletim of one contract, frozen: `content` is the canonical JSON bytes as served (keys
-- sorted, numbers written with their places), `sha256` their digest. A month can be closed, reopened (by an
-- admin, with a reason) and closed again: every closing is kept; at most one is in force (not reopened).
CREATE TABLE measurement_closures (
    id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    contract_id   integer NOT NULL REFERENCES contracts (id),
    month         date NOT NULL CHECK (extract(day FROM month) = 1),  -- the month's first day
    content       bytea NOT NULL,
    sha256        text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    closed_by     text NOT NULL,
    closed_at     timestamptz NOT NULL DEFAULT now(),
    reopened_by   text,
    reopened_at   timestamptz,
    reopen_reason text CHECK (reopen_reason IS NULL OR btrim(reopen_reason) <> ''),
    CHECK ((reopened_at IS NULL) = (reopened_by IS NULL) AND (reopened_at IS NULL) = (reopen_reason IS NULL))
);
CREATE UNIQUE INDEX measurement_closures_in_force ON measurement_closures (contract_id, month)
    WHERE reopened_at IS NULL;
