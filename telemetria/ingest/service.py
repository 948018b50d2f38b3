"""The one path every fix takes: decoded items → validate → group-commit writer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta

from telemetria.fix import Fix, Rejected
from telemetria.ingest.rows import IngestResult
from telemetria.ingest.validate import Limits, validate
from telemetria.ingest.writer import Writer
from telemetria.settings import Settings


def utcnow() -> datetime:
    return datetime.now(UTC)


def limits_from(settings: Settings) -> Limits:
    return Limits(
        max_future=timedelta(seconds=settings.max_future_s),
        retention=timedelta(days=settings.retention_days),
        max_speed_kmh=settings.max_speed_kmh,
        max_attributes_bytes=settings.max_attributes_bytes,
    )


class IngestService:
    def __init__(self, writer: Writer, limits: Limits, now: Callable[[], datetime] = utcnow):
        self.writer = writer
        self.limits = limits
        self.now = now
        # Fixes handed to the writer and not yet answered: lets the HTTP edge turn requests away
        # before reading their bodies while the writer's queue is full.
        self.waiting_rows = 0

    async def ingest(self, tracker_id: int, items: Sequence[Fix | Rejected]) -> IngestResult:
        """Store a request's decoded items; raises writer.Unavailable when nothing could be committed."""
        indexes, fixes, rejected = validate(items, self.now(), self.limits)
        self.waiting_rows += len(fixes)
        try:
            result = await self.writer.write(tracker_id, indexes, fixes)
        finally:
            self.waiting_rows -= len(fixes)
        result.rejected = sorted(rejected + result.rejected, key=lambda r: r.index)
        return result
