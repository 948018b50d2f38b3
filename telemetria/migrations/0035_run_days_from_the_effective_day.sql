-- A registry change hands the detector the days it changes, not the last 36 (issue 33). Migration 0030 handed
-- today and the 35 days before it on any change of a table the runs due are computed from, so an edit effective
-- today made the detector judge 36 days of the whole fleet again, and an edit of three days ago re-judged (and
-- could rewrite) occurrences of a month before it that the edit did not touch. Now each change hands the days
-- from its first effective day to today:
--   * a registry version (routes with their stops, vehicles' speed limit, route assignments: 0011) from its
--     valid_from (the edit's effective_from); the item's earliest version applies to every day before it too
--     (its lower bound is open), so a new item's first version reaches back as far as handing goes, except an
--     assignment's, which applies only from its own valid_from; a version dated ahead hands nothing: its day is
--     judged as today when it comes (every round judges today), and registry_promote hands the days it applies
--     from (below), should the promotion come late;
--   * a contract from its valid_from, or the day after the earlier valid_to when only its end moved; a price
--     version from its valid_from (the contract's earliest from the beginning); a vehicle's contractor from
--     its valid_from; a school year from its start (or the day after the earlier end when only the end moved);
--     a calendar day, a changed schedule, a municipal holiday and a run's justification from their day;
--   * a vehicle's unversioned fields (active, plate) from the edit's effective_from (today by default).
-- Handing never goes further back than detector.RUN_DAYS_BACK (35) days: older days are judged by their complete
-- rescan. Nothing here reaches a closed month of a contract the change touches: those edits are refused before
-- they are written (TL031, 0026; contracts/store.py for contracts, prices and the calendar), so the days handed
-- from an edit's effective day are days still open for the contracts it changes; a new item's earliest version,
-- in force from the beginning, is handed from the day after the last closed month of the contracts it touches
-- (registry_open_from).
-- Routes, stops and assignments hand nothing from their current tables any more: every field of theirs is
-- versioned, so their versions say when (registry_apply's writes, which make no version, change no day).

-- Hand the local days from `first` (NULL: nothing) to today, at most RUN_DAYS_BACK of them back.
CREATE FUNCTION hand_run_days_from(first date, today date DEFAULT (now() AT TIME ZONE 'America/Porto_Velho')::date)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF first IS NULL OR first > today THEN
        RETURN;
    END IF;
    INSERT INTO detector_run_days (day)
    SELECT d::date FROM generate_series(greatest(first, today - 35), today, interval '1 day') AS d ORDER BY 1
    ON CONFLICT (day) DO UPDATE SET marked_at = clock_timestamp();
END $$;

-- The first local day after the closed (not reopened) months of the contracts a version touches (0026's
-- registry_version_contracts): an edit dated inside one is refused (TL031), but an item's earliest version is in
-- force from the beginning, so its days are handed from here on only: a closed month stays as it was paid.
CREATE FUNCTION registry_open_from(k text, item integer, data jsonb, old_data jsonb) RETURNS date
LANGUAGE sql STABLE AS $$
    SELECT coalesce(max((m.month + interval '1 month')::date), '-infinity'::date) FROM measurement_closures m
    WHERE m.reopened_at IS NULL AND m.contract_id = ANY (registry_version_contracts(k, item, data, old_data))
$$;

-- The first local day a version's row changes: its valid_from, or (the item's earliest version, in force from the
-- beginning) from the beginning, an assignment from its own valid_from (the earlier of its data's and the version
-- it was made from's), never inside a closed month of a contract it touches; speed zones decide no run.
CREATE FUNCTION registry_version_first_day(k text, item integer, valid_from date, data jsonb, based_on bigint)
RETURNS date LANGUAGE sql STABLE AS $$
    SELECT CASE
        WHEN k = 'speed_zone' THEN NULL
        WHEN EXISTS (SELECT 1 FROM registry_versions o
                     WHERE o.kind = k AND o.item_id = item AND o.superseded_at IS NULL
                       AND o.valid_from < registry_version_first_day.valid_from)
            THEN registry_version_first_day.valid_from
        ELSE greatest(
            CASE WHEN k = 'route_assignment'
                 THEN least((registry_version_first_day.data ->> 'valid_from')::date,
                            (b.old_data ->> 'valid_from')::date, registry_version_first_day.valid_from)
                 ELSE '-infinity'::date END,
            registry_open_from(k, item, registry_version_first_day.data, b.old_data)) END
    FROM (SELECT (SELECT x.data FROM registry_versions x WHERE x.id = registry_version_first_day.based_on)
                 AS old_data) b
$$;

-- Statement triggers, one per event (transition tables allow no more): TG_TABLE_NAME says how a row's first day is
-- read; the first day handed is the earliest over the statement's old and new rows.
CREATE OR REPLACE FUNCTION hand_run_days() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    eff   date := coalesce(nullif(current_setting('telemetria.effective_from', true), '')::date,
                           (now() AT TIME ZONE 'America/Porto_Velho')::date);
    first date;
    olds  text := CASE WHEN TG_OP IN ('UPDATE', 'DELETE') THEN 'SELECT * FROM old_rows' END;
    news  text := CASE WHEN TG_OP IN ('UPDATE', 'INSERT') THEN 'SELECT * FROM new_rows' END;
    src   text := concat_ws(' UNION ALL ', olds, news);
BEGIN
    IF current_setting('telemetria.applying', true) = 'on' THEN
        RETURN NULL;  -- registry_apply: a version promoted or set back, no new fact (registry_promote hands)
    END IF;
    CASE TG_TABLE_NAME
    WHEN 'registry_versions' THEN
        EXECUTE 'SELECT min(registry_version_first_day(r.kind, r.item_id, r.valid_from, r.data, r.based_on))'
                ' FROM (' || src || ') r' INTO first;
    WHEN 'contracts', 'school_years' THEN
        -- TG_ARGV: the first day's column, the last day's, the key, a column that changes with every write.
        -- An update moving only the end changes the days after the earlier end; any other change, from the start.
        IF TG_OP = 'UPDATE' THEN
            EXECUTE format(
                'SELECT min(CASE WHEN o.%1$I = n.%1$I'
                '   AND to_jsonb(o) - %2$L - %4$L = to_jsonb(n) - %2$L - %4$L'
                ' THEN least(o.%2$I, n.%2$I) + 1 ELSE least(o.%1$I, n.%1$I) END)'
                ' FROM old_rows o JOIN new_rows n ON n.%3$I = o.%3$I'
                ' WHERE to_jsonb(o) - %4$L IS DISTINCT FROM to_jsonb(n) - %4$L',
                TG_ARGV[0], TG_ARGV[1], TG_ARGV[2], TG_ARGV[3]) INTO first;
        ELSE
            EXECUTE format('SELECT min(%I) FROM (%s) r', TG_ARGV[0], src) INTO first;
        END IF;
    WHEN 'contract_terms' THEN
        EXECUTE 'SELECT min(CASE WHEN EXISTS (SELECT 1 FROM contract_terms t WHERE t.contract_id = r.contract_id'
                ' AND t.superseded_at IS NULL AND t.valid_from < r.valid_from) THEN r.valid_from'
                ' ELSE ''-infinity''::date END) FROM (' || src || ') r' INTO first;
    WHEN 'vehicles' THEN
        first := eff;
    ELSE  -- a column naming the first day of each row
        EXECUTE format('SELECT min(%I) FROM (%s) r', TG_ARGV[0], src) INTO first;
    END CASE;
    PERFORM hand_run_days_from(first);
    RETURN NULL;
END $$;

DO $$
DECLARE
    t    text;
    args text;
BEGIN
    FOREACH t IN ARRAY ARRAY['contracts', 'contract_terms', 'school_years', 'school_calendar_days',
                             'school_schedule_changes', 'municipal_holidays', 'routes', 'route_stops',
                             'route_assignments', 'run_justifications', 'vehicles', 'vehicle_contractors',
                             'registry_versions'] LOOP
        EXECUTE format('DROP TRIGGER %I ON %I', t || '_hand_run_days', t);
        CONTINUE WHEN t IN ('routes', 'route_stops', 'route_assignments');
        args := CASE t
                WHEN 'contracts' THEN '''valid_from'', ''valid_to'', ''id'', ''created_at'''
                WHEN 'school_years' THEN '''start_date'', ''end_date'', ''year'', ''updated_at'''
                WHEN 'vehicle_contractors' THEN '''valid_from'''
                ELSE '''day''' END;
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT ON %I REFERENCING NEW TABLE AS new_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION hand_run_days(%s)', t || '_hand_run_days_i', t, args);
        EXECUTE format('CREATE TRIGGER %I AFTER UPDATE ON %I REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION hand_run_days(%s)', t || '_hand_run_days_u', t, args);
        EXECUTE format('CREATE TRIGGER %I AFTER DELETE ON %I REFERENCING OLD TABLE AS old_rows '
                       'FOR EACH STATEMENT EXECUTE FUNCTION hand_run_days(%s)', t || '_hand_run_days_d', t, args);
    END LOOP;
END $$;

-- A promotion hands the days its versions apply from (after the last day promoted), should it come days late.
CREATE OR REPLACE FUNCTION registry_promote(today date DEFAULT (now() AT TIME ZONE 'America/Porto_Velho')::date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    last  date;
    r     record;
    n     integer := 0;
    first date;
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
    FOR r IN SELECT v.kind, v.item_id, min(v.valid_from) AS valid_from FROM registry_versions v
             WHERE v.superseded_at IS NULL AND v.valid_from > last AND v.valid_from <= today
             GROUP BY 1, 2 ORDER BY 1, 2 LOOP
        PERFORM registry_apply(r.kind, r.item_id, registry_in_force(r.kind, r.item_id, today));
        IF r.kind <> 'speed_zone' THEN
            first := least(first, r.valid_from);
        END IF;
        n := n + 1;
    END LOOP;
    UPDATE registry_promoted SET through = today;
    PERFORM hand_run_days_from(first, today);
    RETURN n;
END $$;
