"""The occurrence candidates of the database's facts: a vehicle's window of fixes, and a day's contract runs.

Inputs come from the same places the reports and the measurement take them (reports/store/fetch.py for a
vehicle's track with context and its analysis per local day, reports/store/context.py and asof.py for the
registry as it stood that day, measurement/store.py for the boletim's lines); the rules that turn them into
candidates are pure (rules.py). Read-only: nothing here writes.
"""

from __future__ import annotations

from datetime import date, datetime

from telemetria.db import Conn
from telemetria.occurrences.model import Candidate
from telemetria.occurrences.params import DEFAULT, DetectParams


async def window_candidates(
    conn: Conn, vehicle_id: int, start: datetime, end: datetime, *, now: datetime, params: DetectParams = DEFAULT
) -> list[Candidate]:
    """Every candidate of kinds speeding, route_deviation, unauthorized_stop, schedule_delay, over_2h_on_board and
    tracker_silent of the vehicle whose START lies in [start, end) (aware instants), computed by fix time from its
    fixes with context and the registry as it stood on each local day the window touches.

    `now` (aware) is used only for what is still going on: a live silence (no fix for more than silent_s while
    `now` is inside a due run window: end=None) and episodes still open at the last fix. The same fixes in any
    arrival order give the same candidates, and a day computed whole or in pieces gives the same union. An
    unknown vehicle gives no candidates.
    """
    raise NotImplementedError


async def run_candidates(conn: Conn, day: date, *, now: datetime, params: DetectParams = DEFAULT) -> list[Candidate]:
    """The run_not_made and unauthorized_vehicle candidates of every contract on local date `day`, from the boletim's
    lines (measurement/store.py): only runs whose window ended before now - run_grace_s. Key "route:day:run_no".

    A contract whose school year is not registered, or that is not valid on `day`, gives none.
    """
    raise NotImplementedError
