"""SQL of the append-only audit log."""

from __future__ import annotations

INSERT = """
INSERT INTO audit_log (user_id, username, role, action, target, detail, ip)
VALUES ($1, $2, $3, $4, $5, $6, $7::inet)"""

LIST = """
SELECT at, id, user_id, username, role, action, target, detail, host(ip) AS ip, count(*) OVER () AS total
FROM audit_log
WHERE at >= coalesce($1::timestamptz, '-infinity') AND at < coalesce($2::timestamptz, 'infinity')
  AND ($3::text IS NULL OR action = $3 OR action LIKE $3 || '.%')
  AND ($4::text IS NULL OR username = $4)
ORDER BY at DESC, id DESC
LIMIT $5 OFFSET $6"""

# The plates of the vehicles an audit page names (exports, vehicle targets): one query per page.
PLATES = "SELECT id, plate FROM vehicles WHERE id = ANY ($1::bigint[])"

CSV_ROWS = 200_000  # an audit CSV holds at most this many entries (newest first); narrow the period for more
