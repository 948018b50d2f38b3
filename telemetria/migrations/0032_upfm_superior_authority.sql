-- The UPFM's value in R$ per year (Lei 3.588/2023 Art. 36–39 fine in UPFM; the decision turns them into R$ by
-- the value of the infraction's year). Kept in the registry and set by an admin (Administração › UPFM), audited
-- with old → new. The setting TELEMETRIA_UPFM_BRL only seeds years that are not here yet.
CREATE TABLE upfm_values (
    year       integer PRIMARY KEY CHECK (year BETWEEN 2000 AND 2100),
    brl        numeric(12, 4) NOT NULL CHECK (brl > 0 AND brl < 100000),
    updated_at timestamptz NOT NULL DEFAULT now(),
    updated_by text  -- NULL: seeded from the setting
);

-- The superior authority (Lei 14.133/2021 Art. 166, sole paragraph): who judges an appeal the decider did not
-- reconsider. Admins are by default; a servidor (admin or monitor) may be flagged in the users page (audited).
ALTER TABLE users ADD COLUMN superior_authority boolean NOT NULL DEFAULT false;
ALTER TABLE users ADD CONSTRAINT users_superior_authority_servidor
    CHECK (NOT superior_authority OR role IN ('admin', 'monitor'));
