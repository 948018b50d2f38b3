"""Runs the pipeline over a window, one local day at a time: fetch with context, analyze off the event loop."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from datetime import date, datetime, time, timedelta
from functools import lru_cache
from itertools import pairwise
from zoneinfo import ZoneInfo

from telemetria.db import Conn
from telemetria.geo.routeline import RouteLine
from telemetria.localtime import LOCAL_TZ
from telemetria.reports import engine, fetch
from telemetria.reports.context import Context, Route, Vehicle
from telemetria.reports.limits import SpeedZone
from telemetria.reports.params import ReportParams
from telemetria.reports.request import Window


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


def _midnights(start: datetime, end: datetime, tz: ZoneInfo) -> list[datetime]:
    """The midnights of zone `tz` strictly inside (start, end)."""
    out = []
    day = start.astimezone(tz).date() + timedelta(days=1)
    while (m := datetime.combine(day, time(), tz)) < end:
        out.append(m)
        day += timedelta(days=1)
    return out


def split(start: datetime, end: datetime, tz: ZoneInfo = LOCAL_TZ) -> list[tuple[date, datetime, datetime]]:
    """[start, end) cut at the service's local midnights and at those of the report's zone `tz`.

    Each piece lies in one local day (the day's route assignments apply to it) and in one day of the
    report's zone (rows per day are days people asked for): (local day, piece start, piece end).
    """
    cuts = sorted({start, end, *_midnights(start, end, LOCAL_TZ), *_midnights(start, end, tz)})
    return [(a.astimezone(LOCAL_TZ).date(), a, b) for a, b in pairwise(cuts)]


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
    conn: Conn, ctx: Context, vehicle: Vehicle, win: Window, params: ReportParams
) -> AsyncIterator[engine.Analysis]:
    """The vehicle's analyses over the window, one per piece of `split`, in time order."""
    zones = ctx.zones
    for day, s, e in split(win.start, win.end, win.tz):
        yield await analyze_piece(conn, vehicle, zones, day, s, e, params)
