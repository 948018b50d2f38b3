-- Km along the roads (issue 20): a day's rollup keeps, beside route_m and chord_m, the metres measured along the
-- road network in force that day off the routes (road_m), and of all its metres those on paved and on unpaved
-- ways. A rollup computed before, or on a day with no network in force, has 0 for all three: its basis has no
-- network in it (reports/model.py), so it stays current, and a day whose network changes is recomputed.
ALTER TABLE report_rollups
    ADD COLUMN road_m   double precision NOT NULL DEFAULT 0,
    ADD COLUMN paved_m  double precision NOT NULL DEFAULT 0,
    ADD COLUMN unpaved_m double precision NOT NULL DEFAULT 0;
