-- A small flush of the ingest writer (live single fixes) in one round trip: called outside an
-- explicit transaction, the lock, the registry check and the insert commit together when the
-- statement ends. Rows go in key order (no deadlocks between concurrent flushes) and a key's
-- first occurrence (WITH ORDINALITY) is the one stored; the stored keys are returned.
CREATE FUNCTION ingest_fixes(
    expected_epoch bigint, vehicle_ids int[], tracker_ids int[], tss timestamptz[],
    lats float8[], lons float8[], speeds real[], headings real[], altitudes real[],
    accuracies real[], hdops real[], sats int2[], ignitions bool[], odometers float8[],
    driver_ids text[], valids bool[], attrs jsonb[]
) RETURNS TABLE (stored_vehicle_id int, stored_ts timestamptz) LANGUAGE plpgsql AS $$
BEGIN
    LOCK TABLE tracker_installations IN SHARE MODE;
    PERFORM ingest_check_epoch(expected_epoch);
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
