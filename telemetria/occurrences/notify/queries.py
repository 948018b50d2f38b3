"""The notification outbox's SQL (migration 0015_notify.sql): configure, enqueue, claim, record."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import asyncpg

CONFIGURE = """
INSERT INTO notify_config (singleton, channels, kinds, updated_at) VALUES (true, $1::text[], $2::text[], now())
ON CONFLICT (singleton) DO UPDATE SET channels = excluded.channels, kinds = excluded.kinds, updated_at = now()"""

# One row per (occurrence, configured channel) for the configured kinds; enqueuing twice changes nothing.
ENQUEUE = """
INSERT INTO notify_outbox (occurrence_id, channel)
SELECT o.id, ch FROM occurrences o CROSS JOIN notify_config cfg CROSS JOIN unnest(cfg.channels) ch
WHERE o.id = ANY($1::bigint[]) AND o.kind = ANY(cfg.kinds)
ON CONFLICT (occurrence_id, channel) DO NOTHING"""

# Claim the due rows: one attempt more, and a lease (next_at) so that no other process takes them while they are
# being sent; a process that dies mid-send leaves them to be retried when the lease ends.
CLAIM = """
WITH due AS (
    SELECT id FROM notify_outbox
    WHERE sent_at IS NULL AND next_at <= $1 AND channel = ANY($4::text[])
    ORDER BY next_at, id LIMIT $2 FOR UPDATE SKIP LOCKED
)
UPDATE notify_outbox o SET attempts = o.attempts + 1, next_at = $1 + $3::interval
FROM due WHERE o.id = due.id
RETURNING o.id, o.occurrence_id, o.channel, o.attempts"""

OCCURRENCES = """
SELECT o.id, o.kind, o.article, o.severity, o.vehicle_id, v.plate, o.contractor_id, c.name AS contractor,
       d.name AS driver, o.route_id, r.code AS route_code, r.name AS route_name, o.start_ts, o.end_ts, o.lat, o.lon,
       o.place, o.facts, o.status, o.detected_at, o.late
FROM occurrences o
JOIN vehicles v ON v.id = o.vehicle_id
LEFT JOIN contractors c ON c.id = o.contractor_id
LEFT JOIN drivers d ON d.id = o.driver_id
LEFT JOIN routes r ON r.id = o.route_id
WHERE o.id = ANY($1::bigint[])"""

SENT = "UPDATE notify_outbox SET sent_at = $2, last_error = NULL WHERE id = $1"
FAILED = "UPDATE notify_outbox SET next_at = $2, last_error = $3 WHERE id = $1"


async def configure(conn: asyncpg.Connection, channels: Sequence[str], kinds: Sequence[str]) -> None:
    await conn.execute(CONFIGURE, list(channels), list(kinds))


async def enqueue(conn: asyncpg.Connection, occurrence_ids: Sequence[int]) -> int:
    status = await conn.execute(ENQUEUE, list(occurrence_ids))
    return int(status.rsplit(" ", 1)[1])


async def claim(
    conn: asyncpg.Connection, now: datetime, limit: int, lease: timedelta, channels: Sequence[str]
) -> list[asyncpg.Record]:
    rows: list[asyncpg.Record] = await conn.fetch(CLAIM, now, limit, lease, list(channels))
    return rows


async def occurrences(conn: asyncpg.Connection, ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    return {int(r["id"]): dict(r) for r in await conn.fetch(OCCURRENCES, list(ids))}


async def sent(conn: asyncpg.Connection, outbox_id: int, at: datetime) -> None:
    await conn.execute(SENT, outbox_id, at)


async def failed(conn: asyncpg.Connection, outbox_id: int, retry_at: datetime, error: str) -> None:
    await conn.execute(FAILED, outbox_id, retry_at, error[:2000])
