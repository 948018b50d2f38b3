"""Observations of many (run, vehicle) pairs at once, for a whole boletim: no round trip per run or per day.

observe.observations answers plans × vehicles, day by day; a boletim asks for each run only its own vehicles.
Here the registry is loaded once for the period and the rollups of every vehicle and day in one query; a pair
whose vehicle was assigned the run's route that day and whose current rollup holds the planned run is answered
from it (observe.from_row, as observe.py itself does). Only the rest (a day not rolled up yet, a substitute
candidate) go through observe.observations, grouped by their set of vehicles, so the answer is the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement import observe
from telemetria.measurement.boletim import ObsKey
from telemetria.measurement.model import Observation, RunPlan
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.events import RUNS
from telemetria.reports.model import Selection, Window
from telemetria.reports.store import queries as q
from telemetria.reports.store.context import load

Pair = tuple[RunPlan, int]  # a run and a vehicle to observe on it


def _is_plan(row: Mapping[str, Any], p: RunPlan) -> bool:
    """Whether a stored run row is the run the plan describes (same route version gives the same numbers)."""
    return (row["route_id"], row["run_no"], row["start"], row["end"], row["m_from"], row["m_to"]) == (
        p.route_id, p.run_no, p.start, p.end, p.m_from, p.m_to,
    )  # fmt: skip


async def _rolled(conn: Conn, pairs: Sequence[Pair]) -> tuple[dict[ObsKey, Observation], list[Pair]]:
    """The pairs the current rollups answer, and the others."""
    first, last = min(p.day for p, _ in pairs), max(p.day for p, _ in pairs)
    vehicle_ids = sorted({v for _, v in pairs})
    ctx = await load(conn, None, Selection(vehicle_ids, None, None),
                     Window(day_bounds(first)[0], day_bounds(last)[1], LOCAL_TZ))  # fmt: skip
    stored = {
        (r["vehicle_id"], r["day"]): r["rows"]
        for r in await conn.fetch(q.ROLLUP_EVENTS, vehicle_ids, first, last, RUNS)
        if r["rows"] is not None and ctx.holds(r)
    }
    found: dict[ObsKey, Observation] = {}
    rest: list[Pair] = []
    for p, vid in pairs:
        v = ctx.vehicle(vid)
        rows = stored.get((vid, p.day))
        row = None
        if v is not None and rows and p.route_id in {r.id for r in v.routes_on(p.day)}:
            row = next((r for r in rows if _is_plan(r, p)), None)
        if row is None:
            rest.append((p, vid))
        else:
            found[(p.route_id, p.day, p.run_no, vid)] = observe.from_row(p, vid, row)
    return found, rest


async def observations(conn: Conn, pairs: Sequence[Pair]) -> dict[ObsKey, Observation]:
    """(route_id, day, run_no, vehicle_id) → what the vehicle's fixes show of that run, for every pair given."""
    if not pairs:
        return {}
    found, rest = await _rolled(conn, pairs)
    groups: dict[tuple[int, ...], list[RunPlan]] = {}
    by_plan: dict[RunPlan, list[int]] = {}
    for p, vid in rest:
        by_plan.setdefault(p, []).append(vid)
    for p, vs in by_plan.items():
        groups.setdefault(tuple(sorted(set(vs))), []).append(p)
    for vehicle_ids, plans in groups.items():
        for o in await observe.observations(conn, plans, list(vehicle_ids)):
            found[(o.route_id, o.day, o.run_no, o.vehicle_id)] = o
    return found
