"""Who drove: each fix's driver is the registered card it carries, else the vehicle's assigned driver then."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from telemetria.db import Conn
from telemetria.registry import queries as q


@dataclass(frozen=True, slots=True)
class FixDriver:
    ts: datetime
    card: str | None  # what the tracker sent as driver_id
    driver_id: int | None
    source: str | None  # "card", "assignment", or None when neither says


async def fix_drivers(conn: Conn, vehicle_id: int, since: datetime, until: datetime) -> list[FixDriver]:
    """The driver of every fix of the vehicle in [since, until), by fix time."""
    return [
        FixDriver(r["ts"], r["card"], r["driver_id"], r["source"])
        for r in await conn.fetch(q.FIX_DRIVERS, vehicle_id, since, until)
    ]
