"""SQL of the administrative process: the list and the detail, the transitions, history, evidence, attachments,
the kinds' classification. (The detector's SQL is in queries.py.)"""

from __future__ import annotations

# The fields of a list item (the contract), in the order they are answered.
ITEM_COLUMNS = """
    o.id, o.kind, o.article, o.severity, o.vehicle_id, v.plate, o.contractor_id, d.name AS driver, o.route_id,
    o.start_ts AS start, o.end_ts AS "end", o.lat, o.lon, o.place, o.facts, o.status, o.detected_at, o.late"""

FROM = """
FROM occurrences o
JOIN vehicles v ON v.id = o.vehicle_id
LEFT JOIN drivers d ON d.id = o.driver_id"""

# $1, $2: [start, end) by start; $3 vehicle; $4 contractor; $5 kinds; $6 statuses (NULL: any);
# $7: the caller's contractor scope (NULL: all) and $8 the states a scoped caller may see; $9, $10: limit, offset.
LIST = f"""
SELECT {ITEM_COLUMNS}, count(*) OVER () AS total
{FROM}
WHERE o.start_ts >= $1 AND o.start_ts < $2
  AND ($3::int IS NULL OR o.vehicle_id = $3)
  AND ($4::int IS NULL OR o.contractor_id = $4)
  AND ($5::text[] IS NULL OR o.kind = ANY($5))
  AND ($6::text[] IS NULL OR o.status = ANY($6))
  AND ($7::int IS NULL OR (o.contractor_id = $7 AND o.status = ANY($8)))
ORDER BY o.start_ts, o.id
LIMIT $9 OFFSET $10"""

DETAIL = f"""
SELECT {ITEM_COLUMNS},
    c.name AS contractor, o.driver_id,
    CASE WHEN r.id IS NOT NULL THEN jsonb_build_object('id', r.id, 'code', r.code, 'name', r.name) END AS route,
    o.run_no, o.natural_key, o.day,
    o.completed_ts, o.received_at, o.updated_at, o.notified_at, o.defense_due, o.penalty, o.fine_upfm, o.fine_brl,
    o.recurrence_of, o.evidence_sha256, o.duty, o.defense_final, o.decided_at, o.decided_by, o.appeal_due,
    o.appealed_at, o.reconsider_due, o.appeal_outcome, o.appeal_decided_at
{FROM}
LEFT JOIN contractors c ON c.id = o.contractor_id
LEFT JOIN routes r ON r.id = o.route_id
WHERE o.id = $1"""

# The row a transition works on, locked for the transaction (two reviewers cannot both confirm).
LOCK = """
SELECT id, status, contractor_id, article, severity, start_ts, end_ts, penalty, defense_due, defense_final,
    decided_by, appeal_due, appealed_at, reconsider_due
FROM occurrences WHERE id = $1 FOR UPDATE"""

# Decisions of fines of one contractor one at a time, so two decided at once cannot both miss the other as the
# earlier fine that doubles (EARLIER_FINE). Released at the transaction's end.
LOCK_CONTRACTOR_FINES = "SELECT pg_advisory_xact_lock(18, $1)"

# What an occurrence already holds in attachments: their count and bytes.
ATTACHMENTS_HELD = """
SELECT count(*) AS n, coalesce(sum(size), 0)::bigint AS bytes FROM occurrence_attachments WHERE occurrence_id = $1"""

HISTORY = """
SELECT id, at, actor, role, host(ip) AS ip, action, from_status, to_status, text, data
FROM occurrence_history WHERE occurrence_id = $1 ORDER BY id"""

INSERT_HISTORY = """
INSERT INTO occurrence_history (occurrence_id, actor, user_id, role, ip, action, from_status, to_status, text, data)
VALUES ($1, $2, $3, $4, $5::inet, $6, $7, $8, $9, $10)
RETURNING id, at"""

SET_STATUS = "UPDATE occurrences SET status = $2, updated_at = now() WHERE id = $1"

RECLASSIFY = "UPDATE occurrences SET article = $2, severity = $3, updated_at = now() WHERE id = $1"

SET_NOTIFIED = """
UPDATE occurrences SET status = 'notified', notified_at = $2, defense_due = $3, updated_at = now() WHERE id = $1"""

SET_DECISION = """
UPDATE occurrences SET status = 'decided', penalty = $2, decided_at = $3, decided_by = $4, appeal_due = $5,
    updated_at = now()
WHERE id = $1"""

SET_DEFENSE_FINAL = "UPDATE occurrences SET defense_final = true, updated_at = now() WHERE id = $1"

# How many versions of the defence this phase already holds (each replacement is one more; bounded).
DEFENSE_VERSIONS = "SELECT count(*) FROM occurrence_history WHERE occurrence_id = $1 AND action = 'defense'"

