-- The occurrence detector's durable dirty marks (issue 18; docs/architecture.md "How occurrences are found live").
--
-- Every flush already upserts each of its vehicles' latest_fixes row (0009); the same upsert now also notes
-- which part of the vehicle's track changed: dirty_from = the least fix time stored since the detector last
-- looked (NULL: nothing changed), dirty_at = when it was last marked. The detector reads the marks, recomputes
-- from (dirty_from - context) on, and clears a mark only where dirty_at is still what it read, so a flush that
-- commits meanwhile keeps its mark for the next round. No index on the marks: an index on dirty_from would stop
-- the flushes' updates being HOT (the table is a few thousand rows; the detector's scan of it costs ~1 ms).
-- Late batches (older fixes, into open or closed days) mark the same way: a stored fix always moves dirty_at,
-- even when it is older than the row's newest (the upsert no longer skips those rows).
-- silence_checked_at: when the detector last looked whether the (silent) vehicle is silent while due, so it
-- looks again only every so often however many rounds run.
-- dirty_since: when the oldest change not yet recomputed arrived (the detector's lag is now - dirty_since).
ALTER TABLE latest_fixes ADD COLUMN dirty_from timestamptz, ADD COLUMN dirty_at timestamptz,
    ADD COLUMN dirty_since timestamptz, ADD COLUMN silence_checked_at timestamptz;

-- What the detector did once per day: the closed days it queued for a complete rescan (rollup_horizon's
-- closed_through), and the queue itself, worked through a batch per round.
-- Its last round, for operators (and bench/detector.py): when it ended, how long it took, how many windows.
CREATE TABLE detector_state (
    only_row          boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    rescanned_through date,  -- the last closed day whose vehicle-days were queued for a rescan
    last_round_at     timestamptz,
    last_round_s      double precision,
    last_round_windows integer
);
INSERT INTO detector_state DEFAULT VALUES;

CREATE TABLE detector_rescans (
    vehicle_id integer NOT NULL,
    day        date NOT NULL,
    PRIMARY KEY (vehicle_id, day)
);

-- The large flushes' bookkeeping (note_latest_fixes + mark_rollups_stale of ingest/queries.NOTE_STORED) in one
-- call, with the dirty mark in the same upsert: `span_v`/`span_t` are each vehicle's first and last stored fix
-- time (the arrays mark_rollups_stale takes), the newest rows as note_latest_fixes takes them.
CREATE FUNCTION note_stored_fixes(
    v_ids int[], v_tss timestamptz[], v_valids bool[], v_received timestamptz[], v_lats float8[],
    v_lons float8[], v_speeds real[], v_headings real[], v_ignitions bool[], v_drivers text[],
    span_v int[], span_t timestamptz[], tz text, link interval
) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO latest_fixes AS l (vehicle_id, last_ts, valid_ts, received_at, lat, lon, speed_kmh,
                                   heading_deg, ignition, driver_id, dirty_from, dirty_at, dirty_since)
    SELECT DISTINCT ON (u.v) u.v, max(u.ts) OVER (PARTITION BY u.v),
           CASE WHEN u.ok THEN u.ts END, CASE WHEN u.ok THEN coalesce(u.rcv, now()) END,
           CASE WHEN u.ok THEN u.lat END, CASE WHEN u.ok THEN u.lon END, CASE WHEN u.ok THEN u.spd END,
           CASE WHEN u.ok THEN u.hdg END, CASE WHEN u.ok THEN u.ign END, CASE WHEN u.ok THEN u.drv END,
           d.lo, clock_timestamp(), clock_timestamp()
    FROM unnest(v_ids, v_tss, v_valids, v_received, v_lats, v_lons, v_speeds, v_headings, v_ignitions,
                v_drivers) AS u(v, ts, ok, rcv, lat, lon, spd, hdg, ign, drv)
    JOIN (SELECT s.v, min(s.t) AS lo FROM unnest(span_v, span_t) AS s(v, t) GROUP BY s.v) d ON d.v = u.v
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
        driver_id = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.driver_id ELSE l.driver_id END,
        dirty_from = least(l.dirty_from, EXCLUDED.dirty_from),
        dirty_at = EXCLUDED.dirty_at,
        dirty_since = CASE WHEN l.dirty_from IS NULL THEN EXCLUDED.dirty_since ELSE l.dirty_since END;
    PERFORM mark_rollups_stale(span_v, span_t, tz, link);
END $$;

-- The small-flush function (as 0009 last wrote it) with the same dirty mark in its latest_fixes upsert.
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
                                       heading_deg, ignition, driver_id, dirty_from, dirty_at, dirty_since)
        SELECT DISTINCT ON (s.vehicle_id) s.vehicle_id, max(s.ts) OVER (PARTITION BY s.vehicle_id),
               CASE WHEN s.valid THEN s.ts END, CASE WHEN s.valid THEN s.received_at END,
               CASE WHEN s.valid THEN s.lat END, CASE WHEN s.valid THEN s.lon END,
               CASE WHEN s.valid THEN s.speed_kmh END, CASE WHEN s.valid THEN s.heading_deg END,
               CASE WHEN s.valid THEN s.ignition END, CASE WHEN s.valid THEN s.driver_id END,
               min(s.ts) OVER (PARTITION BY s.vehicle_id), clock_timestamp(), clock_timestamp()
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
            driver_id = CASE WHEN EXCLUDED.valid_ts > coalesce(l.valid_ts, '-infinity') THEN EXCLUDED.driver_id ELSE l.driver_id END,
            dirty_from = least(l.dirty_from, EXCLUDED.dirty_from),
            dirty_at = EXCLUDED.dirty_at,
            dirty_since = CASE WHEN l.dirty_from IS NULL THEN EXCLUDED.dirty_since ELSE l.dirty_since END)
    SELECT s.vehicle_id, s.ts FROM stored s;
END $$;
