"""All SQL of the measurement: contracts and their routes, prices in force, justifications, closed months.

$1 of a contract read is the contractor scope (NULL: every contractor). Each statement reads a whole period
for every contract or route at once: the boletim makes no round trip per run.
"""

from __future__ import annotations

# $2: one contract or NULL (every contract the scope sees).
CONTRACTS = """
SELECT k.id, k.number, k.contractor_id, c.name AS contractor, k.valid_from, k.valid_to
FROM contracts k JOIN contractors c ON c.id = k.contractor_id
WHERE ($1::int IS NULL OR k.contractor_id = $1) AND ($2::int IS NULL OR k.id = $2)
ORDER BY k.number, k.id"""

# The contracts' routes (as registered now) with the km a day's run is paid by (declared, else the line's).
CONTRACT_ROUTES = """
SELECT r.id, r.contract_id, r.code, coalesce(r.declared_km, r.length_m / 1000) AS declared_km
FROM routes r WHERE r.contract_id = ANY ($1::int[]) ORDER BY r.code, r.id"""

# The routes that belonged to contract $1 on some day of $2..$3: a route's contract is a dated version like its
# other fields (registry_versions, migrations/0011); code and km of its last such version in the period.
CONTRACT_ROUTES_DURING = """
SELECT DISTINCT ON (v.item_id) v.item_id AS id, v.data ->> 'code' AS code,
       coalesce((v.data ->> 'declared_km')::numeric, (v.data ->> 'length_m')::float8 / 1000) AS declared_km
FROM registry_versions_in_force v
WHERE v.kind = 'route' AND v.data IS NOT NULL AND (v.data ->> 'contract_id')::int = $1
  AND v.during && daterange($2::date, $3::date, '[]')
ORDER BY v.item_id, v.valid_from DESC"""

# Every route (the municipality's): a substitute's rival claims are looked for among all their runs.
ALL_ROUTES = "SELECT id FROM routes ORDER BY id"

ROUTE = """
SELECT r.id, r.code, r.contract_id, k.contractor_id
FROM routes r LEFT JOIN contracts k ON k.id = r.contract_id WHERE r.id = $1"""

# The versions of prices and rule that apply to some day of $2..$3 (both included).
TERMS = """
SELECT contract_id, during, price_per_km, price_per_km_unpaved, made_min_coverage_pct, partial_min_coverage_pct,
       partial_pay, off_route_km_paid, justified_paid
FROM contract_terms_in_force
WHERE contract_id = ANY ($1::int[]) AND during && daterange($2::date, $3::date, '[]')"""

# The vehicles a boletim may name: the contractors' own ($1) and any other by id ($2), with the contractors that
# had each (vehicle_contractor_spans, migrations/0028: lo/hi the local days, hi exclusive, NULL open).
VEHICLES = """
SELECT v.id, v.plate, v.active, v.contractor_id, h.los, h.his, h.contractors
FROM vehicles v
CROSS JOIN LATERAL (
    SELECT coalesce(array_agg(lower(s.during) ORDER BY lower(s.during) NULLS FIRST), '{}') AS los,
           coalesce(array_agg(upper(s.during) ORDER BY lower(s.during) NULLS FIRST), '{}') AS his,
           coalesce(array_agg(s.contractor_id ORDER BY lower(s.during) NULLS FIRST), '{}') AS contractors
    FROM vehicle_contractor_spans s WHERE s.vehicle_id = v.id AND NOT isempty(s.during)) h
WHERE v.contractor_id = ANY ($1::int[]) OR v.id = ANY ($2::int[])"""

# For each window i ([s, e) of a run of local day d no assigned vehicle made, of contractor c), the vehicles the
# contractor had on that day (issue 33: not today's) with a fix in it (the caller leaves out the ones assigned to
# the run).
WITH_FIXES = """
SELECT w.i, s.vehicle_id
FROM unnest($1::int[], $2::timestamptz[], $3::timestamptz[], $4::int[], $5::date[]) AS w(i, s, e, contractor, d)
JOIN vehicle_contractor_spans s ON s.contractor_id = w.contractor AND s.during @> w.d
WHERE EXISTS (SELECT 1 FROM fixes f WHERE f.vehicle_id = s.vehicle_id AND f.ts >= w.s AND f.ts < w.e)
ORDER BY w.i, s.vehicle_id"""

JUSTIFICATIONS = """
SELECT route_id, day, run_no, reason, created_by, created_at, kind, made_at FROM run_justifications
WHERE route_id = ANY ($1::int[]) AND day BETWEEN $2 AND $3 ORDER BY created_at, id"""

# Their ids, for the boletim's answer (a page corrects a reason by id: PATCH /api/v1/run-justifications/{id}).
JUSTIFICATION_IDS = """
SELECT id, route_id, day, run_no, created_at FROM run_justifications
WHERE route_id = ANY ($1::int[]) AND day BETWEEN $2 AND $3 ORDER BY created_at, id"""

INSERT_JUSTIFICATION = """
INSERT INTO run_justifications (route_id, day, run_no, reason, created_by, kind, made_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING id, route_id, day, run_no, reason, kind, made_at, created_by, created_at"""

JUSTIFICATION = """
SELECT j.id, j.route_id, j.day, j.run_no, j.reason, j.kind, j.made_at, j.created_by, j.created_at, r.code,
       r.contract_id
FROM run_justifications j JOIN routes r ON r.id = j.route_id WHERE j.id = $1 FOR UPDATE OF j"""

CORRECT_JUSTIFICATION = """
UPDATE run_justifications SET reason = $2 WHERE id = $1
RETURNING id, route_id, day, run_no, reason, kind, made_at, created_by, created_at"""

# A justification already covering the run (the same run, or the whole day, or — for a whole day — any run).
JUSTIFIED = """
SELECT id FROM run_justifications
WHERE route_id = $1 AND day = $2 AND ($3::int IS NULL OR run_no IS NULL OR run_no = $3) LIMIT 1"""

# The closings in force (not reopened) of the contracts' months that touch $2..$3.
CLOSED = """
SELECT contract_id, month, content, sha256, closed_by, closed_at FROM measurement_closures
WHERE contract_id = ANY ($1::int[]) AND reopened_at IS NULL
  AND month BETWEEN date_trunc('month', $2::date)::date AND $3::date
ORDER BY contract_id, month"""

# The earlier closings of the contracts' months that touch $2..$3, reopened since (issue 36: a reopened month keeps
# the trace of each close: who, when, its SHA-256, who reopened it, when and why).
REOPENED = """
SELECT month, sha256, closed_by, closed_at, reopened_by, reopened_at, reopen_reason FROM measurement_closures
WHERE contract_id = $1 AND reopened_at IS NOT NULL
  AND month BETWEEN date_trunc('month', $2::date)::date AND $3::date
ORDER BY month, closed_at"""

CLOSE = """
INSERT INTO measurement_closures (contract_id, month, content, sha256, closed_by) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT DO NOTHING
RETURNING id, contract_id, month, sha256, closed_by, closed_at"""

REOPEN = """
UPDATE measurement_closures SET reopened_by = $3, reopened_at = now(), reopen_reason = $4
WHERE contract_id = $1 AND month = $2 AND reopened_at IS NULL
RETURNING id, contract_id, month, sha256, closed_by, closed_at, reopened_by, reopened_at, reopen_reason"""
