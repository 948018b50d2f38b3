-- Fiscalização on its legal basis (issue 32): findings apart from infractions, the procedure of Lei 14.133/2021
-- (Art. 41 of Lei 3.588/2023 points to it) with its appeal, and the municipality's holidays for business days.

-- A kind names the duty its finding breaches (Art. 9 §1, 15, 26...) and, apart, the infraction (an inciso of
-- Art. 36-39) a servidor may open from it. No article: a finding only (for the Secretaria, Art. 34), never fined.
ALTER TABLE occurrence_kinds ADD COLUMN duty text CHECK (duty IS NULL OR btrim(duty) <> '');
ALTER TABLE occurrence_kinds ALTER COLUMN article DROP NOT NULL, ALTER COLUMN severity DROP NOT NULL;
UPDATE occurrence_kinds SET duty = d.duty, article = d.article, severity = d.severity
FROM (VALUES
    ('speeding', 'Art. 37, X (leis de trânsito)', 'Art. 37, X', 'media'),
    ('route_deviation', 'Art. 26', 'Art. 37, X', 'media'),
    ('unauthorized_stop', 'Art. 38, IX', 'Art. 38, IX', 'grave'),
    ('schedule_delay', 'Art. 37, XI', 'Art. 37, XI', 'media'),
    ('run_not_made', 'Art. 39, I', 'Art. 39, I', 'gravissima'),
    ('unauthorized_vehicle', 'Art. 39, II', 'Art. 39, II', 'gravissima'),
    ('over_2h_on_board', 'Art. 9, § 1º', NULL, NULL),
    ('tracker_silent', 'Art. 15, § 1º, XII e § 2º', 'Art. 37, X', 'media')
) AS d (kind, duty, article, severity)
WHERE occurrence_kinds.kind = d.kind;
UPDATE occurrence_kinds SET duty = article WHERE duty IS NULL;
ALTER TABLE occurrence_kinds ALTER COLUMN duty SET NOT NULL;
ALTER TABLE occurrence_kinds ADD CONSTRAINT occurrence_kinds_infraction
    CHECK ((article IS NULL) = (severity IS NULL) AND (article IS NULL OR article ~ '^Art\. 3[6-9], [IVXL]+$'));

-- An occurrence copies its kind's duty and article; a finding without an article has no severity either.
ALTER TABLE occurrences ADD COLUMN duty text;
ALTER TABLE occurrences ALTER COLUMN article DROP NOT NULL, ALTER COLUMN severity DROP NOT NULL;
UPDATE occurrences o SET duty = k.duty FROM occurrence_kinds k WHERE k.kind = o.kind;
ALTER TABLE occurrences ADD CONSTRAINT occurrences_article_severity CHECK ((article IS NULL) = (severity IS NULL));

ALTER TABLE occurrences DROP CONSTRAINT occurrences_status_check;
ALTER TABLE occurrences ADD CONSTRAINT occurrences_status_check CHECK (status IN
    ('detected', 'withdrawn', 'confirmed', 'dismissed', 'notified', 'defense', 'decided', 'under_appeal', 'closed'));
ALTER TABLE occurrences DROP CONSTRAINT occurrences_penalty_check;
ALTER TABLE occurrences ADD CONSTRAINT occurrences_penalty_check
    CHECK (penalty IN ('none', 'warning', 'fine', 'warning_and_fine'));

ALTER TABLE occurrences
    ADD COLUMN defense_final     boolean NOT NULL DEFAULT false,  -- the contractor declared its defence final
    ADD COLUMN decided_at        timestamptz,                      -- the (first) decision: the intimação
    ADD COLUMN decided_by        integer,                          -- its user (who may reconsider, Art. 166)
    ADD COLUMN appeal_due        timestamptz,                      -- 15 business days after the decision
    ADD COLUMN appealed_at       timestamptz,
    ADD COLUMN reconsider_due    timestamptz,                      -- 5 business days after the appeal
    ADD COLUMN appeal_outcome    text CHECK (appeal_outcome IN ('upheld', 'reformed', 'annulled')),
    ADD COLUMN appeal_decided_at timestamptz;
CREATE INDEX occurrences_contractor_penalty ON occurrences (contractor_id, severity, start_ts)
    WHERE penalty IN ('warning', 'fine', 'warning_and_fine');

-- The municipality's own holidays (the national ones and Rondônia's are computed): they are not business days,
-- so they lengthen a defence or appeal term. Kept by the Secretaria next to the school calendar.
CREATE TABLE municipal_holidays (
    day        date PRIMARY KEY,
    name       text NOT NULL CHECK (btrim(name) <> '' AND length(name) <= 200),
    updated_by text,
    updated_at timestamptz NOT NULL DEFAULT now()
);
