-- Absence is a fact (issue 36): a due run with no fix at all is run_not_made, also on past days whose runs only
-- became due when the registry changed after them (a contract, a price, a calendar, a route, an assignment or a
-- justification entered late). No fix arrives then to hand those days to the detector (detector_run_days,
-- migrations/0024), so a change of any table the runs due are computed from hands the last 35 local days
-- (detector.RUN_DAYS_BACK; older days are judged by their complete rescan) and today. The detector judges each
-- day once (days before the first fix ever stored are skipped: no run is judged not made before the service
-- received anything), and reconciling makes a day judged again change only what the change changed.
-- Statement triggers: a stops PUT or a bulk edit hands the days once. TRUNCATE is not how the service changes
-- its registry and is left out.
CREATE FUNCTION hand_run_days() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    today date := (now() AT TIME ZONE 'America/Porto_Velho')::date;
BEGIN
    INSERT INTO detector_run_days (day)
    SELECT d::date FROM generate_series(today - 35, today, interval '1 day') AS d ORDER BY 1
    ON CONFLICT (day) DO UPDATE SET marked_at = clock_timestamp();
    RETURN NULL;
END $$;

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['contracts', 'contract_terms', 'school_years', 'school_calendar_days',
                             'school_schedule_changes', 'municipal_holidays', 'routes', 'route_stops',
                             'route_assignments', 'run_justifications', 'vehicles', 'vehicle_contractors',
                             'registry_versions'] LOOP
        EXECUTE format('CREATE TRIGGER %I AFTER INSERT OR UPDATE OR DELETE ON %I '
                       'FOR EACH STATEMENT EXECUTE FUNCTION hand_run_days()', t || '_hand_run_days', t);
    END LOOP;
END $$;
