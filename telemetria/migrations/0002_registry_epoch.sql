-- A counter that every change to trackers or their installations bumps (statement triggers), so
-- the ingest writer can keep the registry in memory and check, inside its own transaction and
-- under its lock, that what it holds is still current, instead of reading it on every flush.
CREATE TABLE registry_epoch (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    n        bigint NOT NULL
);
INSERT INTO registry_epoch (n) VALUES (1);

CREATE FUNCTION bump_registry_epoch() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE registry_epoch SET n = n + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER trackers_bump_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON trackers
    FOR EACH STATEMENT EXECUTE FUNCTION bump_registry_epoch();
CREATE TRIGGER tracker_installations_bump_epoch AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON tracker_installations
    FOR EACH STATEMENT EXECUTE FUNCTION bump_registry_epoch();

-- Raises SQLSTATE TL001 when the registry changed since the caller loaded epoch `expected`.
CREATE FUNCTION ingest_check_epoch(expected bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT n FROM registry_epoch) <> expected THEN
        RAISE EXCEPTION 'registry changed since epoch %', expected USING ERRCODE = 'TL001';
    END IF;
END $$;
