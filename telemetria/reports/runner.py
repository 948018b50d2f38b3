"""Runs the pipeline over a window, one local day at a time: fetch with context, analyze off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import date, datetime, time, timedelta
from functools import lru_cache

from telemetria.db import Conn
from telemetria.geo.routeline import RouteLine
from telemetria.localtime import LOCAL_TZ
from telemetria.reports import engine, fetch
from telemetria.reports.context import Context, Route, Vehicle
from telemetria.reports.limits import SpeedZone
from telemetria.reports.params import ReportParams


@lru_cache(maxsize=256)
def _line(route_id: int, lon: tuple[float, ...], lat: tuple[float, ...]) -> RouteLine:
    return RouteLine.of(lon, lat)


def line(route: Route) -> RouteLine:
    """The route's line for linear referencing, built once per geometry."""
    return _line(route.id, tuple(route.lon), tuple(route.lat))


def day_bounds(day: date) -> tuple[datetime, datetime]:
    """The instants a local day (the service's zone) starts and ends."""
    start = datetime.combine(day, time(), LOCAL_TZ)
    return start, datetime.combine(day + timedelta(days=1), time(), LOCAL_TZ)


def split(start: datetime, end: datetime) -> list[tuple[date, datetime, datetime]]:
    """[start, end) cut at local midnights: (day, piece start, piece end)."""
    out = []
    day = start.astimezone(LOCAL_TZ).date()
    while True:
        d0, d1 = day_bounds(day)
        s, e = max(start, d0), min(end, d1)
        if s < e:
            out.append((day, s, e))
        if d1 >= end:
            return out
        day += timedelta(days=1)


def zones_of(ctx: Context) -> list[SpeedZone]:
    return [SpeedZone(z.limit_kmh, z.geometry, True, z.name) for z in ctx.zones]


async def analyze_piece(
    conn: Conn, vehicle: Vehicle, zones: Sequence[SpeedZone], day: date, start: datetime, end: datetime,
    params: ReportParams,
) -> engine.Analysis:  # fmt: skip
    """The analysis of one piece of one local day, with the routes assigned to the vehicle that day."""
    track = await fetch.track(conn, vehicle.id, start, end)
    routes = vehicle.routes_on(day)
    lines = [line(r) for r in routes]
    return await asyncio.to_thread(
        engine.analyze, track, vehicle, routes, lines, zones, start.timestamp(), end.timestamp(), params
    )


async def analyses(
    conn: Conn, ctx: Context, vehicle: Vehicle, start: datetime, end: datetime, params: ReportParams
) -> AsyncIterator[engine.Analysis]:
    """The vehicle's analyses over [start, end), one per local day, in time order."""
    zones = zones_of(ctx)
    for day, s, e in split(start, end):
        yield await analyze_piece(conn, vehicle, zones, day, s, e, params)
