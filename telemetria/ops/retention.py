"""Retention: drop whole chunks older than the retention window from every hypertable.

Lei 3.588/2023 Art. 15 §6 requires records to be kept for no less than 2 years; the window is
`retention_days` (at least 730, enforced by Settings and again here). The cutoff is now minus
the window, and `drop_chunks` drops only chunks that lie *entirely* before it, so up to one
chunk interval (1 day for fixes) of rows older than the window remains until a later run.
Every hypertable in the database is covered (fixes, and any audit log or rollup added later as a
hypertable); plain tables are not touched, except latest_fixes: in the same transaction, the
vehicles whose newest fix may have gone with the dropped chunks of fixes get it re-derived from
what is left. Each run that is not a dry run is recorded in `retention_runs`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from telemetria.db import DB_ERRORS, Conn, Pool
from telemetria.ops import queries as q
from telemetria.settings import MIN_RETENTION_DAYS

log = logging.getLogger(__name__)

# Any constant works; it only keeps two processes from running retention at once.
RETENTION_LOCK = 4_242_002
# drop_chunks needs an exclusive lock on each chunk; a long report holding one makes the run
# give up and try again later rather than queue every other reader behind it.
LOCK_TIMEOUT = "10s"
# The periodic task looks at most this often whether a run is due (the interval is counted from
# the last recorded run, so restarts and several processes do not make it run more often).
CHECK_EVERY_S = 3600.0
FIRST_CHECK_S = 60.0
# The hypertable whose drops also change each vehicle's newest fix (latest_fixes).
FIXES = "public.fixes"


class RetentionError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Chunk:
    name: str
    range_start: datetime
    range_end: datetime


@dataclass(slots=True)
class HypertableRun:
    hypertable: str
    time_column: str
    chunks: list[Chunk]  # dropped, or those a dry run would drop
    oldest_kept: datetime | None = None  # start of the oldest chunk left


@dataclass(slots=True)
class RetentionRun:
    cutoff: datetime
    retention_days: int
    dry_run: bool
    hypertables: list[HypertableRun] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    @property
    def chunk_count(self) -> int:
        return sum(len(h.chunks) for h in self.hypertables)

    def as_json(self) -> dict[str, Any]:
        verb = "would_drop" if self.dry_run else "dropped"
        return {
            "dry_run": self.dry_run,
            "retention_days": self.retention_days,
            "cutoff": self.cutoff.isoformat(),
            "rule": "chunks whose whole time range ends at or before the cutoff",
            "hypertables": [
                {
                    "hypertable": h.hypertable,
                    "time_column": h.time_column,
                    verb: [_chunk_json(c) for c in h.chunks],
                    "oldest_kept_chunk_start": h.oldest_kept.isoformat() if h.oldest_kept else None,
                }
                for h in self.hypertables
            ],
            "skipped": self.skipped,
        }


def _chunk_json(c: Chunk) -> dict[str, str]:
    return {"chunk": c.name, "range_start": c.range_start.isoformat(), "range_end": c.range_end.isoformat()}


def cutoff_for(now: datetime, retention_days: int) -> datetime:
    """now − retention_days; refuses a window under the legal minimum."""
    if retention_days < MIN_RETENTION_DAYS:
        raise RetentionError(
            f"retention of {retention_days} days refused: Lei 3.588/2023 Art. 15 §6 requires records "
            f"to be kept for no less than 2 years ({MIN_RETENTION_DAYS} days)"
        )
    return now - timedelta(days=retention_days)


async def run(
    conn: Conn,
    retention_days: int,
    *,
    dry_run: bool = False,
    now: datetime | None = None,
    source: str = "cli",
) -> RetentionRun:
    """Drop (or, dry, list) every hypertable's chunks older than the window, in one transaction."""
    cutoff = cutoff_for(now or datetime.now(UTC), retention_days)
    result = RetentionRun(cutoff, retention_days, dry_run)
    async with conn.transaction():
        await conn.execute(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'")
        for r in await conn.fetch(q.HYPERTABLES):
            name, column, ctype = r["hypertable"], r["time_column"], r["column_type"]
            if ctype not in q.CUTOFF_AS:
                result.skipped.append(f"{name}: time column {column} is {ctype}, not a timestamp or date")
                continue
            rows = await conn.fetch(q.CHUNKS_OLDER[ctype], name, cutoff)
            chunks = [Chunk(c["chunk"], c["range_start"], c["range_end"]) for c in rows]
            if not dry_run and chunks:
                dropped = {c["chunk"] for c in await conn.fetch(q.DROP_CHUNKS[ctype], name, cutoff)}
                if dropped != {c.name for c in chunks}:  # cannot happen in one transaction; never guess
                    raise RetentionError(f"{name}: drop_chunks dropped {sorted(dropped)}, expected {chunks}")
            oldest = await conn.fetchval(q.OLDEST_KEPT_START, name, [c.name for c in chunks])
            result.hypertables.append(HypertableRun(name, column, chunks, oldest))
            if name == FIXES and not dry_run and chunks:
                await conn.execute(q.REFRESH_LATEST_BEFORE, cutoff)
        if not dry_run:
            dropped_json = [
                {"hypertable": h.hypertable, **_chunk_json(c)} for h in result.hypertables for c in h.chunks
            ]
            await conn.execute(q.RECORD_RUN, cutoff, retention_days, source, dropped_json)
    return result


async def run_if_due(
    pool: Pool, retention_days: int, interval_s: float, now: Callable[[], datetime] = lambda: datetime.now(UTC)
) -> RetentionRun | None:
    """Run retention unless another process is running it or it ran less than `interval_s` ago."""
    async with pool.acquire() as conn:
        if not await conn.fetchval("SELECT pg_try_advisory_lock($1)", RETENTION_LOCK):
            return None
        try:
            since = await conn.fetchval(q.SECONDS_SINCE_LAST_RUN)
            if since is not None and since < interval_s:
                return None
            return await run(conn, retention_days, now=now(), source="service")
        finally:
            await conn.execute("SELECT pg_advisory_unlock($1)", RETENTION_LOCK)


async def periodic(pool: Pool, retention_days: int, interval_s: float) -> None:
    """The service's retention task: every `interval_s` seconds, in one process at a time. Runs until cancelled."""
    await asyncio.sleep(min(interval_s, FIRST_CHECK_S))
    while True:
        try:
            done = await run_if_due(pool, retention_days, interval_s)
            if done is not None:
                log.info(
                    "retention: dropped %d chunks older than %s (%d days)",
                    done.chunk_count,
                    done.cutoff.isoformat(),
                    retention_days,
                )
        except DB_ERRORS as e:  # database down or a lock not granted in time: try again later
            log.warning("retention run failed, will retry: %s: %s", type(e).__name__, e)
        except Exception:
            log.exception("retention run failed unexpectedly")
        await asyncio.sleep(min(interval_s, CHECK_EVERY_S))
