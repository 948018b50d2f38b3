-- The current tables show what is in force today (issue 33, item 5). Until this migration the current tables
-- (routes, route_stops, speed_zones, vehicles' speed limit, route_assignments) held the newest version, so an
-- edit dated ahead (up to a year, Settings.registry_max_ahead_days) showed at once: a route moved to another
-- contract from next month changed what its contractors saw today, a new name or stop list was read before its
-- day. Reports of a day already read the version in force that day (0011); now the current tables do too:
--   * An edit dated ahead is written as a version (0011's triggers, unchanged), and at commit the item's current
--     row is set back to its version in force today (a deferred constraint trigger on registry_versions: a stops
--     PUT is two statements, a delete then an insert, so the row can only be set back once the edit is whole).
--   * The version's day comes by date, not by a timer that may not run: registry_promote(today) applies to the
--     current tables every version whose first day is in (the last day promoted, today]. Every pool connection
--     calls it on the first use of each local day (telemetria/db.py), and it is cheap when there is nothing to
--     do (one row read). It is idempotent and takes turns (an advisory lock), so processes may race for it.
--   * registry_apply() writes a version's data into the current tables with versioning switched off for that
--     write (telemetria.applying), so applying a version never makes another one.
--   * An edit of an item that has a version dated ahead must itself be dated on or after that version (0011's
--     TL011), and is made on the newest version: registry_load_newest() puts it in the current row first
--     (registry/versions.dated), so the new version is the newest plus the edit, not today's plus the edit.
-- The item's next version (its first day and the fields it changes) is exposed by the API as scheduled_change
-- ("alteração programada para dd/mm/aaaa" on the pages).

-- The last local day whose versions are in the current tables.
CREATE TABLE registry_promoted (
    one     boolean PRIMARY KEY DEFAULT true CHECK (one),
    through date NOT NULL
);

-- The data of the version of (k, item) in force on `day`; the earliest version's lower bound is open (0011), so
-- an item whose only versions start after `day` reads its earliest. NULL: deleted on that day, or never versioned.
CREATE FUNCTION registry_in_force(k text, item integer, day date) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT v.data FROM registry_versions v
    WHERE v.kind = k AND v.item_id = item AND v.superseded_at IS NULL
    ORDER BY (v.valid_from <= day) DESC, CASE WHEN v.valid_from <= day THEN v.valid_from END DESC, v.valid_from
    LIMIT 1
$$;

-- Write `d` (a version's data, registry_snapshot's shape) into the current tables of (k, item), without making a
-- version of it. Only the versioned fields: a vehicle's plate or contractor, a route's created_at stay.
CREATE FUNCTION registry_apply(k text, item integer, d jsonb) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF registry_snapshot(k, item) IS NOT DISTINCT FROM d THEN
        RETURN;
    END IF;
    PERFORM set_config('telemetria.applying', 'on', true);
    IF k = 'route' AND d IS NOT NULL THEN
        UPDATE routes SET code = d ->> 'code', name = d ->> 'name', school_year = (d ->> 'school_year')::int,
                          shift = d ->> 'shift', geometry = d -> 'geometry', length_m = (d ->> 'length_m')::float8,
                          declared_km = (d ->> 'declared_km')::numeric,
                          speed_limit_kmh = (d ->> 'speed_limit_kmh')::real,
                          deviation_tolerance_m = (d ->> 'deviation_tolerance_m')::real,
                          contract_id = (d ->> 'contract_id')::int, active = (d ->> 'active')::boolean
        WHERE id = item;
        IF (registry_snapshot(k, item) -> 'stops') IS DISTINCT FROM (d -> 'stops') THEN
            DELETE FROM route_stops WHERE route_id = item;
            INSERT INTO route_stops (route_id, seq, name, lat, lon, kind, scheduled_time)
            SELECT item, s.seq, s.name, s.lat, s.lon, s.kind, s.scheduled_time
            FROM jsonb_to_recordset(d -> 'stops')
                 AS s(seq int, name text, lat float8, lon float8, kind text, scheduled_time time);
        END IF;
    ELSIF k = 'speed_zone' AND d IS NOT NULL THEN
        UPDATE speed_zones SET name = d ->> 'name', limit_kmh = (d ->> 'limit_kmh')::real, geometry = d -> 'geometry',
                               active = (d ->> 'active')::boolean
        WHERE id = item;
    ELSIF k = 'vehicle' AND d IS NOT NULL THEN
        UPDATE vehicles SET speed_limit_kmh = (d ->> 'speed_limit_kmh')::real WHERE id = item;
    ELSIF k = 'route_assignment' THEN
        IF d IS NULL THEN
            DELETE FROM route_assignments WHERE id = item;
        ELSE
            INSERT INTO route_assignments (id, route_id, vehicle_id, valid_from, valid_to, weekdays)
            OVERRIDING SYSTEM VALUE
            VALUES (item, (d ->> 'route_id')::int, (d ->> 'vehicle_id')::int, (d ->> 'valid_from')::date,
                    (d ->> 'valid_to')::date, ARRAY(SELECT jsonb_array_elements_text(d -> 'weekdays'))::smallint[])
            ON CONFLICT (id) DO UPDATE SET route_id = EXCLUDED.route_id, vehicle_id = EXCLUDED.vehicle_id,
                valid_from = EXCLUDED.valid_from, valid_to = EXCLUDED.valid_to, weekdays = EXCLUDED.weekdays;
        END IF;
    END IF;
    -- A deleted route or zone (no API deletes them) is not brought back: its row and what refers to it are gone.
    PERFORM set_config('telemetria.applying', '', true);
END $$;

-- 0011's statement trigger, which makes no version of a write registry_apply makes.
CREATE OR REPLACE FUNCTION registry_version_rows() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    k   text := TG_ARGV[0];
    src text := CASE TG_OP
                WHEN 'INSERT' THEN format('SELECT %I FROM new_rows', TG_ARGV[1])
                WHEN 'DELETE' THEN format('SELECT %I FROM old_rows', TG_ARGV[1])
                ELSE format('SELECT %1$I FROM new_rows UNION SELECT %1$I FROM old_rows', TG_ARGV[1]) END;
    i   integer;
BEGIN
    IF current_setting('telemetria.applying', true) = 'on' THEN
        RETURN NULL;
    END IF;
    FOR i IN EXECUTE 'SELECT DISTINCT x FROM (' || src || ') s(x) ORDER BY 1' LOOP
        PERFORM registry_version(k, i, registry_snapshot(k, i));
    END LOOP;
    RETURN NULL;
END $$;

-- At commit: an item given a version dated ahead goes back to its version in force today.
CREATE FUNCTION registry_keep_today() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    today date := (now() AT TIME ZONE 'America/Porto_Velho')::date;
BEGIN
    IF NEW.valid_from > today
       AND EXISTS (SELECT 1 FROM registry_versions v WHERE v.id = NEW.id AND v.superseded_at IS NULL) THEN
        PERFORM registry_apply(NEW.kind, NEW.item_id, registry_in_force(NEW.kind, NEW.item_id, today));
    END IF;
    RETURN NULL;
END $$;

CREATE CONSTRAINT TRIGGER registry_versions_keep_today AFTER INSERT OR UPDATE ON registry_versions
    DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION registry_keep_today();

-- Before an edit of an item with a version dated ahead: the current row holds that newest version, so the edit
-- is made on it (the deferred trigger sets the row back to today's at commit).
CREATE FUNCTION registry_load_newest(k text, item integer) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    today  date := (now() AT TIME ZONE 'America/Porto_Velho')::date;
    newest registry_versions;
BEGIN
    SELECT * INTO newest FROM registry_versions v
    WHERE v.kind = k AND v.item_id = item AND v.superseded_at IS NULL
    ORDER BY v.valid_from DESC LIMIT 1;
    IF FOUND AND newest.valid_from > today THEN
        PERFORM registry_apply(k, item, newest.data);
    END IF;
END $$;

-- Apply every version whose first day has come since the last promotion; the number of items changed.
CREATE FUNCTION registry_promote(today date DEFAULT (now() AT TIME ZONE 'America/Porto_Velho')::date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    last date;
    r    record;
    n    integer := 0;
BEGIN
    IF (SELECT p.through FROM registry_promoted p) >= today THEN
        RETURN 0;
    END IF;
    PERFORM pg_advisory_xact_lock(hashtext('registry_promote'));
    SELECT p.through INTO last FROM registry_promoted p FOR UPDATE;
    IF NOT FOUND THEN  -- emptied by hand: every version up to today
        last := '-infinity';
        INSERT INTO registry_promoted (through) VALUES (last);
    END IF;
    IF last >= today THEN
        RETURN 0;
    END IF;
    FOR r IN SELECT DISTINCT v.kind, v.item_id FROM registry_versions v
             WHERE v.superseded_at IS NULL AND v.valid_from > last AND v.valid_from <= today
             ORDER BY 1, 2 LOOP
        PERFORM registry_apply(r.kind, r.item_id, registry_in_force(r.kind, r.item_id, today));
        n := n + 1;
    END LOOP;
    UPDATE registry_promoted SET through = today;
    RETURN n;
END $$;

-- Existing data: the items given a version dated ahead before this migration go back to today's.
DO $$
DECLARE
    today date := (now() AT TIME ZONE 'America/Porto_Velho')::date;
    r     record;
BEGIN
    FOR r IN SELECT DISTINCT v.kind, v.item_id FROM registry_versions v
             WHERE v.superseded_at IS NULL AND v.valid_from > today ORDER BY 1, 2 LOOP
        PERFORM registry_apply(r.kind, r.item_id, registry_in_force(r.kind, r.item_id, today));
    END LOOP;
    INSERT INTO registry_promoted (through) VALUES (today);
END $$;
