"""The detector's SQL: dirty marks, the stored occurrences of a window, and their insert / update / withdraw / note.

The process's SQL (review, notify, decision...) is in process_queries.py. Every write here is by actor "detector"
and touches only `detected` (or detector-withdrawn) rows' data: a confirmed occurrence's facts are frozen.
"""

from __future__ import annotations

DETECTOR_LOCK = 4_242_018  # pg advisory lock: the work of all vehicles at once (queues, the run kinds)
SLICE_LOCK = 4_242_019  # pg advisory lock (SLICE_LOCK, s): the vehicles of slice s (vehicle_id % SLICES)
SLICES = 8

# The vehicles of slices $2 whose fixes changed since the detector last looked, oldest change first (fairness
# under load).
DIRTY = f"""
SELECT vehicle_id, dirty_from, dirty_at, dirty_since, statement_timestamp() AS read_at FROM latest_fixes
WHERE dirty_from IS NOT NULL AND vehicle_id % {SLICES} = ANY ($2::int[]) ORDER BY dirty_since LIMIT $1"""

# The marks (dirty_from NULL: none) and stamps (migrations/0025) of some vehicles as they are now: a chunk reads its
# own just before its windows, so what arrived since the round began is taken (and cleared) by it, not left
# waiting for the next round.
DIRTY_OF = """
SELECT vehicle_id, dirty_from, dirty_at, dirty_since, detector_stamp, statement_timestamp() AS read_at
FROM latest_fixes WHERE vehicle_id = ANY ($1::int[])"""

# Days whose runs a change may decide, handed to the process that judges them (migrations/0024). $1 is distinct;
# rows are written in day order, so that processes handing over the same days cannot deadlock.
MARK_RUN_DAYS = """
INSERT INTO detector_run_days (day) SELECT d FROM unnest($1::date[]) AS d ORDER BY d
ON CONFLICT (day) DO UPDATE SET marked_at = clock_timestamp()"""
RUN_DAYS = "SELECT day, marked_at FROM detector_run_days ORDER BY day"
RUN_DAY_JUDGED = "DELETE FROM detector_run_days WHERE day = $1 AND marked_at <= $2"

# Clears the marks still as they were read ($2: dirty_at read), each with a new stamp (migrations/0025). A row a
# flush marked again meanwhile keeps its mark; what it still waits for arrived after the read ($3), so its
# dirty_since moves up to that. Returns every row's stamp as it is now. Rows are locked
# in vehicle order, like the flushes lock them, so the two cannot deadlock.
CLEAR_DIRTY = """
WITH d AS (
    SELECT l.vehicle_id, l.dirty_at = u.at AS same FROM latest_fixes l
    JOIN unnest($1::int[], $2::timestamptz[]) AS u(v, at) ON u.v = l.vehicle_id
    ORDER BY l.vehicle_id FOR UPDATE OF l)
UPDATE latest_fixes l
SET dirty_from = CASE WHEN d.same THEN NULL ELSE l.dirty_from END,
    dirty_since = CASE WHEN d.same THEN NULL ELSE greatest(l.dirty_since, $3) END,
    detector_stamp = CASE WHEN d.same THEN gen_random_uuid() ELSE l.detector_stamp END
FROM d WHERE l.vehicle_id = d.vehicle_id
RETURNING l.vehicle_id, l.detector_stamp"""

# The vehicles that may be silent while due: with no fix since $1, assigned a route running on local day $2 (ISO
# weekday $3) whose scheduled stops span the local second-of-day $4 widened by $5 s (or that has no schedule: its
# run is the whole day), and not checked for silence since $6. A prefilter on the current registry, so widened:
# the rules decide from the versions in force whether `now` lies inside a due run's window. Vehicles that never
# reported have no latest_fixes row: no fix at all is the run's affair (run_not_made), not a live silence. Only
# vehicles of slices $7.
SILENT = f"""
SELECT DISTINCT l.vehicle_id FROM latest_fixes l
JOIN route_assignments a ON a.vehicle_id = l.vehicle_id
JOIN routes r ON r.id = a.route_id AND r.active
WHERE l.last_ts < $1 AND (l.silence_checked_at IS NULL OR l.silence_checked_at < $6)
  AND l.vehicle_id % {SLICES} = ANY ($7::int[])
  AND a.valid_from <= $2 AND (a.valid_to IS NULL OR a.valid_to >= $2) AND $3 = ANY (a.weekdays)
  AND EXISTS (SELECT 1 FROM route_stops s WHERE s.route_id = r.id
              HAVING count(s.scheduled_time) = 0
                  OR $4 BETWEEN min(extract(epoch FROM s.scheduled_time)) - $5
                            AND max(extract(epoch FROM s.scheduled_time)) + $5)"""

