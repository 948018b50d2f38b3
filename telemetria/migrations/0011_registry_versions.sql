-- A registry that remembers (issue 17): routes (with their stops), speed zones, vehicles' speed limits and
-- route assignments are effective-dated, with the semantics and words of contract_terms (0010): an edit is
-- a version valid from a date (`valid_from`), applying to the day before the next version's; the earliest
-- version's lower bound is open; a later edit with the same valid_from supersedes the row (`superseded_at`)
-- and the history keeps both. Reports of a day read the versions in force that day, so an edit made later
-- leaves past days as they were, and an edit dated in the past (a correction) changes exactly those days.
--
-- Design. The current tables (routes, route_stops, speed_zones, vehicles, route_assignments) stay where
-- edits land and hold the newest version, so every write path (the API, the CLI's route-file import, the
-- demo, hand-written SQL) keeps working unchanged; statement triggers snapshot each changed item into one
-- generic table, registry_versions, as the item's whole data (jsonb). One table rather than one per kind:
-- the four kinds share every rule (dates, superseding, history, the 409), so one function enforces them,
-- and readers only differ in how they decode `data`. Statement triggers with transition tables, not row
-- triggers: a stops PUT or a bulk UPDATE snapshots each item once per statement, not once per row.
--   * valid_from comes from the transaction-local setting telemetria.effective_from (the API sets it with
--     set_config(..., true)), by default today in the service's zone (America/Porto_Velho); the author
--     from telemetria.actor.
--   * Several statements of one transaction (a route insert then its stops; a stops PUT's delete then
--     insert) update that transaction's version in place (txid) instead of superseding it again; a
--     transaction that ends where it began leaves no version.
--   * A valid_from before the newest version's is refused (SQLSTATE TL011, the API answers 409 naming
--     effective_from): a correction may rewrite the newest version's days, never split an older one, so
--     versions cannot overlap; one version per item and first day (the unique index) makes it impossible.
--   * A deleted item (a route assignment ended from a date) gets a version whose data is NULL: from its
--     valid_from on the item is not in force, the days before keep it.
-- report_generation is still bumped by the current tables' statement triggers (0007), so the rollups'
-- bases are checked after every edit; the bases are computed per day from the versions.

-- Exact: the measurement pays by it.
ALTER TABLE routes ALTER COLUMN declared_km TYPE numeric(9, 3);

CREATE TABLE registry_versions (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('route', 'speed_zone', 'vehicle', 'route_assignment')),
    item_id       integer NOT NULL,
    valid_from    date NOT NULL,
    data          jsonb,                          -- the item as it is from valid_from on; NULL: deleted
    changed       text[] NOT NULL DEFAULT '{}',   -- the fields this version changed from the one before
    based_on      bigint,                         -- the version it was made from (NULL: the first)
    created_at    timestamptz NOT NULL DEFAULT now(),
    created_by    text,
    superseded_at timestamptz,
    txid          bigint NOT NULL DEFAULT txid_current()
);
CREATE UNIQUE INDEX registry_versions_one_per_day ON registry_versions (kind, item_id, valid_from)
    WHERE superseded_at IS NULL;
CREATE INDEX registry_versions_item ON registry_versions (kind, item_id, id);

-- The versions in force with the days each applies to: `during` is [valid_from, next valid_from), and the
-- earliest version's lower bound is open (as contract_terms_in_force).
CREATE VIEW registry_versions_in_force AS
SELECT v.*,
       daterange(CASE WHEN lag(v.valid_from) OVER w IS NULL THEN NULL ELSE v.valid_from END,
                 lead(v.valid_from) OVER w, '[)') AS during
FROM registry_versions v
WHERE v.superseded_at IS NULL
WINDOW w AS (PARTITION BY v.kind, v.item_id ORDER BY v.valid_from);

