"""The windows of the runs a route was due to make on a local day, as the boletim counts them (issue 36: one
truth per fact across pages): a school day of the calendar (without a school year registered: a weekday), inside
the route's contract validity, without the runs of a shift that had no school, each window moved as a schedule
change moved it (contracts/calendar.py, measurement/schoolday.py). The `schedule` report lists only these runs;
the `reporting` report and the day panel count their windows as time in service (a tracker silent while due
reads 0 %, Art. 15 §2).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal

from telemetria.contracts import store as calendar_store
from telemetria.contracts.calendar import ScheduleChange, Shift, schedule_changes, shifts_off
from telemetria.db import Conn
from telemetria.measurement import plans, schoolday
from telemetria.measurement.due import DueRun
from telemetria.occurrences.detection.chunkread import Days
from telemetria.reports.analysis import engine
from telemetria.reports.model import Route

ZERO = Decimal(0)


class DueWindows:
    """Which runs of a route were due on a day, and their windows; the calendar read once per year."""

    def __init__(self) -> None:
        self._days = Days()
        self._years: dict[int, tuple[dict[date, frozenset[Shift]], dict[tuple[date, Shift], ScheduleChange]]] = {}

    async def _year(
        self, conn: Conn, year: int
    ) -> tuple[dict[date, frozenset[Shift]], dict[tuple[date, Shift], ScheduleChange]]:
        if year not in self._years:
            sy = await calendar_store.school_year(conn, year)
            self._years[year] = (shifts_off(sy), schedule_changes(sy)) if sy is not None else ({}, {})
        return self._years[year]

    async def windows(self, conn: Conn, route: Route, day: date) -> list[tuple[float, float]]:
        """[start, end) (epoch s) of each run of `route` (as it was on `day`) due that day; [] when none."""
        if not await self._days.due(conn, route, day):
            return []
        off, changes = await self._year(conn, day.year)
        runs = [DueRun(p, route.code, ZERO, (), ZERO) for p in plans.plan_runs(route, engine.line(route), day)]
        return [(r.plan.start, r.plan.end) for r in schoolday.follow(runs, off, changes)]
