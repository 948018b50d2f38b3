"""Fixes out of the database: one vehicle's Track with context on both sides, and its analysis per piece of a window.

The analysis itself (reports/analysis/engine.py) is pure and runs off the event loop.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from telemetria.db import Conn
from telemetria.reports.analysis import engine, perfix
from telemetria.reports.analysis.days import split
from telemetria.reports.analysis.track import IGN_OFF, IGN_ON, IGN_UNKNOWN, FloatArray, Track
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Context, SpeedZone, Vehicle, Window, zones_on
from telemetria.reports.store import queries as q
from telemetria.roads import inforce

# Derivations at a window's edges look at fixes beyond it: distances and cleaning at a few fixes,
# stops and trips crossing the edge at up to this much. The same context is used whether a day is
# rolled up or computed live, so both give the same figures.
CONTEXT = timedelta(hours=2)
CONTEXT_FIXES = 1000
# Pieces read by one statement of `batched`: so many vehicle-days of span at most (a fleet's day live in a few
# statements, not one per vehicle; a batch holds at most this many vehicle-days of fixes in memory).
BATCH_VEHICLE_DAYS = 64


_IGN = {None: IGN_UNKNOWN, True: IGN_ON, False: IGN_OFF}


def _fix_time(row: Mapping[str, Any]) -> float:
    return float(row["t"])


def to_track(records: Sequence[Mapping[str, Any]], ordered: bool = False) -> Track:
    """Rows of queries.TRACK (any order; `ordered`: already by fix time) → a Track sorted by fix time. The rows
    are turned into columns once (a live detector round converts thousands of them); NULL becomes NaN."""
    rows = records if ordered else sorted(records, key=_fix_time)
    if not rows:
        return Track.of([])
    cols = dict(zip(rows[0].keys(), zip(*(r.values() for r in rows), strict=True), strict=True))

    def floats(key: str) -> FloatArray:
        return np.array(cols[key], dtype=float)  # None → NaN

    return Track(
        t=floats("t"),
        lat=floats("lat"),
        lon=floats("lon"),
        speed_kmh=floats("speed_kmh"),
        heading_deg=floats("heading_deg"),
        accuracy_m=floats("accuracy_m"),
        ignition=np.array([_IGN[x] for x in cols["ignition"]], dtype=np.int8),
        odometer_m=floats("odometer_m"),
        valid=np.array(cols["valid"], dtype=np.bool_),
        received=floats("received"),
    )


async def track(conn: Conn, vehicle_id: int, start: datetime, end: datetime) -> Track:
    """The vehicle's fixes in [start, end) plus context fixes within CONTEXT on each side."""
    rows = await conn.fetch(q.TRACK, vehicle_id, start, end, CONTEXT, CONTEXT_FIXES)
    return to_track(rows)


async def tracks(conn: Conn, pieces: Sequence[tuple[int, datetime, datetime]]) -> dict[tuple[int, datetime], Track]:
    """(vehicle, start) → what `track(conn, vehicle, start, end)` gives, for every (vehicle, start, end) of `pieces`
    (one piece per vehicle and start), read in one statement over their whole span: the same fixes in [start, end)
    and the same context (at most CONTEXT_FIXES within CONTEXT on each side)."""
    if not pieces:
        return {}
    lo = min(s for _, s, _ in pieces) - CONTEXT
    hi = max(e for _, _, e in pieces) + CONTEXT
    rows = await conn.fetch(q.FIXES_OF, sorted({v for v, _, _ in pieces}), lo, hi)
    by_vehicle: dict[int, list[Any]] = {}
    for r in rows:
        by_vehicle.setdefault(r["vehicle_id"], []).append(r)
    for found in by_vehicle.values():
        found.sort(key=_fix_time)  # once per vehicle, however many pieces it has
    out = {}
    for v, start, end in pieces:
        mine = by_vehicle.get(v, [])
        t = np.array([r["t"] for r in mine], dtype=float)
        s, e = start.timestamp(), end.timestamp()
        i, j = int(np.searchsorted(t, s)), int(np.searchsorted(t, e))
        before = max(i - CONTEXT_FIXES, int(np.searchsorted(t, s - CONTEXT.total_seconds())))
        after = min(j + CONTEXT_FIXES, int(np.searchsorted(t, e + CONTEXT.total_seconds())))
        out[(v, start)] = to_track(mine[before:after], ordered=True)
    return out


