"""Fixes out of the database: one vehicle's Track with context on both sides, and its analysis per piece of a window.

The analysis itself (reports/analysis/engine.py) is pure and runs off the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

import numpy as np

from telemetria.db import Conn
from telemetria.reports.analysis import engine
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


_IGN = {None: IGN_UNKNOWN, True: IGN_ON, False: IGN_OFF}


def to_track(records: Sequence[Mapping[str, Any]]) -> Track:
    """Rows of queries.TRACK (any order) → a Track sorted by fix time. The rows are turned into columns once
    (a live detector round converts thousands of them); NULL becomes NaN."""
    rows = sorted(records, key=lambda r: float(r["t"]))
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


async def analyze_piece(
    conn: Conn, vehicle: Vehicle, zones: Sequence[SpeedZone], day: date, start: datetime, end: datetime,
    params: ReportParams, network: int | None = None,
) -> engine.Analysis:  # fmt: skip
    """The analysis of one piece of one local day with the registry of that day: the route versions assigned to
    the vehicle, its speed limit and the speed zones (of `zones`, the versions) in force on `day`, and the road
    network in force then (`network`: Context.network_on(day); None: none)."""
    fixes = await track(conn, vehicle.id, start, end)
    routes = vehicle.routes_on(day)
    lines = [engine.line(r) for r in routes]
    roads = await inforce.roads(conn, network) if network is not None else None
    return await asyncio.to_thread(
        engine.analyze, fixes, vehicle.as_on(day), routes, lines, zones_on(zones, day), start.timestamp(),
        end.timestamp(), params, roads,
    )  # fmt: skip


async def analyses(
    conn: Conn, ctx: Context, vehicle: Vehicle, win: Window, params: ReportParams
) -> AsyncIterator[engine.Analysis]:
    """The vehicle's analyses over the window, one per piece of `split`, in time order."""
    zones = ctx.zones
    for day, s, e in split(win.start, win.end, win.tz):
        yield await analyze_piece(conn, vehicle, zones, day, s, e, params, ctx.network_on(day))
