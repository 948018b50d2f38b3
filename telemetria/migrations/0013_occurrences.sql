-- Fiscalização (issue 18): occurrences found in the fixes, their legal classification, the process's append-only
-- history, the evidence frozen at confirmation, and the contractor's attachments. docs/fiscalizacao.md.

-- The classification of each kind (Art. 36–39); an admin may change it. An occurrence copies the article and
-- severity in force when it is detected, and keeps the ones fixed at confirmation.
CREATE TABLE occurrence_kinds (
    kind       text PRIMARY KEY,
    article    text NOT NULL CHECK (btrim(article) <> ''),
    severity   text NOT NULL CHECK (severity IN ('leve', 'media', 'grave', 'gravissima')),
    updated_by text,
    updated_at timestamptz NOT NULL DEFAULT now()
);
INSERT INTO occurrence_kinds (kind, article, severity) VALUES
    ('speeding', 'Art. 37, X', 'media'),
    ('route_deviation', 'Art. 26', 'media'),
    ('unauthorized_stop', 'Art. 38, IX', 'grave'),
    ('schedule_delay', 'Art. 37, XI', 'media'),
    ('run_not_made', 'Art. 39, I', 'gravissima'),
    ('unauthorized_vehicle', 'Art. 39, II', 'gravissima'),
    ('over_2h_on_board', 'Art. 9, § 1º', 'grave'),
    ('tracker_silent', 'Art. 15, § 1º, XII e § 2º', 'media');

CREATE TABLE occurrences (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind            text NOT NULL REFERENCES occurrence_kinds (kind),
    vehicle_id      integer NOT NULL REFERENCES vehicles (id),
    contractor_id   integer REFERENCES contractors (id),   -- the vehicle's at start
    driver_id       integer REFERENCES drivers (id),       -- assigned to the vehicle at start, if any
    route_id        integer REFERENCES routes (id),
    run_no          integer,
    natural_key     text,                                 -- model.Candidate.key
    day             date NOT NULL,                        -- local day of start (America/Porto_Velho)
    start_ts        timestamptz NOT NULL,
    end_ts          timestamptz,                          -- NULL: still going on
    lat             double precision,
    lon             double precision,
    place           text,
    facts           jsonb NOT NULL DEFAULT '{}',
    article         text NOT NULL,
    severity        text NOT NULL CHECK (severity IN ('leve', 'media', 'grave', 'gravissima')),
    status          text NOT NULL DEFAULT 'detected' CHECK (status IN
                        ('detected', 'withdrawn', 'confirmed', 'dismissed', 'notified', 'defense', 'decided', 'closed')),
    detected_at     timestamptz NOT NULL DEFAULT now(),
    completed_ts    timestamptz,                          -- fix time of the fix that completed it
    received_at     timestamptz,                          -- when that fix arrived
    late            boolean NOT NULL DEFAULT false,       -- found from fixes that arrived late (store-and-forward)
    updated_at      timestamptz NOT NULL DEFAULT now(),
    notified_at     timestamptz,
    defense_due     timestamptz,                          -- end of the defence deadline (business days)
    penalty         text CHECK (penalty IN ('none', 'warning', 'fine')),
    fine_upfm       numeric(10, 2),
    fine_brl        numeric(14, 2),
    recurrence_of   bigint REFERENCES occurrences (id),   -- the earlier decided fine that doubled this one
    evidence_sha256 text CHECK (evidence_sha256 ~ '^[0-9a-f]{64}$'),
    CHECK (end_ts IS NULL OR end_ts >= start_ts)
);
CREATE INDEX occurrences_start ON occurrences (start_ts);
CREATE INDEX occurrences_vehicle_start ON occurrences (vehicle_id, start_ts);
CREATE INDEX occurrences_open ON occurrences (status) WHERE status NOT IN ('withdrawn', 'dismissed', 'closed');
CREATE INDEX occurrences_contractor ON occurrences (contractor_id, start_ts);

-- Every transition and note, append-only: who (user or "detector"), when, from where, what was said.
CREATE TABLE occurrence_history (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurrence_id bigint NOT NULL REFERENCES occurrences (id),
    at            timestamptz NOT NULL DEFAULT now(),
    actor         text NOT NULL,
    user_id       integer,
    role          text,
    ip            inet,
    action        text NOT NULL,   -- detected, updated, withdrawn, restored, confirmed, dismissed, notified, defense,
                                   -- decided, closed, note
    from_status   text,
    to_status     text,
    text          text,
    data          jsonb
);
CREATE INDEX occurrence_history_occurrence ON occurrence_history (occurrence_id, id);

-- What the process rests on, frozen at confirmation: the fixes, the figures and the registry versions used, as
-- canonical JSON bytes, with their SHA-256. Later edits or late data cannot change it (they add a note instead).
CREATE TABLE occurrence_evidence (
    occurrence_id bigint PRIMARY KEY REFERENCES occurrences (id),
    content       bytea NOT NULL,
    sha256        text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    frozen_by     text NOT NULL,
    frozen_at     timestamptz NOT NULL DEFAULT now()
);

-- The contractor's documents attached to a defence (or the servidor's to a note).
CREATE TABLE occurrence_attachments (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurrence_id bigint NOT NULL REFERENCES occurrences (id),
    history_id    bigint REFERENCES occurrence_history (id),
    filename      text NOT NULL CHECK (btrim(filename) <> ''),
    content_type  text NOT NULL,
    size          integer NOT NULL CHECK (size >= 0),
    sha256        text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    content       bytea NOT NULL,
    uploaded_by   text NOT NULL,
    uploaded_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX occurrence_attachments_occurrence ON occurrence_attachments (occurrence_id);

CREATE FUNCTION occurrence_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '% is append-only (% refused)', TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;
CREATE TRIGGER occurrence_history_append_only BEFORE UPDATE OR DELETE ON occurrence_history
    FOR EACH ROW EXECUTE FUNCTION occurrence_append_only();
CREATE TRIGGER occurrence_evidence_append_only BEFORE UPDATE OR DELETE ON occurrence_evidence
    FOR EACH ROW EXECUTE FUNCTION occurrence_append_only();
CREATE TRIGGER occurrence_attachments_append_only BEFORE UPDATE OR DELETE ON occurrence_attachments
    FOR EACH ROW EXECUTE FUNCTION occurrence_append_only();
