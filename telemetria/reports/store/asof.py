"""The registry as it stood on a local day: the routes and assignments in force then (read-only).

The measurement asks "which vehicles were assigned route R on day D, and what was R that day"; the answers
come from here so that one module decides what "in force on a day" means.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from telemetria.db import Conn
from telemetria.reports.model import Route
from telemetria.reports.store import context
from telemetria.reports.store import queries as q


@dataclass(frozen=True, slots=True)
class AssignmentRow:
    """A vehicle assigned to a route from valid_from to valid_to (None: open) on ISO weekdays (1 = Monday)."""

    id: int
    route_id: int
    vehicle_id: int
    valid_from: date
    valid_to: date | None
    weekdays: frozenset[int]

    def on(self, day: date) -> bool:
        in_range = self.valid_from <= day and (self.valid_to is None or day <= self.valid_to)
        return in_range and day.isoweekday() in self.weekdays


async def routes_on(conn: Conn, route_ids: Sequence[int], day: date) -> dict[int, Route]:
    """The routes `route_ids` as they were on local date `day` (missing ids are left out)."""
    gen = await conn.fetchrow(q.GENERATION_OF_DB)
    return await context.routes(conn, (gen["db"], gen["n"]), set(route_ids))


async def assignments(conn: Conn, route_ids: Sequence[int], first: date, last: date) -> list[AssignmentRow]:
    """The assignments of the routes that touch local dates first..last, as they were on those days."""
    rows = await conn.fetch(q.ROUTE_ASSIGNMENTS, list(route_ids), first, last)
    return [
        AssignmentRow(r["id"], r["route_id"], r["vehicle_id"], r["valid_from"], r["valid_to"], frozenset(r["weekdays"]))
        for r in rows
    ]