-- The item as the current tables hold it, NULL when it does not exist (any more).
CREATE FUNCTION registry_snapshot(k text, item integer) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT CASE k
    WHEN 'route' THEN (
        SELECT jsonb_build_object(
            'code', r.code, 'name', r.name, 'school_year', r.school_year, 'shift', r.shift,
            'geometry', r.geometry, 'length_m', r.length_m, 'declared_km', r.declared_km,
            'speed_limit_kmh', r.speed_limit_kmh, 'deviation_tolerance_m', r.deviation_tolerance_m,
            'contract_id', r.contract_id, 'active', r.active,
            'stops', coalesce((SELECT jsonb_agg(jsonb_build_object(
                                   'seq', s.seq, 'name', s.name, 'lat', s.lat, 'lon', s.lon, 'kind', s.kind,
                                   'scheduled_time', s.scheduled_time::text) ORDER BY s.seq)
                               FROM route_stops s WHERE s.route_id = r.id), '[]'))
        FROM routes r WHERE r.id = item)
    WHEN 'speed_zone' THEN (
        SELECT jsonb_build_object('name', z.name, 'limit_kmh', z.limit_kmh, 'geometry', z.geometry,
                                  'active', z.active)
        FROM speed_zones z WHERE z.id = item)
    WHEN 'vehicle' THEN (
        SELECT jsonb_build_object('speed_limit_kmh', v.speed_limit_kmh) FROM vehicles v WHERE v.id = item)
    WHEN 'route_assignment' THEN (
        SELECT jsonb_build_object('route_id', a.route_id, 'vehicle_id', a.vehicle_id, 'valid_from', a.valid_from,
                                  'valid_to', a.valid_to, 'weekdays', a.weekdays)
        FROM route_assignments a WHERE a.id = item)
    END
$$;

-- The top-level fields that differ between two snapshots, sorted; a deletion changes {deleted}.
CREATE FUNCTION registry_changed(old jsonb, new jsonb) RETURNS text[] LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN new IS NULL THEN ARRAY['deleted'] ELSE (
        SELECT coalesce(array_agg(key ORDER BY key), '{}')
        FROM jsonb_each(new) n FULL JOIN jsonb_each(coalesce(old, '{}')) o USING (key)
        WHERE n.value IS DISTINCT FROM o.value) END
$$;

