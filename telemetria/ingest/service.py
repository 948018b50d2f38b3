"""The one path every fix takes: decoded items → validate → group-commit writer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from telemetria.ingest.model import Fix, Rejected
from telemetria.ingest.rows import WriteResult
from telemetria.ingest.validate import Limits, validate
from telemetria.ingest.writer import Writer
from telemetria.settings import Settings


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(slots=True)
class IngestResult:
    accepted: int = 0
    duplicates: int = 0
    rejected: list[Rejected] = field(default_factory=list)
    tracker_inactive: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "rejected": [r.as_json() for r in self.rejected],
        }


def limits_from(settings: Settings) -> Limits:
    return Limits(
        max_future=timedelta(seconds=settings.max_future_s),
        retention=timedelta(days=settings.retention_days),
        max_speed_kmh=settings.max_speed_kmh,
    )


class IngestService:
    def __init__(self, writer: Writer, limits: Limits, now: Callable[[], datetime] = utcnow):
        self.writer = writer
        self.limits = limits
        self.now = now

    async def ingest(self, tracker_id: int, items: Sequence[Fix | Rejected]) -> IngestResult:
        """Store a request's decoded items; raises writer.Unavailable when nothing could be committed."""
        indexes, fixes, rejected = validate(items, self.now(), self.limits)
        written: WriteResult = await self.writer.write(tracker_id, indexes, fixes)
        rejected.extend(written.rejected)
        rejected.sort(key=lambda r: r.index)
        return IngestResult(written.accepted, written.duplicates, rejected, written.tracker_inactive)
