"""What the `reporting` and `schedule` reports need of the runs due on a day (issue 36: one truth per fact), as a
protocol: the boletim's calendar and contracts live in packages above this one (contracts/, measurement/), so the
concrete source (occurrences/detection/duewindows.py) is handed in by the wiring (app.py, app.state.due_windows)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date
from typing import Protocol

from telemetria.db import Conn
from telemetria.reports.model import Route


class DueSource(Protocol):
    async def windows(self, conn: Conn, route: Route, day: date) -> list[tuple[float, float]]:
        """[start, end) (epoch s) of each run of `route` (as it was on `day`) due that day; [] when none."""
        ...


DueFactory = Callable[[], DueSource]