-- Record `snapshot` as the version of item (k, item) from the transaction's effective date.
CREATE FUNCTION registry_version(k text, item integer, snapshot jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    eff   date := coalesce(nullif(current_setting('telemetria.effective_from', true), '')::date,
                           (now() AT TIME ZONE 'America/Porto_Velho')::date);
    actor text := nullif(current_setting('telemetria.actor', true), '');
    tx    bigint := txid_current();
    mine  registry_versions;
    base  registry_versions;
BEGIN
    -- Concurrent edits of one item take turns: the second sees the first's version and supersedes or
    -- follows it, instead of both superseding the same one (the unique index would refuse the second).
    PERFORM pg_advisory_xact_lock(hashtext('registry_version:' || k), item);
    SELECT * INTO mine FROM registry_versions v
    WHERE v.kind = k AND v.item_id = item AND v.txid = tx AND v.superseded_at IS NULL;
    IF FOUND THEN  -- a later statement of the same edit: that version, updated in place
        SELECT * INTO base FROM registry_versions v WHERE v.id = mine.based_on;
        IF base.data IS NOT DISTINCT FROM snapshot THEN  -- back where it began (or created and deleted)
            DELETE FROM registry_versions WHERE id = mine.id;
            UPDATE registry_versions SET superseded_at = NULL
            WHERE id = base.id AND valid_from = mine.valid_from AND superseded_at IS NOT NULL;
        ELSE
            UPDATE registry_versions SET data = snapshot, changed = registry_changed(base.data, snapshot)
            WHERE id = mine.id;
        END IF;
        RETURN;
    END IF;
    SELECT * INTO base FROM registry_versions v
    WHERE v.kind = k AND v.item_id = item AND v.superseded_at IS NULL
    ORDER BY v.valid_from DESC LIMIT 1;
    IF base.data IS NOT DISTINCT FROM snapshot THEN
        RETURN;  -- nothing changed (or a never-versioned item is gone)
    END IF;
    IF base.id IS NOT NULL THEN
        IF eff < base.valid_from THEN
            RAISE EXCEPTION 'effective_from: % is before % (the first day of the newest version of % %)',
                eff, base.valid_from, k, item
                USING ERRCODE = 'TL011', HINT = base.valid_from::text;
        END IF;
        IF eff = base.valid_from THEN
            UPDATE registry_versions SET superseded_at = now() WHERE id = base.id;
        END IF;
    END IF;
    INSERT INTO registry_versions (kind, item_id, valid_from, data, changed, based_on, created_by, txid)
    VALUES (k, item, eff, snapshot, registry_changed(base.data, snapshot), base.id, actor, tx);
END $$;

-- Statement trigger: TG_ARGV[0] the kind, TG_ARGV[1] the column of the changed rows naming the item.
CREATE FUNCTION registry_version_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k   text := TG_ARGV[0];
    src text := CASE TG_OP
                WHEN 'INSERT' THEN format('SELECT %I FROM new_rows', TG_ARGV[1])
                WHEN 'DELETE' THEN format('SELECT %I FROM old_rows', TG_ARGV[1])
                ELSE format('SELECT %1$I FROM new_rows UNION SELECT %1$I FROM old_rows', TG_ARGV[1]) END;
    i   integer;
BEGIN
    FOR i IN EXECUTE 'SELECT DISTINCT x FROM (' || src || ') s(x) ORDER BY 1' LOOP
        PERFORM registry_version(k, i, registry_snapshot(k, i));
    END LOOP;
    RETURN NULL;
END $$;

-- Existing data: one version each, valid from the day it was registered, in force from the beginning.
INSERT INTO registry_versions (kind, item_id, valid_from, data, changed, created_at)
SELECT 'route', id, (created_at AT TIME ZONE 'America/Porto_Velho')::date, registry_snapshot('route', id),
       registry_changed(NULL, registry_snapshot('route', id)), created_at
FROM routes;
INSERT INTO registry_versions (kind, item_id, valid_from, data, changed, created_at)
SELECT 'speed_zone', id, (created_at AT TIME ZONE 'America/Porto_Velho')::date,
       registry_snapshot('speed_zone', id), registry_changed(NULL, registry_snapshot('speed_zone', id)), created_at
FROM speed_zones;
INSERT INTO registry_versions (kind, item_id, valid_from, data, changed, created_at)
SELECT 'vehicle', id, (created_at AT TIME ZONE 'America/Porto_Velho')::date, registry_snapshot('vehicle', id),
       registry_changed(NULL, registry_snapshot('vehicle', id)), created_at
FROM vehicles;
INSERT INTO registry_versions (kind, item_id, valid_from, data, changed, created_at)
SELECT 'route_assignment', id, (created_at AT TIME ZONE 'America/Porto_Velho')::date,
       registry_snapshot('route_assignment', id), registry_changed(NULL, registry_snapshot('route_assignment', id)),
       created_at
FROM route_assignments;

CREATE TRIGGER routes_version_insert AFTER INSERT ON routes REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route', 'id');
CREATE TRIGGER routes_version_update AFTER UPDATE ON routes REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route', 'id');
CREATE TRIGGER routes_version_delete AFTER DELETE ON routes REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route', 'id');
CREATE TRIGGER route_stops_version_insert AFTER INSERT ON route_stops REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route', 'route_id');
CREATE TRIGGER route_stops_version_update AFTER UPDATE ON route_stops
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route', 'route_id');
CREATE TRIGGER route_stops_version_delete AFTER DELETE ON route_stops REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route', 'route_id');
CREATE TRIGGER speed_zones_version_insert AFTER INSERT ON speed_zones REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('speed_zone', 'id');
CREATE TRIGGER speed_zones_version_update AFTER UPDATE ON speed_zones
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('speed_zone', 'id');
CREATE TRIGGER speed_zones_version_delete AFTER DELETE ON speed_zones REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('speed_zone', 'id');
-- Vehicles: only the speed limit is versioned; registry_version skips a snapshot that did not change.
CREATE TRIGGER vehicles_version_insert AFTER INSERT ON vehicles REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('vehicle', 'id');
CREATE TRIGGER vehicles_version_update AFTER UPDATE ON vehicles REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('vehicle', 'id');
CREATE TRIGGER route_assignments_version_insert AFTER INSERT ON route_assignments REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route_assignment', 'id');
CREATE TRIGGER route_assignments_version_update AFTER UPDATE ON route_assignments
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route_assignment', 'id');
CREATE TRIGGER route_assignments_version_delete AFTER DELETE ON route_assignments REFERENCING OLD TABLE AS old_rows
    FOR EACH STATEMENT EXECUTE FUNCTION registry_version_rows('route_assignment', 'id');
