-- The rollups' bases are checked again when the derivation's rules change, not only when the registry does
-- (reports/knobs.py ANALYSIS_VERSION, part of every basis): the refresher compares this with the fingerprint of
-- the running release and, when they differ, marks every rollup computed by other rules as stale.
ALTER TABLE rollup_horizon ADD COLUMN checked_fingerprint text;  -- NULL: never checked by fingerprint