SILENCE_CHECKED = "UPDATE latest_fixes SET silence_checked_at = $2 WHERE vehicle_id = ANY ($1::int[])"

# Where the recomputed window of each vehicle $1 must begin so that what is still open is recomputed too: the
# earliest start of its `detected` occurrences still going on at its instant $2 (or ending after it), looking
# back at most a day.
OPEN_SINCE = """
SELECT u.v AS vehicle_id,
       (SELECT min(o.start_ts) FROM occurrences o
        WHERE o.vehicle_id = u.v AND o.status = 'detected' AND o.start_ts >= u.at - interval '1 day'
          AND o.start_ts < u.at AND (o.end_ts IS NULL OR o.end_ts >= u.at) AND o.natural_key IS NULL) AS since
FROM unnest($1::int[], $2::timestamptz[]) AS u(v, at)"""

_STORED_COLUMNS = """
o.id, o.kind, o.vehicle_id, o.start_ts, o.end_ts, o.status, o.natural_key, o.route_id, o.run_no, o.lat, o.lon,
o.place, o.facts,
(SELECT h.data FROM occurrence_history h
 WHERE h.occurrence_id = o.id AND h.action = 'note' AND h.actor = 'detector' ORDER BY h.id DESC LIMIT 1) AS last_note"""

# The stored occurrences of the window kinds ($4) that can match the candidates of vehicle $1[i]'s window
# [$2[i], $3): those starting in it, and those before it still going on at its start.
STORED_WINDOWS = f"""
SELECT {_STORED_COLUMNS} FROM unnest($1::int[], $2::timestamptz[]) AS u(v, lo)
JOIN occurrences o ON o.vehicle_id = u.v
WHERE o.kind = ANY ($4::text[]) AND o.start_ts < $3
  AND (o.start_ts >= u.lo OR o.end_ts IS NULL OR o.end_ts >= u.lo) AND o.start_ts >= u.lo - interval '1 day'"""

# The stored occurrences of the run kinds ($2) of local day $1.
STORED_DAY = f"""
SELECT {_STORED_COLUMNS} FROM occurrences o WHERE o.day = $1 AND o.kind = ANY ($2::text[])"""

# When the fixes that completed candidates arrived (vehicle $1[i], fix time $2[i]).
RECEIVED = """
SELECT u.v, u.ts, f.received_at FROM unnest($1::int[], $2::timestamptz[]) AS u(v, ts)
JOIN fixes f ON f.vehicle_id = u.v AND f.ts = u.ts"""

# New occurrences: the contractor is the candidate's when it names one (a run's: the contract holder), else the
# one that had the vehicle on the day (0028); the driver the one of the fix at or before the start (its
# card, else the vehicle's assigned driver then: fix_driver, 0004), article and severity those in force for the
# kind. $16: the zone of `day`. Each gets its `detected` history row in the same statement.
INSERT = """
WITH c AS (
    SELECT * FROM unnest($1::text[], $2::int[], $3::int[], $4::int[], $5::text[], $6::timestamptz[],
                         $7::timestamptz[], $8::float8[], $9::float8[], $10::text[], $11::jsonb[],
                         $12::timestamptz[], $13::timestamptz[], $14::bool[], $15::int[])
        WITH ORDINALITY AS c(kind, v, route, run_no, key, start_ts, end_ts, lat, lon, place, facts, completed,
                             received, late, contractor, ord)),
ins AS (
    INSERT INTO occurrences (kind, vehicle_id, contractor_id, driver_id, route_id, run_no, natural_key, day,
                             start_ts, end_ts, lat, lon, place, facts, duty, article, severity, completed_ts,
                             received_at, late)
    SELECT c.kind, c.v, coalesce(c.contractor, vehicle_contractor_on(c.v, (c.start_ts AT TIME ZONE $16)::date)),
           fix_driver(c.v, c.start_ts, (SELECT f.driver_id FROM fixes f
                                        WHERE f.vehicle_id = c.v AND f.ts <= c.start_ts
                                          AND f.ts > c.start_ts - interval '1 day'
                                        ORDER BY f.ts DESC LIMIT 1)),
           c.route, c.run_no, c.key, (c.start_ts AT TIME ZONE $16)::date, c.start_ts, c.end_ts, c.lat, c.lon,
           c.place, c.facts, k.duty, k.article, k.severity, c.completed, c.received, c.late
    FROM c JOIN occurrence_kinds k ON k.kind = c.kind JOIN vehicles v ON v.id = c.v
    ORDER BY c.ord
    RETURNING id, facts, late),
hist AS (
    INSERT INTO occurrence_history (occurrence_id, actor, action, to_status, data)
    SELECT ins.id, 'detector', 'detected', 'detected', jsonb_build_object('facts', ins.facts, 'late', ins.late)
    FROM ins)
SELECT id FROM ins ORDER BY id"""

