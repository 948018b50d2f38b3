-- Per vehicle and local day: the additive facts of the km report, computed from the fixes by fix
-- time by the same code as a live report, so reading a month or a year of a fleet is a few
-- thousand rows instead of millions of fixes. A rollup is used only while it is current:
--   * its day is closed (rollup_horizon) and no stale mark exists for it: fixes that can change
--     a closed day are marked, in the transaction that stores them (late batches);
--   * its basis equals the one the registry gives today for that vehicle and day: the knobs'
--     fingerprint and a digest of its routes that day (lines, stops, limits, tolerances), its
--     speed limit and the speed zones (context.Vehicle.basis), so an edit outdates only the
--     vehicle-days it can change.
-- Anything not current is computed from the fixes at read time, so a report never waits for the
-- refresher and never shows a stale figure; the refresher only makes the next read cheaper.
CREATE TABLE report_rollups (
    vehicle_id   integer NOT NULL,
    day          date NOT NULL,              -- local day (the service's zone, America/Porto_Velho)
    basis        text NOT NULL,
    fixes        integer NOT NULL,           -- received in the day
    kept         integer NOT NULL,           -- used after cleaning
    route_m      double precision NOT NULL,  -- measured along an assigned route
    chord_m      double precision NOT NULL,  -- straight geodesic chords
    gap_m        double precision NOT NULL,  -- of the above, across gaps in reporting
    moving_s     double precision NOT NULL,
    max_kmh      real,
    trips        integer NOT NULL,           -- events are counted in the day they start
    stops        integer NOT NULL,
    unauthorized_stops integer NOT NULL,
    speeding     integer NOT NULL,
    deviations   integer NOT NULL,
    odometer_m   double precision,           -- the tracker's own odometer delta (cross-check)
    first_ts     timestamptz,
    last_ts      timestamptz,
    events       jsonb NOT NULL,             -- each event report's rows, neutral (reports/events.py)
    computed_at  timestamptz NOT NULL DEFAULT now()
);
SELECT create_hypertable('report_rollups', by_range('day', INTERVAL '30 days'), create_default_indexes => false);
CREATE UNIQUE INDEX report_rollups_vehicle_day ON report_rollups (vehicle_id, day);

-- Days are rolled up once closed: a local day D is closed when nothing live can change it any more
-- (D's end plus one link, max_link_s, is past), so live fixes, the hot path, never mark anything:
-- only fixes that land in or next to a closed day (late batches) do. Each refresher round first
-- closes the days that became closable: under a lock that waits for in-flight ingest transactions
-- (SHARE ROW EXCLUSIVE on tracker_installations, which every ingest write holds in SHARE mode) it
-- moves closed_through, so every later ingest transaction sees the new horizon and marks; then it
-- marks every vehicle-day of the newly closed days that has fixes (swept_through records how far
-- that got, so a crash in between is finished on the next round).
CREATE TABLE rollup_horizon (
    only_row       boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    closed_through date,  -- NULL: no day closed yet
    swept_through  date,
    checked_generation bigint NOT NULL DEFAULT 0  -- report_generation the rollups' bases were last checked at
);
INSERT INTO rollup_horizon DEFAULT VALUES;

-- Insert-only marks: no key and no sequence, so a mark costs one heap row and one index entry, and
-- concurrent flushes never wait on each other's marks. The refresher recomputes a day from the
-- fixes and deletes its marks in one REPEATABLE READ transaction: the DELETE sees only the marks
-- of its snapshot, so a mark committed after it survives and the day is recomputed next round.
CREATE TABLE rollup_stale (
    vehicle_id integer NOT NULL,
    day        date NOT NULL,
    marked_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX rollup_stale_vehicle_day ON rollup_stale (vehicle_id, day);

-- Bumped by every change to the registry facts that rollups depend on: routes and their stops
-- (km along the route, authorized stops), which vehicle runs which route, speed limits. Tells
-- the refresher to check the rollups' bases, and keys the reports' cache of decoded routes.
CREATE TABLE report_generation (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    n        bigint NOT NULL
);
INSERT INTO report_generation (n) VALUES (1);

CREATE FUNCTION bump_report_generation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE report_generation SET n = n + 1;
    RETURN NULL;
END $$;

CREATE TRIGGER routes_bump_report_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON routes
    FOR EACH STATEMENT EXECUTE FUNCTION bump_report_generation();
CREATE TRIGGER route_assignments_bump_report_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON route_assignments
    FOR EACH STATEMENT EXECUTE FUNCTION bump_report_generation();
CREATE TRIGGER route_stops_bump_report_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON route_stops
    FOR EACH STATEMENT EXECUTE FUNCTION bump_report_generation();
CREATE TRIGGER speed_zones_bump_report_generation AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON speed_zones
    FOR EACH STATEMENT EXECUTE FUNCTION bump_report_generation();
CREATE TRIGGER vehicles_bump_report_generation AFTER UPDATE OF speed_limit_kmh ON vehicles
    FOR EACH STATEMENT EXECUTE FUNCTION bump_report_generation();

-- Marks every closed local day (in zone `tz`) whose rollup a fix of vehicle v[i] at t[i] can change:
-- a fix also changes the segment to the next fix up to `link` later, and the cleaning of its
-- neighbours up to `link` earlier, which can lie in the next or the previous day. Callers may pass
-- only each vehicle's first and last time of a batch: the days in between are marked too. Called
-- under the ingest lock, so the horizon it reads cannot move before the caller commits.
-- (plpgsql, not sql: its statement's plan is cached per connection instead of planned per call.)
CREATE FUNCTION mark_rollups_stale(v int[], t timestamptz[], tz text, link interval)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    closed date := (SELECT closed_through FROM rollup_horizon);
BEGIN
    IF closed IS NULL OR ((SELECT min(x) FROM unnest(t) AS x) - link) AT TIME ZONE tz >= closed + 1 THEN
        RETURN;  -- live fixes: every day they touch is still open
    END IF;
    INSERT INTO rollup_stale (vehicle_id, day)
    SELECT DISTINCT s.v, d::date
    FROM (SELECT u.v, min(u.t) AS lo, max(u.t) AS hi FROM unnest(v, t) AS u(v, t) GROUP BY u.v) s,
         generate_series(((s.lo - link) AT TIME ZONE tz)::date,
                         least(((s.hi + link) AT TIME ZONE tz)::date, closed), INTERVAL '1 day') AS d;
END $$;

-- The small-flush function also marks the closed days its fixes can change, so fixes and marks
-- commit together in its one round trip. Marks come from the fixes sent, duplicates included: a
-- re-sent late batch costs one needless recomputation, and live fixes (open days) mark nothing.
DROP FUNCTION ingest_fixes(bigint, int[], int[], timestamptz[], float8[], float8[], real[], real[], real[],
                           real[], real[], int2[], bool[], float8[], text[], bool[], jsonb[]);
CREATE FUNCTION ingest_fixes(
    expected_epoch bigint, vehicle_ids int[], tracker_ids int[], tss timestamptz[],
    lats float8[], lons float8[], speeds real[], headings real[], altitudes real[],
    accuracies real[], hdops real[], sats int2[], ignitions bool[], odometers float8[],
    driver_ids text[], valids bool[], attrs jsonb[], stale_tz text, stale_link interval
) RETURNS TABLE (stored_vehicle_id int, stored_ts timestamptz) LANGUAGE plpgsql AS $$
DECLARE
    closed date;
BEGIN
    LOCK TABLE tracker_installations IN SHARE MODE;
    PERFORM ingest_check_epoch(expected_epoch);
    -- The same test as mark_rollups_stale's, inline: calling it costs ~10 % of a live single fix.
    closed := (SELECT closed_through FROM rollup_horizon);
    IF closed IS NOT NULL AND (SELECT min(x) FROM unnest(tss) AS x) - stale_link
                              < (closed + 1)::timestamp AT TIME ZONE stale_tz THEN
        PERFORM mark_rollups_stale(vehicle_ids, tss, stale_tz, stale_link);
    END IF;
    RETURN QUERY
    INSERT INTO fixes AS f (vehicle_id, tracker_id, ts, lat, lon, speed_kmh, heading_deg, altitude_m,
                            accuracy_m, hdop, satellites, ignition, odometer_m, driver_id, valid, attributes)
    SELECT u.v, u.t, u.ts, u.lat, u.lon, u.spd, u.hdg, u.alt, u.acc, u.hdop, u.sat, u.ign, u.odo,
           u.drv, u.ok, u.attr
    FROM unnest(vehicle_ids, tracker_ids, tss, lats, lons, speeds, headings, altitudes, accuracies,
                hdops, sats, ignitions, odometers, driver_ids, valids, attrs)
         WITH ORDINALITY AS u(v, t, ts, lat, lon, spd, hdg, alt, acc, hdop, sat, ign, odo, drv, ok, attr, ord)
    ORDER BY u.v, u.ts, u.ord
    ON CONFLICT (vehicle_id, ts) DO NOTHING
    RETURNING f.vehicle_id, f.ts;
END $$;