def _batches(counts: Sequence[tuple[Any, int]], statement_fixes: int, most_fixes: int) -> list[list[Any]]:
    """`counts` (item, its fixes) cut into statements of about `statement_fixes` fixes at most (an item with more
    alone), in order, none started once `most_fixes` fixes were taken (pure)."""
    out: list[list[Any]] = []
    batch: list[Any] = []
    held = size = 0
    for item, n in counts:
        if batch and size + n > statement_fixes:
            out.append(batch)
            held, batch, size = held + size, [], 0
        if held >= most_fixes:
            return out
        batch.append(item)
        size += n
    if batch:
        out.append(batch)
    return out


async def bounded(
    conn: Conn, pieces: Sequence[tuple[int, datetime, datetime]], statement_fixes: int, most_fixes: int
) -> dict[tuple[int, datetime], Track]:
    """What `tracks` gives for `pieces`, read a few vehicles at a time, at most about `statement_fixes` fixes a
    statement (a vehicle with more is read alone), and no more statements once `most_fixes` fixes were read: the
    pieces left out are not in the answer (their reader reads them itself). A day's fixes are not bounded (a
    tracker may report every second, a backfill may bring months), so neither is what one statement of `tracks`
    over many vehicles holds: counted first, it is."""
    if not pieces or most_fixes <= 0:
        return {}
    lo = min(s for _, s, _ in pieces) - CONTEXT
    hi = max(e for _, _, e in pieces) + CONTEXT
    count = {r["vehicle_id"]: r["n"] for r in await conn.fetch(q.FIX_COUNTS, sorted({v for v, _, _ in pieces}), lo, hi)}
    out: dict[tuple[int, datetime], Track] = {}
    for batch in _batches([(p, count.get(p[0], 0)) for p in pieces], statement_fixes, most_fixes):
        out |= await tracks(conn, batch)
    return out


async def batched(
    conn: Conn, pieces: Sequence[tuple[int, datetime, datetime]]
) -> AsyncIterator[dict[tuple[int, datetime], Track]]:
    """What `tracks` gives for `pieces`, read in batches of at most BATCH_VEHICLE_DAYS vehicle-days (distinct
    vehicles × days spanned), one batch at a time: the per-statement cost of `track`, paid once per vehicle and
    day, is what made a report of many vehicle-days slow before it read a fix (issue 37); the batch bounds the
    fixes held in memory at once."""
    batch: list[tuple[int, datetime, datetime]] = []
    lo = hi = None
    vehicles: set[int] = set()
    for piece in sorted(pieces, key=lambda p: (p[1], p[0])):
        v, s, e = piece
        if batch and lo is not None and hi is not None:
            span = (max(hi, e) - min(lo, s)) / _DAY
            if math.ceil(span) * len(vehicles | {v}) > BATCH_VEHICLE_DAYS:
                yield await tracks(conn, batch)
                batch, lo, hi, vehicles = [], None, None, set()
        batch.append(piece)
        vehicles.add(v)
        lo, hi = (s, e) if lo is None or hi is None else (min(lo, s), max(hi, e))
    if batch:
        yield await tracks(conn, batch)


_DAY = timedelta(days=1)


async def tracks_since(conn: Conn, since: Mapping[int, datetime], until: datetime) -> dict[int, Track]:
    """vehicle → its fixes in [since[vehicle], until), no context, one statement for all."""
    if not since:
        return {}
    rows = await conn.fetch(q.FIXES_SINCE, list(since), list(since.values()), until)
    by_vehicle: dict[int, list[Any]] = {v: [] for v in since}
    for r in rows:
        by_vehicle[r["vehicle_id"]].append(r)
    return {v: to_track(found) for v, found in by_vehicle.items()}


