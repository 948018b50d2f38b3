-- Km along the roads (issue 20): a day's rollup keeps, beside route_m and chord_m, the metres measured along the
-- road network in force that day off the routes (road_m), and of all its metres those on paved and on unpaved
-- ways. A rollup computed before, or on a day with no network in force, has 0 for all three: its basis has no
-- network in it (reports/model.py), so it stays current, and a day whose network changes is recomputed.
ALTER TABLE report_rollups
    ADD COLUMN road_m   double precision NOT NULL DEFAULT 0,
    ADD COLUMN paved_m  double precision NOT NULL DEFAULT 0,
    ADD COLUMN unpaved_m double precision NOT NULL DEFAULT 0;

-- A network applies from its first local day until the next one's (telemetria/roads/inforce.py), as a registry
-- version does, so importing a network never changes the km of the days before it unless the import says so
-- (`telemetria roads import --from DATE`). A network whose first day is on or after a later import's is never in
-- force again: `superseded`, its ways deleted (the row stays: which file, when, by whom).
ALTER TABLE road_networks
    ADD COLUMN effective_from date,
    ADD COLUMN superseded boolean NOT NULL DEFAULT false;
UPDATE road_networks SET effective_from = (imported_at AT TIME ZONE 'America/Porto_Velho')::date;
-- Networks imported before this migration: one replaced by a later import had its ways deleted then; it can
-- never be in force again.
UPDATE road_networks n SET superseded = true
WHERE NOT n.current AND NOT EXISTS (SELECT 1 FROM road_ways w WHERE w.network_id = n.id);
ALTER TABLE road_networks ALTER COLUMN effective_from SET NOT NULL;
CREATE INDEX road_networks_in_force ON road_networks (effective_from, id) WHERE NOT superseded;
