"""SQL of the Traccar gateway: its tokens, and which tracker a gateway may speak for."""

from __future__ import annotations

INSERT_GATEWAY = """
INSERT INTO traccar_gateways (name, contractor_id, token_hash) VALUES ($1, $2, $3)
RETURNING id, name, contractor_id, active, created_at"""

LIST_GATEWAYS = "SELECT id, name, contractor_id, active, created_at FROM traccar_gateways ORDER BY id"

SET_GATEWAY_ACTIVE = "UPDATE traccar_gateways SET active = $2 WHERE id = $1 RETURNING id"

SET_GATEWAY_TOKEN = "UPDATE traccar_gateways SET token_hash = $2 WHERE id = $1 RETURNING id"

GATEWAY_NAME_TAKEN = "SELECT EXISTS (SELECT 1 FROM traccar_gateways WHERE name = $1)"

CONTRACTOR_EXISTS = "SELECT EXISTS (SELECT 1 FROM contractors WHERE id = $1)"

GATEWAY_BY_TOKEN = "SELECT id, contractor_id FROM traccar_gateways WHERE token_hash = $1 AND active"

# A contractor's gateway speaks for a tracker only while it is installed in one of that contractor's
# vehicles: checked at the position's fix time, the time the writer files the fix under.
TRACKER_FOR_CONTRACTOR = """
SELECT t.id,
       EXISTS (SELECT 1 FROM tracker_installations i JOIN vehicles v ON v.id = i.vehicle_id
               WHERE i.tracker_id = t.id AND v.contractor_id = $2 AND i.during @> $3::timestamptz) AS allowed
FROM trackers t WHERE t.unique_id = $1 AND t.active"""

LIST_GATEWAYS_PAGE = """
SELECT g.id, g.name, g.contractor_id, c.name AS contractor, g.active, g.created_at, count(*) OVER () AS total
FROM traccar_gateways g LEFT JOIN contractors c ON c.id = g.contractor_id
WHERE ($1::int IS NULL OR g.id = $1)
ORDER BY g.name, g.id LIMIT $2 OFFSET $3"""
