"""A report's window cut into local days: every derivation runs one piece of one day at a time (pure)."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

from telemetria.localtime import LOCAL_TZ
from telemetria.localtime import day_bounds as day_bounds  # where the reports have always taken it from


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
