-- Issue 31: a closed month stays closed. A closed boletim (measurement_closures, 0012) is what was paid: a
-- registry edit whose version would apply from a day inside a closed, not reopened, month of a contract the item
-- touches is refused (SQLSTATE TL031; the API answers 409 naming the month and "reabra o mês"). The month must
-- be reopened first, or the edit made to apply after it (effective_from). Which contracts an item touches:
--   route:            the contract in its new version and in the version it replaces (dated membership);
--   route_assignment: the contract of its route, new and old;
--   vehicle:          the contracts of the routes it is assigned to.
-- Speed zones touch no contract. Contract edits are checked in contracts/store.py (validity, priced versions).

CREATE FUNCTION registry_version_contracts(k text, item integer, new_data jsonb, old_data jsonb)
RETURNS integer[] LANGUAGE sql STABLE AS $$
    SELECT coalesce(array_agg(DISTINCT c) FILTER (WHERE c IS NOT NULL), '{}') FROM (
        SELECT (d ->> 'contract_id')::int AS c FROM unnest(ARRAY[new_data, old_data]) d WHERE k = 'route'
        UNION ALL
        SELECT r.contract_id FROM routes r
        WHERE k = 'route_assignment'
          AND r.id IN ((new_data ->> 'route_id')::int, (old_data ->> 'route_id')::int)
        UNION ALL
        SELECT r.contract_id FROM route_assignments a JOIN routes r ON r.id = a.route_id
        WHERE k = 'vehicle' AND a.vehicle_id = item
    ) s
$$;

CREATE FUNCTION registry_version_closed_guard() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_data jsonb;
    shut     record;
BEGIN
    IF NEW.kind = 'speed_zone' THEN
        RETURN NEW;
    END IF;
    SELECT data INTO old_data FROM registry_versions WHERE id = NEW.based_on;
    SELECT m.month, k.number, k.id INTO shut
    FROM measurement_closures m JOIN contracts k ON k.id = m.contract_id
    WHERE m.reopened_at IS NULL
      AND m.contract_id = ANY (registry_version_contracts(NEW.kind, NEW.item_id, NEW.data, old_data))
      AND (m.month + interval '1 month')::date > NEW.valid_from
    ORDER BY m.month, k.number LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'effective_from: % reaches %, a closed month of contract %: reabra o mês (POST /api/v1/measurements/%/%/reopen) or make the change apply from % on',
            NEW.valid_from, to_char(shut.month, 'YYYY-MM'), shut.number, shut.id, to_char(shut.month, 'YYYY-MM'),
            (shut.month + interval '1 month')::date
            USING ERRCODE = 'TL031';
    END IF;
    RETURN NEW;
END $$;

CREATE TRIGGER registry_versions_closed_months BEFORE INSERT ON registry_versions
    FOR EACH ROW EXECUTE FUNCTION registry_version_closed_guard();

-- The school day as it was (issue 31): a day without school in some shifts only (NULL: the whole day), and the
-- days a shift's runs were due at another time (an early dismissal, a late start). contracts/calendar.py.
ALTER TABLE school_calendar_days ADD COLUMN shifts text[]
    CHECK (shifts IS NULL OR (cardinality(shifts) > 0 AND shifts <@ ARRAY['manha', 'tarde', 'noite']));
CREATE TABLE school_schedule_changes (
    year          integer NOT NULL REFERENCES school_years (year) ON DELETE CASCADE,
    day           date NOT NULL,
    shift         text NOT NULL CHECK (shift IN ('manha', 'tarde', 'noite')),
    runs_due_from time NOT NULL,
    reason        text NOT NULL CHECK (btrim(reason) <> ''),
    PRIMARY KEY (day, shift)
);
CREATE INDEX school_schedule_changes_year ON school_schedule_changes (year);
