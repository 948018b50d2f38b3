"""Verifying a read track export against the stored seals: each vehicle-day's versions fetched, then judged.

The file is read by seals/verify.py (pure); this module fetches, per vehicle-day of the file, the versions
needed (the one the file names, or every version when it names none) with their canonical lines
(seals/store.py rebuilds them from the fixes and the versions' changes), and hands them to `verify.judge`.
On the main database: rebuilding a version's lines may seal a change the refresher has not reached yet.

Only vehicles the caller's scope sees are looked up (a contractor's own; everyone's for the staff and the CLI):
a vehicle outside it, like an unknown one, is judged with no versions ("dia não selado"): no line of its seal,
no digest, nothing sealed, nothing read from its fixes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import date
from typing import Any

from telemetria.db import Conn
from telemetria.ids import MAX_ID
from telemetria.seals import sealer, store
from telemetria.seals import verify as v


async def versions(conn: Conn, vehicle_id: int, day: date, named: int | None) -> list[v.Version]:
    """Every stored version of a vehicle-day's seal with its lines, oldest first.

    The named version's lines are rebuilt first: that seals a change the refresher has not reached yet, so a file
    cut from fixes newer than their seal is told which version it matches. Lines are None when the day's fixes
    are no longer kept (retention): judged as nothing to compare with.
    """
    known = {named: await store.version_lines(conn, vehicle_id, day, named)} if named is not None else {}
    out = []
    for s in await store.seals(conn, None, vehicle_id, day, day):
        lines = known[s.version] if s.version in known else await store.version_lines(conn, vehicle_id, day, s.version)
        out.append(v.Version(s.version, s.fixes, s.sha256, lines))
    return out


async def gather(conn: Conn, keys: Sequence[tuple[int, date]], named: dict[tuple[int, date], v.Named],
                 scope: int | None) -> list[v.Looked]:  # fmt: skip
    """Every vehicle-day of a file looked up, by vehicle and day; `scope` is the caller's (Principal.scope: None
    sees every vehicle, a contractor id only that contractor's). Only database reads and the seals' lines: the
    file's rows are judged against them by `verify.judge_all`, in the service's worker process."""
    out = []
    for key in keys:
        vehicle_id, day = key
        # An id larger than the column's names no vehicle (and is not sent to the database); a contractor is told
        # of the days it had the vehicle on only (0028_scope_by_day.sql).
        seen = vehicle_id <= MAX_ID and await store.visible(conn, scope, vehicle_id, day)
        one = named.get(key)
        found = await versions(conn, vehicle_id, day, one.version if one else None) if seen else []
        # A day with no seal yet (today, or the sealer behind): its rows against the fixes stored now (issue 36:
        # "ainda não selado", not "não válido"), only for a vehicle the caller sees.
        current = await sealer.day_lines(conn, vehicle_id, day) if seen and not found else None
        out.append(v.Looked(key, found, current))
    return out


async def check(conn: Conn, parsed: v.Parsed, scope: int | None) -> list[v.DayResult]:
    """Every vehicle-day of the file judged against its seal, by vehicle and day, in this process (the CLI)."""
    return v.judge_all(parsed, await gather(conn, parsed.keys(), parsed.named, scope))


async def verify(conn: Conn, data: bytes, scope: int | None) -> dict[str, Any]:
    """The answer for a file's bytes, judged in the caller's scope (raises verify.NotAnExport when it is not a
    track export); the file is read off the event loop, within the CLI's bounds."""
    parsed = await asyncio.to_thread(v.parse, data)
    return v.report(await check(conn, parsed, scope))
