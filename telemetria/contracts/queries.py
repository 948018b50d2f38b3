"""All SQL of the school calendar and the contracts. $1 of every contract read is the contractor scope (NULL: all)."""

from __future__ import annotations

# --- school years -----------------------------------------------------------------------------

GET_SCHOOL_YEAR = "SELECT year, start_date, end_date, updated_at, updated_by FROM school_years WHERE year = $1"
SCHOOL_YEAR_DAYS = "SELECT day, school, reason, shifts FROM school_calendar_days WHERE year = $1 ORDER BY day"
SCHEDULE_CHANGES = """
SELECT day, shift, runs_due_from, reason, kind FROM school_schedule_changes WHERE year = $1 ORDER BY day, shift"""
# The first closed (not reopened) month, of any contract, among months $1.
CLOSED_AMONG = """
SELECT m.month, k.number, k.id FROM measurement_closures m JOIN contracts k ON k.id = m.contract_id
WHERE m.reopened_at IS NULL AND m.month = ANY ($1::date[]) ORDER BY m.month, k.number LIMIT 1"""
DELETE_SCHEDULE_CHANGES = "DELETE FROM school_schedule_changes WHERE year = $1"
INSERT_SCHEDULE_CHANGES = """
INSERT INTO school_schedule_changes (year, day, shift, runs_due_from, reason, kind)
SELECT $1, c.day, c.shift, c.t, c.reason, c.kind
FROM unnest($2::date[], $3::text[], $4::time[], $5::text[], $6::text[]) AS c(day, shift, t, reason, kind)"""

# The municipality's own holidays of a year (national and state ones are computed: holidays.py).
MUNICIPAL_HOLIDAYS = """
SELECT day, name, updated_by, updated_at FROM municipal_holidays
WHERE day >= make_date($1, 1, 1) AND day < make_date($1 + 1, 1, 1) ORDER BY day"""
DELETE_MUNICIPAL_HOLIDAYS = """
DELETE FROM municipal_holidays WHERE day >= make_date($1, 1, 1) AND day < make_date($1 + 1, 1, 1)"""
INSERT_MUNICIPAL_HOLIDAYS = """
INSERT INTO municipal_holidays (day, name, updated_by) SELECT d, n, $3 FROM unnest($1::date[], $2::text[]) AS u(d, n)"""
UPSERT_SCHOOL_YEAR = """
INSERT INTO school_years (year, start_date, end_date, updated_by) VALUES ($1, $2, $3, $4)
ON CONFLICT (year) DO UPDATE
   SET start_date = EXCLUDED.start_date, end_date = EXCLUDED.end_date, updated_at = now(),
       updated_by = EXCLUDED.updated_by"""
DELETE_SCHOOL_YEAR_DAYS = "DELETE FROM school_calendar_days WHERE year = $1"
INSERT_SCHOOL_YEAR_DAYS = """
INSERT INTO school_calendar_days (year, day, school, reason, shifts)
SELECT $1, d.day, d.school, d.reason, CASE WHEN d.shifts = '' THEN NULL ELSE string_to_array(d.shifts, ',') END
FROM unnest($2::date[], $3::bool[], $4::text[], $5::text[]) AS d(day, school, reason, shifts)"""

# --- contracts --------------------------------------------------------------------------------

CONTRACT_COLUMNS = ("contractor_id", "number", "lot", "valid_from", "valid_to")
TERM_COLUMNS = (
    "price_per_km", "price_per_km_unpaved", "made_min_coverage_pct", "partial_min_coverage_pct", "partial_pay",
    "off_route_km_paid", "justified_paid",
)  # fmt: skip

INSERT_CONTRACT = """
INSERT INTO contracts (contractor_id, number, lot, valid_from, valid_to) VALUES ($1, $2, $3, $4, $5) RETURNING id"""
CONTRACT_BY_NUMBER = "SELECT id FROM contracts WHERE number = $1"
LOCK_CONTRACT = "SELECT id, number, lot, valid_from, valid_to FROM contracts WHERE id = $1 FOR UPDATE"
# The first closed (not reopened) month of contract $1 with a day in [$2, $3] (measurement/api.py closes them).
CLOSED_MONTH_IN = """
SELECT month FROM measurement_closures
WHERE contract_id = $1 AND reopened_at IS NULL
  AND month <= $3::date AND (month + interval '1 month')::date > $2::date
ORDER BY month LIMIT 1"""
# Only the sent fields ($2) change; contractor_id is fixed at creation.
PATCH_CONTRACT = """
UPDATE contracts SET
    number = CASE WHEN 'number' = ANY($2::text[]) THEN $3 ELSE number END,
    lot = CASE WHEN 'lot' = ANY($2::text[]) THEN $4 ELSE lot END,
    valid_from = CASE WHEN 'valid_from' = ANY($2::text[]) THEN $5 ELSE valid_from END,
    valid_to = CASE WHEN 'valid_to' = ANY($2::text[]) THEN $6 ELSE valid_to END
WHERE id = $1 RETURNING id"""

INSERT_TERMS = """
INSERT INTO contract_terms (contract_id, valid_from, price_per_km, price_per_km_unpaved, made_min_coverage_pct,
                            partial_min_coverage_pct, partial_pay, off_route_km_paid, justified_paid, changed,
                            created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id"""
# The version in force on day $2 (the earliest one also covers the days before it).
TERMS_ON = """
SELECT * FROM contract_terms_in_force WHERE contract_id = $1 AND during @> $2::date"""
SUPERSEDE_TERMS = """
UPDATE contract_terms SET superseded_at = now()
WHERE contract_id = $1 AND valid_from = $2 AND superseded_at IS NULL"""

# $2: a contract id or NULL; $3: a contractor or NULL; $4: the local date whose terms are shown.
SELECT_CONTRACTS = """
SELECT k.id, k.contractor_id, c.name AS contractor, k.number, k.lot, k.valid_from, k.valid_to, k.created_at,
       t.valid_from AS terms_valid_from, t.price_per_km, t.price_per_km_unpaved, t.made_min_coverage_pct,
       t.partial_min_coverage_pct, t.partial_pay, t.off_route_km_paid, t.justified_paid,
       (SELECT count(*) FROM routes r WHERE r.contract_id = k.id) AS routes,
       count(*) OVER () AS total
FROM contracts k
JOIN contractors c ON c.id = k.contractor_id
LEFT JOIN contract_terms_in_force t ON t.contract_id = k.id AND t.during @> $4::date
WHERE ($1::int IS NULL OR k.contractor_id = $1) AND ($2::int IS NULL OR k.id = $2)
  AND ($3::int IS NULL OR k.contractor_id = $3)"""
LIST_CONTRACTS = SELECT_CONTRACTS + " ORDER BY k.valid_from DESC, k.number LIMIT $5 OFFSET $6"
GET_CONTRACT = SELECT_CONTRACTS + " LIMIT 1"

# Every version ever written, superseded ones included, with the days each applies to now.
CONTRACT_HISTORY = """
SELECT t.id, t.valid_from, f.during, t.price_per_km, t.price_per_km_unpaved, t.made_min_coverage_pct,
       t.partial_min_coverage_pct, t.partial_pay, t.off_route_km_paid, t.justified_paid, t.changed,
       t.created_at, t.created_by, t.superseded_at
FROM contract_terms t
LEFT JOIN contract_terms_in_force f ON f.id = t.id
WHERE t.contract_id = $1
ORDER BY t.valid_from, t.created_at, t.id"""
