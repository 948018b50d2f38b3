-- Each vehicle's newest stored fix, so the reads that show "now" (the live map, the vehicle list,
-- /metrics) read one row per vehicle instead of looking the newest fix up in `fixes`: without a
-- time bound that lookup visits every chunk, and on two years of daily chunks those reads were
-- 6-11x slower than on a week-old installation with the same fleet.
--   last_ts: the newest fix, valid or not (the vehicle list's last_fix_at, /metrics' age);
--   valid_ts and the columns after it: the newest VALID fix (the live map's position), NULL
--   while the vehicle has none.
-- The ingest writer notes the fixes it stores in the same transaction (note_latest_fixes). A row
-- only moves forward, so late batches, re-sent fixes and concurrent flushes in any order leave
-- the newest. What deletes or moves stored fixes (retention, a tracker moved to another vehicle)
-- calls refresh_latest_fixes() for the vehicles it touched, in its own transaction.
CREATE TABLE latest_fixes (
    vehicle_id  integer PRIMARY KEY REFERENCES vehicles (id) ON DELETE CASCADE,
    last_ts     timestamptz NOT NULL,
    valid_ts    timestamptz,
    received_at timestamptz,
    lat         double precision,
    lon         double precision,
    speed_kmh   real,
    heading_deg real,
    ignition    boolean,
    driver_id   text
) WITH (fillfactor = 50);  -- every flush updates its vehicles' rows: room for HOT updates in place

-- Notes stored fixes, given column by column (any number per vehicle, in any order, each key once,
-- received_at NULL meaning now()): the large flushes' path. Per vehicle, the first row in the order
-- (valid first, newest first) is its newest valid fix if it has one, and the window gives its
-- newest fix. Rows are written in vehicle order, so concurrent flushes lock them in the same order
-- and cannot deadlock; a row changes only where a fix is newer than what it holds. The small-flush
-- function below inlines the same statement over the rows it stores: keep the two alike.
CREATE FUNCTION note_latest_fixes(
    v_ids int[], v_tss timestamptz[], v_valids bool[], v_received timestamptz[], v_lats float8[],
    v_lons float8[], v_speeds real[], v_headings real[], v_ignitions bool[], v_drivers text[]
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO latest_fixes AS l (vehicle_id, last_ts, valid_ts, received_at, lat, lon, speed_kmh,
                                   heading_deg, ignition, driver_id)
    SELECT DISTINCT ON (u.v) u.v, max(u.ts) OVER (PARTITION BY u.v),
           CASE WHEN u.ok THEN u.ts END, CASE WHEN u.ok THEN coalesce(u.rcv, now()) END,
           CASE WHEN u.ok THEN u.lat END, CASE WHEN u.ok THEN u.lon END, CASE WHEN u.ok THEN u.spd END,
           CASE WHEN u.ok THEN u.hdg END, CASE WHEN u.ok THEN u.ign END, CASE WHEN u.ok THEN u.drv END
    FROM unnest(v_ids, v_tss, v_valids, v_received, v_lats, v_lons, v_speeds, v_headings, v_ignitions,
                v_drivers) AS u(v, ts, ok, rcv, lat, lon, spd, hdg, ign, drv)
    ORDER BY u.v, u.ok DESC, u.ts DESC
    ON CONFLICT (vehicle_id) DO UPDATE SET
        last_ts = greatest(l.last_ts, EXCLUDED.last_ts),
        valid_ts = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.valid_ts ELSE l.valid_ts END,
        received_at = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.received_at ELSE l.received_at END,
        lat = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.lat ELSE l.lat END,
        lon = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.lon ELSE l.lon END,
        speed_kmh = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.speed_kmh ELSE l.speed_kmh END,
        heading_deg = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.heading_deg ELSE l.heading_deg END,
        ignition = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.ignition ELSE l.ignition END,
        driver_id = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.driver_id ELSE l.driver_id END
    WHERE EXCLUDED.last_ts > l.last_ts OR EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity');
END $$;

-- Re-derives the rows of the vehicles `ids` (NULL: every vehicle) from `fixes`, looking through
-- every chunk (a handful of vehicles, or once at this migration). A row whose fix is gone or moved
-- to another vehicle is deleted first; then the newest fixes are noted like the writer's, only
-- moving rows forward, so a fix the writer commits meanwhile is never overwritten by an older one.
CREATE FUNCTION refresh_latest_fixes(ids int[]) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM latest_fixes l
    WHERE (ids IS NULL OR l.vehicle_id = ANY (ids))
      AND (NOT EXISTS (SELECT 1 FROM fixes f WHERE f.vehicle_id = l.vehicle_id AND f.ts = l.last_ts)
           OR (l.valid_ts IS NOT NULL AND NOT EXISTS (
                   SELECT 1 FROM fixes f WHERE f.vehicle_id = l.vehicle_id AND f.ts = l.valid_ts AND f.valid)));
    PERFORM note_latest_fixes(array_agg(n.vehicle_id), array_agg(n.ts), array_agg(n.valid),
                              array_agg(n.received_at), array_agg(n.lat), array_agg(n.lon),
                              array_agg(n.speed_kmh), array_agg(n.heading_deg), array_agg(n.ignition),
                              array_agg(n.driver_id))
    FROM vehicles v
    CROSS JOIN LATERAL (
        (SELECT f.vehicle_id, f.ts, f.valid, f.received_at, f.lat, f.lon, f.speed_kmh, f.heading_deg,
                f.ignition, f.driver_id
         FROM fixes f WHERE f.vehicle_id = v.id ORDER BY f.ts DESC LIMIT 1)
        UNION ALL
        (SELECT f.vehicle_id, f.ts, f.valid, f.received_at, f.lat, f.lon, f.speed_kmh, f.heading_deg,
                f.ignition, f.driver_id
         FROM fixes f WHERE f.vehicle_id = v.id AND f.valid ORDER BY f.ts DESC LIMIT 1)) n
    WHERE ids IS NULL OR v.id = ANY (ids);
END $$;

-- The small-flush function notes the fixes it really stored (RETURNING: a key's first occurrence,
-- never a duplicate's content) in its one round trip, with note_latest_fixes' statement inlined:
-- calling that function from here doubled what noting adds to a live fix's database time (about
-- +100 instead of +45 µs of backend CPU on a loaded 2-core machine). Same signature.
CREATE OR REPLACE FUNCTION ingest_fixes(
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
    WITH stored AS (
        INSERT INTO fixes AS f (vehicle_id, tracker_id, ts, lat, lon, speed_kmh, heading_deg, altitude_m,
                                accuracy_m, hdop, satellites, ignition, odometer_m, driver_id, valid, attributes)
        SELECT u.v, u.t, u.ts, u.lat, u.lon, u.spd, u.hdg, u.alt, u.acc, u.hdop, u.sat, u.ign, u.odo,
               u.drv, u.ok, u.attr
        FROM unnest(vehicle_ids, tracker_ids, tss, lats, lons, speeds, headings, altitudes, accuracies,
                    hdops, sats, ignitions, odometers, driver_ids, valids, attrs)
             WITH ORDINALITY AS u(v, t, ts, lat, lon, spd, hdg, alt, acc, hdop, sat, ign, odo, drv, ok, attr, ord)
        ORDER BY u.v, u.ts, u.ord
        ON CONFLICT (vehicle_id, ts) DO NOTHING
        RETURNING f.vehicle_id, f.ts, f.valid, f.received_at, f.lat, f.lon, f.speed_kmh, f.heading_deg,
                  f.ignition, f.driver_id),
    noted AS (
        INSERT INTO latest_fixes AS l (vehicle_id, last_ts, valid_ts, received_at, lat, lon, speed_kmh,
                                       heading_deg, ignition, driver_id)
        SELECT DISTINCT ON (s.vehicle_id) s.vehicle_id, max(s.ts) OVER (PARTITION BY s.vehicle_id),
               CASE WHEN s.valid THEN s.ts END, CASE WHEN s.valid THEN s.received_at END,
               CASE WHEN s.valid THEN s.lat END, CASE WHEN s.valid THEN s.lon END,
               CASE WHEN s.valid THEN s.speed_kmh END, CASE WHEN s.valid THEN s.heading_deg END,
               CASE WHEN s.valid THEN s.ignition END, CASE WHEN s.valid THEN s.driver_id END
        FROM stored s ORDER BY s.vehicle_id, s.valid DESC, s.ts DESC
        ON CONFLICT (vehicle_id) DO UPDATE SET
            last_ts = greatest(l.last_ts, EXCLUDED.last_ts),
            valid_ts = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.valid_ts ELSE l.valid_ts END,
            received_at = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.received_at ELSE l.received_at END,
            lat = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.lat ELSE l.lat END,
            lon = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.lon ELSE l.lon END,
            speed_kmh = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.speed_kmh ELSE l.speed_kmh END,
            heading_deg = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.heading_deg ELSE l.heading_deg END,
            ignition = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.ignition ELSE l.ignition END,
            driver_id = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.driver_id ELSE l.driver_id END
        WHERE EXCLUDED.last_ts > l.last_ts OR EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity'))
    SELECT s.vehicle_id, s.ts FROM stored s;
END $$;

-- The backfill sees every committed fix: this lock waits for in-flight ingest transactions (they
-- hold SHARE on tracker_installations) and holds new ones until the migration commits.
LOCK TABLE tracker_installations IN SHARE ROW EXCLUSIVE MODE;
SELECT refresh_latest_fixes(NULL);