SET_APPEAL = """
UPDATE occurrences SET status = 'under_appeal', appealed_at = $2, reconsider_due = $3, updated_at = now()
WHERE id = $1"""

SET_APPEAL_DECISION = """
UPDATE occurrences SET status = 'decided', appeal_outcome = $2, penalty = $3, appeal_decided_at = $4,
    updated_at = now()
WHERE id = $1"""

SET_FINE = "UPDATE occurrences SET fine_upfm = $2, fine_brl = $3, recurrence_of = $4, updated_at = now() WHERE id = $1"

# An occurrence's penalty is final ($1: now): decided (or closed) and no appeal left: decided on appeal, or the
# appeal term over unused. Under appeal it is suspended (Lei 14.133 Art. 168), so it is not.
FINAL = """(o.status IN ('decided', 'closed') AND (o.appealed_at IS NOT NULL OR o.appeal_due IS NULL
             OR o.appeal_due < $1))"""

# The latest earlier infraction of the same contractor and severity, started in [$5, $6) local days before this
# one's start, whose penalty (a warning and/or a fine) is final: what makes this one a recurrence (Art. 38 and 39,
# sole paragraphs). By commission dates and finality only, so the order of the decisions does not matter.
EARLIER_SANCTION = f"""
SELECT o.id FROM occurrences o
WHERE o.contractor_id = $2 AND o.severity = $3 AND o.id <> $4
  AND o.penalty IN ('warning', 'fine', 'warning_and_fine') AND {FINAL}
  AND o.day >= $5 AND o.day < $6 AND o.start_ts < $7
ORDER BY o.start_ts DESC, o.id DESC LIMIT 1"""

# The contractor's occurrences with a fine decided (suspended or not): their fines follow the others' finality.
CONTRACTOR_FINES = """
SELECT id, status, severity, start_ts, penalty, fine_upfm, fine_brl, recurrence_of FROM occurrences
WHERE contractor_id = $1 AND penalty IN ('fine', 'warning_and_fine') AND status IN ('decided', 'under_appeal', 'closed')
ORDER BY start_ts, id"""

MUNICIPAL_HOLIDAYS = "SELECT day FROM municipal_holidays"

# --- evidence ---------------------------------------------------------------------------------------------------

EVIDENCE_FIXES = """
SELECT ts, lat, lon, speed_kmh, received_at FROM fixes
WHERE vehicle_id = $1 AND ts >= $2 AND ts <= $3 AND valid ORDER BY ts"""

# The registry versions in force on the occurrence's day for what it rests on: its vehicle, its route, the
# vehicle's route assignments, and (speeding) the speed zones.
EVIDENCE_REGISTRY = """
SELECT id, kind, item_id, valid_from, data FROM registry_versions_in_force
WHERE superseded_at IS NULL AND (during @> $1::date)
  AND ((kind = 'vehicle' AND item_id = $2)
    OR (kind = 'route' AND item_id = $3)
    OR (kind = 'route_assignment' AND (data ->> 'vehicle_id')::int = $2)
    OR (kind = 'speed_zone' AND $4))
ORDER BY kind, item_id"""

INSERT_EVIDENCE = """
INSERT INTO occurrence_evidence (occurrence_id, content, sha256, frozen_by, frozen_at) VALUES ($1, $2, $3, $4, $5)"""

SET_EVIDENCE_SHA = "UPDATE occurrences SET evidence_sha256 = $2 WHERE id = $1"

EVIDENCE = "SELECT content, sha256, frozen_by, frozen_at FROM occurrence_evidence WHERE occurrence_id = $1"

# --- attachments ------------------------------------------------------------------------------------------------

INSERT_ATTACHMENT = """
INSERT INTO occurrence_attachments (occurrence_id, history_id, filename, content_type, size, sha256, content,
    uploaded_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING id, history_id, filename, content_type, size, sha256, uploaded_by, uploaded_at"""

ATTACHMENTS = """
SELECT id, history_id, filename, content_type, size, sha256, uploaded_by, uploaded_at
FROM occurrence_attachments WHERE occurrence_id = $1 ORDER BY id"""

ATTACHMENT = """
SELECT filename, content_type, content FROM occurrence_attachments WHERE occurrence_id = $1 AND id = $2"""

# --- kinds -------------------------------------------------------------------------------------------------------

KINDS = """
SELECT kind, duty, article, severity, article IS NOT NULL AS fine_allowed, updated_by, updated_at
FROM occurrence_kinds ORDER BY kind"""

KIND = "SELECT kind, duty, article, severity FROM occurrence_kinds WHERE kind = $1 FOR UPDATE"

UPDATE_KIND = """
UPDATE occurrence_kinds SET duty = $2, article = $3, severity = $4, updated_by = $5, updated_at = now()
WHERE kind = $1
RETURNING kind, duty, article, severity, article IS NOT NULL AS fine_allowed, updated_by, updated_at"""
