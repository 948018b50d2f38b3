-- A detector process keeps the fixes it last read of each vehicle's day (occurrences/trackcache.py) and the next
-- round reads only those stored since: from the vehicle's dirty_from on. That is exact only while no other
-- process cleared the vehicle's mark meanwhile (several service processes' detectors take turns by slice). So
-- every clear gives the row a new stamp, and a process trusts what it kept only while the stamp it saw is still
-- there. Random (not a counter) so that a new database, or a vehicle's row made again, never matches what a
-- process kept of another.
ALTER TABLE latest_fixes ADD COLUMN detector_stamp uuid NOT NULL DEFAULT gen_random_uuid();