# A `detected` occurrence follows its candidate ($2-$10), `late` judged again ($13: late_after_s); a withdrawn one
# ($11 true) is restored. The previous data
# goes into the history row.
UPDATE = """
WITH old AS (
    SELECT id, status, start_ts, end_ts, route_id, lat, lon, place, facts FROM occurrences
    WHERE id = $1 AND status = CASE WHEN $11 THEN 'withdrawn' ELSE 'detected' END FOR UPDATE),
upd AS (
    UPDATE occurrences o SET start_ts = $2, end_ts = $3, route_id = $4, lat = $5, lon = $6, place = $7, facts = $8,
           completed_ts = coalesce($9, o.completed_ts), received_at = coalesce($10, o.received_at),
           late = coalesce(coalesce($10, o.received_at) - coalesce($9, o.completed_ts)
                           > make_interval(secs => $13::float8), o.late),
           status = 'detected', updated_at = now()
    FROM old WHERE o.id = old.id
    RETURNING o.id)
INSERT INTO occurrence_history (occurrence_id, actor, action, from_status, to_status, text, data)
SELECT old.id, 'detector', CASE WHEN $11 THEN 'restored' ELSE 'updated' END, old.status, 'detected', $12,
       jsonb_build_object('before', jsonb_build_object('start', old.start_ts, 'end', old.end_ts,
                          'route_id', old.route_id, 'lat', old.lat, 'lon', old.lon, 'place', old.place,
                          'facts', old.facts))
FROM old JOIN upd ON upd.id = old.id
RETURNING occurrence_id"""

WITHDRAW = """
WITH w AS (
    UPDATE occurrences SET status = 'withdrawn', updated_at = now() WHERE id = $1 AND status = 'detected'
    RETURNING id)
INSERT INTO occurrence_history (occurrence_id, actor, action, from_status, to_status, text)
SELECT w.id, 'detector', 'withdrawn', 'detected', 'withdrawn', $2 FROM w
RETURNING occurrence_id"""

# A note on a confirmed-or-later occurrence: its facts stay as frozen; the note says what the new data shows.
NOTE = """
INSERT INTO occurrence_history (occurrence_id, actor, action, from_status, to_status, text, data)
SELECT o.id, 'detector', 'note', o.status, o.status, $2, $3 FROM occurrences o
WHERE o.id = $1 AND o.status IN ('confirmed', 'notified', 'defense', 'decided', 'closed')
RETURNING occurrence_id"""

# Day close: the horizon the rollups keep, and how far the detector queued complete rescans.
HORIZON = "SELECT closed_through FROM rollup_horizon"

# The fixes hypertable's first chunk (its name is never reused, so it keys a cache) and, in it, the first fix ever
# stored (fixes has no index on ts alone: the minimum is looked for in that chunk only).
FIRST_CHUNK = """
SELECT current_database() || '/' || chunk_schema || '.' || chunk_name AS key, range_end
FROM timescaledb_information.chunks WHERE hypertable_schema = 'public' AND hypertable_name = 'fixes'
ORDER BY range_start LIMIT 1"""
FIRST_FIX = "SELECT min(ts) FROM fixes WHERE ts < $1"
RESCANNED_THROUGH = "SELECT rescanned_through FROM detector_state"
SET_RESCANNED_THROUGH = "UPDATE detector_state SET rescanned_through = $1"
ROUND_DONE = "UPDATE detector_state SET last_round_at = now(), last_round_s = $1, last_round_windows = $2"

# Queues local day $1 ([$2, $3) in UTC) for a complete rescan: every vehicle that reported since its start, or
# has occurrences that day.
QUEUE_RESCANS = """
INSERT INTO detector_rescans (vehicle_id, day)
SELECT l.vehicle_id, $1::date FROM latest_fixes l WHERE l.last_ts >= $2
UNION SELECT o.vehicle_id, $1::date FROM occurrences o WHERE o.day = $1::date
ON CONFLICT DO NOTHING"""

RESCANS = f"""
SELECT vehicle_id, day FROM detector_rescans WHERE vehicle_id % {SLICES} = ANY ($2::int[])
ORDER BY day, vehicle_id LIMIT $1"""
DELETE_RESCAN = "DELETE FROM detector_rescans WHERE vehicle_id = $1 AND day = $2"
