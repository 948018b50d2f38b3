"""The values the seals pass around (exports name them; the verifier checks files against them)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime


@dataclass(frozen=True, slots=True)
class SealRef:
    """One version of one vehicle-day's seal, as an export names it."""

    vehicle_id: int
    plate: str
    day: date  # local day (America/Porto_Velho)
    version: int
    fixes: int
    sha256: str
    # The export's window clipped to the day (aware; the table writes UTC): set by seals/table.clipped().
    start: datetime | None = None
    end: datetime | None = None


@dataclass(frozen=True, slots=True)
class Seal:
    """A stored seal (a row of day_seals), as GET /api/v1/seals lists it."""

    vehicle_id: int
    plate: str
    day: date
    version: int
    fixes: int
    sha256: str
    previous_sha256: str | None
    leaf_sha256: str
    added: int
    removed: int
    sealed_at: datetime

    def ref(self) -> SealRef:
        return SealRef(self.vehicle_id, self.plate, self.day, self.version, self.fixes, self.sha256)
