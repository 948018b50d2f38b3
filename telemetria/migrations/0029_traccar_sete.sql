-- Two ways in for data that already lives elsewhere (docs/trackers.md, docs/sete.md):
-- Traccar servers forwarding their decoded positions, and the SETE school-transport manager's registry.

-- A Traccar server that forwards positions (`forward.url` + `forward.header`). It holds one bearer
-- token (sha256, as trackers' tokens) and may speak for every registered tracker, or, with a
-- contractor, only for trackers installed in that contractor's vehicles at the fix's time.
CREATE TABLE traccar_gateways (
    id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text NOT NULL UNIQUE CHECK (name <> '' AND length(name) <= 100),
    contractor_id integer REFERENCES contractors (id),
    token_hash    bytea NOT NULL UNIQUE,
    active        boolean NOT NULL DEFAULT true,
    created_at    timestamptz NOT NULL DEFAULT now()
);
-- A revoked or deactivated gateway stops working within about a second in every process, as a tracker's token.
CREATE TRIGGER traccar_gateways_bump_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON traccar_gateways
    FOR EACH STATEMENT EXECUTE FUNCTION bump_registry_epoch();

-- What a SETE import last brought for each item it links: the SETE id, our row, and the values as
-- imported. A re-run compares SETE's values now, ours now and these: SETE changed and ours did not →
-- update (a dated version); both changed → a conflict, ours kept; ours changed only → a local edit, kept.
CREATE TABLE sete_links (
    ibge        text NOT NULL CHECK (ibge ~ '^[0-9]{7}$'),
    kind        text NOT NULL CHECK (kind IN ('route', 'vehicle', 'driver')),
    sete_id     text NOT NULL CHECK (sete_id <> ''),
    local_id    integer NOT NULL,
    imported    jsonb NOT NULL,
    imported_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (ibge, kind, sete_id),
    UNIQUE (ibge, kind, local_id)  -- one SETE item per row of ours
);
