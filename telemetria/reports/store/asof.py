"""The registry as it stood on a local day: the routes and assignments in force then (read-only).

The measurement asks "which vehicles were assigned route R on day D, and what was R that day"; the answers
come from here so that one module decides what "in force on a day" means: the registry's versions
(migrations/0011_registry_versions.sql), not its current tables, so a later edit leaves past days as they were.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from telemetria.db import Conn
from telemetria.reports.model import Route, runs_on
from telemetria.reports.store import context
from telemetria.reports.store import queries as q


@dataclass(frozen=True, slots=True)
class AssignmentRow:
    """A vehicle assigned to a route from valid_from to valid_to (None: open) on ISO weekdays (1 = Monday).

    One row per version of the assignment, its period cut to the days that version is in force: an
    assignment changed from date X gives two rows with the same id, one deleted from X ends on X − 1.
    """

    id: int
    route_id: int
    vehicle_id: int
    valid_from: date
    valid_to: date | None
    weekdays: frozenset[int]

    def on(self, day: date) -> bool:
        return runs_on(self.valid_from, self.valid_to, self.weekdays, day)


async def routes_on(conn: Conn, route_ids: Sequence[int], day: date) -> dict[int, Route]:
    """The routes `route_ids` as they were on local date `day`: the version then in force (missing ids left out)."""
    db = await conn.fetchval("SELECT current_database()")
    dated = await context.route_versions(conn, db, set(route_ids), day, day)
    return {rid: versions[0][0] for rid, versions in dated.items() if versions}


async def assignments(conn: Conn, route_ids: Sequence[int], first: date, last: date) -> list[AssignmentRow]:
    """The assignments of the routes that touch local dates first..last, as they were on those days."""
    out = []
    for r in await conn.fetch(q.ROUTE_ASSIGNMENTS, list(route_ids), first, last):
        span = context.clip(r["valid_from"], r["valid_to"], r["lo"], r["hi"])
        if span is not None:
            out.append(AssignmentRow(r["id"], r["route_id"], r["vehicle_id"], *span, frozenset(r["weekdays"])))
    return out
