"""Registering vehicles and trackers, and moving a tracker between vehicles (with its fixes)."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.registry import queries as q
from telemetria.registry.errors import Conflict, NotFound, RegistryError
from telemetria.reports.knobs import DEFAULT as REPORT_PARAMS

# Rollups are by local day; a fix changes the days up to one link (max_link_s) around it (as ingest marks them).
_STALE_ZONE = (LOCAL_TZ.key, timedelta(seconds=REPORT_PARAMS.max_link_s))

# Brazilian plates: old (ABC1234) and Mercosul (ABC1D23), written with or without the hyphen.
_PLATE = re.compile(r"^[A-Z]{3}[0-9][A-Z0-9][0-9]{2}$")


def normalize_plate(plate: str) -> str:
    """'abc-1d23' -> 'ABC1D23'; raises RegistryError when it is not a Brazilian plate."""
    p = re.sub(r"[\s-]", "", plate).upper()
    if not _PLATE.match(p):
        raise RegistryError(f"plate: {plate!r} is not a Brazilian plate (ABC1234 or ABC1D23)", "plate")
    return p


def new_token() -> str:
    """A 256-bit bearer token for a tracker, URL-safe."""
    return secrets.token_urlsafe(32)


def token_hash(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass(slots=True)
class MoveResult:
    tracker: str
    from_plate: str | None
    to_plate: str
    at: datetime
    fixes_reattributed: int
    fixes_dropped_as_duplicates: int

    def as_json(self) -> dict[str, Any]:
        return {
            "tracker": self.tracker,
            "from_vehicle": self.from_plate,
            "to_vehicle": self.to_plate,
            "at": self.at.isoformat(),
            "fixes_reattributed": self.fixes_reattributed,
            "fixes_dropped_as_duplicates": self.fixes_dropped_as_duplicates,
        }


async def add_vehicle(
    conn: Conn, plate: str, prefix: str | None = None, description: str | None = None
) -> dict[str, Any]:
    plate = normalize_plate(plate)
    try:
        row = await conn.fetchrow(q.INSERT_VEHICLE, plate, prefix, description)
    except asyncpg.UniqueViolationError:
        raise Conflict(f"plate: vehicle {plate} already exists", "plate") from None
    return dict(row)


async def vehicle_id(conn: Conn, plate: str) -> int:
    row = await conn.fetchrow(q.VEHICLE_BY_PLATE, normalize_plate(plate))
    if row is None:
        raise NotFound(f"no vehicle with plate {normalize_plate(plate)}", "plate")
    return int(row["id"])


async def vehicle_exists(conn: Conn, plate: str) -> bool:
    return await conn.fetchrow(q.VEHICLE_BY_PLATE, normalize_plate(plate)) is not None


async def tracker_exists(conn: Conn, unique_id: str) -> bool:
    return await conn.fetchrow(q.TRACKER_BY_UNIQUE_ID, unique_id) is not None


async def list_vehicles(conn: Conn) -> list[dict[str, Any]]:
    return [dict(r) for r in await conn.fetch(q.LIST_VEHICLES)]


async def set_vehicle_active(conn: Conn, plate: str, active: bool) -> None:
    if await conn.fetchval(q.SET_VEHICLE_ACTIVE, normalize_plate(plate), active) is None:
        raise NotFound(f"no vehicle with plate {normalize_plate(plate)}", "plate")


async def add_tracker(conn: Conn, unique_id: str, plate: str, since: datetime | None = None) -> dict[str, Any]:
    """Register a tracker installed in a vehicle from `since` (None: no lower bound); returns its token once."""
    unique_id = unique_id.strip()
    if not unique_id or len(unique_id) > 64:
        raise RegistryError("unique_id: must be 1 to 64 characters", "unique_id")
    token = new_token()
    async with conn.transaction():
        vid = await vehicle_id(conn, plate)
        try:
            tid = await conn.fetchval(q.INSERT_TRACKER, unique_id, token_hash(token))
        except asyncpg.UniqueViolationError:
            raise Conflict(f"unique_id: tracker {unique_id} already exists", "unique_id") from None
        await conn.execute(q.INSERT_INSTALLATION, tid, vid, since)
    return {
        "id": tid,
        "unique_id": unique_id,
        "vehicle": normalize_plate(plate),
        "since": since.isoformat() if since else None,
        "token": token,
    }


async def rotate_token(conn: Conn, unique_id: str) -> str:
    token = new_token()
    if await conn.fetchval(q.SET_TRACKER_TOKEN, unique_id, token_hash(token)) is None:
        raise NotFound(f"no tracker {unique_id}", "unique_id")
    return token


async def set_tracker_active(conn: Conn, unique_id: str, active: bool) -> None:
    if await conn.fetchval(q.SET_TRACKER_ACTIVE, unique_id, active) is None:
        raise NotFound(f"no tracker {unique_id}", "unique_id")


async def list_trackers(conn: Conn) -> list[dict[str, Any]]:
    return [dict(r) for r in await conn.fetch(q.LIST_TRACKERS)]


async def move_tracker(conn: Conn, unique_id: str, to_plate: str, at: datetime) -> MoveResult:
    """Install the tracker in another vehicle from `at` on; fixes already stored after `at` follow it."""
    async with conn.transaction():
        await conn.execute(q.LOCK_INSTALLATIONS)
        tracker = await conn.fetchrow(q.TRACKER_BY_UNIQUE_ID, unique_id)
        if tracker is None:
            raise NotFound(f"no tracker {unique_id}", "unique_id")
        tid = tracker["id"]
        to_vid = await vehicle_id(conn, to_plate)
        if await conn.fetchval(q.LATER_INSTALLATION, tid, at):
            raise RegistryError(f"tracker {unique_id} has an installation starting after {at.isoformat()}")
        current = await conn.fetchrow(q.INSTALLATION_AT, tid, at)
        from_plate = None
        moved = dropped = 0
        if current is not None:
            if current["vehicle_id"] == to_vid:
                raise RegistryError(f"tracker {unique_id} is already in {normalize_plate(to_plate)} at that time")
            if current["since"] is not None and current["since"] >= at:
                await conn.execute(q.DELETE_INSTALLATION, current["id"])
            else:
                await conn.execute(q.CLOSE_INSTALLATION, current["id"], at)
            from_plate = await conn.fetchval(q.PLATE_BY_ID, current["vehicle_id"])
            span = await conn.fetchrow(q.MOVING_SPAN, tid, current["vehicle_id"], at)
            dropped = _count(await conn.execute(q.DROP_COLLIDING_FIXES, tid, current["vehicle_id"], to_vid, at))
            moved = _count(await conn.execute(q.REATTRIBUTE_FIXES, tid, current["vehicle_id"], to_vid, at))
            if moved or dropped:
                await conn.execute(q.REFRESH_LATEST_FIXES, [current["vehicle_id"], to_vid])
                for vid in sorted({current["vehicle_id"], to_vid}):  # in vehicle order, as the detector locks
                    await conn.execute(q.MARK_DETECTOR_DIRTY, [vid], span["lo"])
                # Under LOCK_INSTALLATIONS, like ingest: the closed horizon cannot move before this commits.
                vids = [current["vehicle_id"], current["vehicle_id"], to_vid, to_vid]
                await conn.execute(q.MARK_ROLLUPS_STALE, vids, [span["lo"], span["hi"]] * 2, *_STALE_ZONE)
        await conn.execute(q.INSERT_INSTALLATION, tid, to_vid, at)
    return MoveResult(unique_id, from_plate, normalize_plate(to_plate), at, moved, dropped)


def _count(status: str) -> int:
    return int(status.rsplit(" ", 1)[1])
