-- The detector runs in several processes (issue 18's throughput: setting detector_processes), each working the
-- vehicles of its slices (vehicle_id % 8). The run kinds (run_not_made, unauthorized_vehicle) are judged per
-- local day for every contract at once, by one of them (the first). A process clearing a vehicle's dirty mark
-- first hands the days that mark may decide to this table; the first process judges them and deletes each day
-- it judged, unless it was marked again meanwhile (marked_at).
CREATE TABLE detector_run_days (
    day       date PRIMARY KEY,
    marked_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
