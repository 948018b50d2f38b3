"""Verifying a read track export against the stored seals: each vehicle-day's versions fetched, then judged.

The file is read by seals/verify.py (pure); this module fetches, per vehicle-day of the file, the versions
needed (the one the file names, or every version when it names none) with their canonical lines
(seals/store.py rebuilds them from the fixes and the versions' changes), and hands them to `verify.judge`.
On the main database: rebuilding a version's lines may seal a change the refresher has not reached yet.
"""

from __future__ import annotations

import asyncio
from datetime import date
from typing import Any

from telemetria.db import Conn
from telemetria.seals import store
from telemetria.seals import verify as v


async def versions(conn: Conn, vehicle_id: int, day: date, only: int | None) -> list[v.Version]:
    """The stored versions of a vehicle-day's seal (or just version `only`) with their lines, oldest first."""
    out = []
    for s in await store.seals(conn, None, vehicle_id, day, day):
        if only is not None and s.version != only:
            out.append(v.Version(s.version, s.fixes, s.sha256, None))  # its existence is enough to say so
            continue
        # None when the day's fixes are no longer kept (retention): judged as nothing to compare with.
        lines = await store.version_lines(conn, vehicle_id, day, s.version)
        out.append(v.Version(s.version, s.fixes, s.sha256, lines))
    return out


async def check(conn: Conn, parsed: v.Parsed) -> list[v.DayResult]:
    """Every vehicle-day of the file judged against its seal, by vehicle and day."""
    results = []
    for key in parsed.keys():
        named = parsed.named.get(key)
        found = await versions(conn, key[0], key[1], named.version if named else None)
        results.append(v.judge(key, parsed.groups.get(key), named, found, ""))
    return results


async def verify(conn: Conn, data: bytes) -> dict[str, Any]:
    """The answer for a file's bytes (raises verify.NotAnExport when it is not a track export); the file is read
    off the event loop."""
    parsed = await asyncio.to_thread(v.parse, data)
    return v.report(await check(conn, parsed))