async def since_bounded(
    conn: Conn, since: Mapping[int, datetime], until: datetime, statement_fixes: int, most_fixes: int
) -> dict[int, Track]:
    """What `tracks_since` gives, bounded as `bounded` reads: counted first, about `statement_fixes` fixes a
    statement, none after `most_fixes`; the vehicles left out are not in the answer. (A busy round's worth of a
    fleet's fixes in one statement held them all as rows: bench.soak, 1 ms between a tracker's fixes.)"""
    if not since or most_fixes <= 0:
        return {}
    rows = await conn.fetch(q.FIX_COUNTS_SINCE, list(since), list(since.values()), until)
    counts = [(r["vehicle_id"], r["n"]) for r in rows]
    out: dict[int, Track] = {}
    for batch in _batches(counts, statement_fixes, most_fixes):
        out |= await tracks_since(conn, {v: since[v] for v in batch}, until)
    return out


Args = tuple[Any, ...]  # engine.analyze's arguments for one piece


async def piece_args(
    conn: Conn, vehicle: Vehicle, zones: Sequence[SpeedZone], day: date, start: datetime, end: datetime,
    params: ReportParams, network: int | None = None, fixes: Track | None = None, prior: perfix.Prior | None = None,
) -> Args:  # fmt: skip
    """What engine.analyze needs for one piece of one local day (see analyze_piece), read from the database."""
    if not vehicle.in_scope(day):  # a day another contractor had the vehicle: nothing of it for this reader
        fixes = Track.of([])
    elif fixes is None:
        fixes = await track(conn, vehicle.id, start, end)
    routes = vehicle.routes_on(day)
    lines = [engine.line(r) for r in routes]
    roads = await inforce.roads(conn, network) if network is not None else None
    as_on, zones = vehicle.as_on(day), zones_on(zones, day)
    per_fix = None
    if prior is not None and prior.roads is roads:
        per_fix = perfix.compute_after(prior.values, prior.changed, fixes, as_on, routes, lines, zones, params, roads)
    return (fixes, as_on, routes, lines, zones, start.timestamp(), end.timestamp(), params, roads, per_fix)


def analyze_all(pieces: Sequence[Args]) -> list[engine.Analysis]:
    """engine.analyze of each piece's arguments: many pieces in one call to a thread (one hop off the event loop
    per batch, not per vehicle-day: under load each hop waits for the CPU, issue 37)."""
    return [engine.analyze(*args) for args in pieces]


async def analyze_piece(
    conn: Conn, vehicle: Vehicle, zones: Sequence[SpeedZone], day: date, start: datetime, end: datetime,
    params: ReportParams, network: int | None = None, fixes: Track | None = None, inline: bool = False,
    prior: perfix.Prior | None = None,
) -> engine.Analysis:  # fmt: skip
    """The analysis of one piece of one local day with the registry of that day: the route versions assigned to
    the vehicle, its speed limit and the speed zones (of `zones`, the versions) in force on `day`, and the road
    network in force then (`network`: Context.network_on(day); None: none).

    `fixes`: the piece's track as `track` gives it, already read (None: read here). The analysis runs in a thread
    off the event loop, or `inline` in a process that has nothing else to do meanwhile (the detector's).
    `prior`: the per-fix values of a shorter version of `fixes` with the same registry (perfix.compute_after),
    used when measured on the same road network."""
    args = await piece_args(conn, vehicle, zones, day, start, end, params, network, fixes, prior)
    return engine.analyze(*args) if inline else await asyncio.to_thread(engine.analyze, *args)


async def analyses(
    conn: Conn, ctx: Context, vehicle: Vehicle, win: Window, params: ReportParams
) -> AsyncIterator[engine.Analysis]:
    """The vehicle's analyses over the window, one per piece of `split`, in time order."""
    zones = ctx.zones
    for day, s, e in split(win.start, win.end, win.tz):
        yield await analyze_piece(conn, vehicle, zones, day, s, e, params, ctx.network_on(day))
