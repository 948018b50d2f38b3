"""What each vehicle's fixes show of planned runs: from the day's rollup when it is current, else from the fixes.

A vehicle assigned the run's route that day has the run in its day's rollup (kind `runs` of
report_rollups.events, written by the refresher's pipeline: reports/analysis/events.py), used while the
rollup is current (the day closed, no stale mark, its basis holds) and the stored run is the one planned
(same window and stretch). Anything else is computed now, by fix time, from the vehicle's track of the
local day with context (reports/store/fetch.py) analysed as the refresher does: with the routes assigned
that day, and, for a route the vehicle was not assigned (a substitution candidate), with that route added to
them, one analysis per such route. So the answer is the same from the rollup as computed live, and does not
depend on the order the fixes arrived in nor on which other plans are asked for together.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement.coverage import observe
from telemetria.measurement.model import Observation, RunPlan
from telemetria.reports.analysis import engine
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.events import RUNS
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Context, Route, Selection, Vehicle, Window
from telemetria.reports.store import asof, fetch
from telemetria.reports.store import queries as q
from telemetria.reports.store.context import load

Key = tuple[int, int, int]  # (route_id, vehicle_id, run_no) within a day


def _matches(row: Mapping[str, Any], plan: RunPlan) -> bool:
    """Whether a stored run row is the run the plan describes (same route version gives the same numbers)."""
    return (row["route_id"], row["run_no"], row["start"], row["end"], row["m_from"], row["m_to"]) == (
        plan.route_id, plan.run_no, plan.start, plan.end, plan.m_from, plan.m_to,
    )  # fmt: skip


def from_row(plan: RunPlan, vehicle_id: int, row: Mapping[str, Any]) -> Observation:
    """The Observation a stored run row gives."""
    return Observation(
        plan.route_id, plan.day, plan.run_no, vehicle_id, float(row["coverage"]), float(row["route_km"]),
        float(row["off_route_km"]), row["first"], row["last"],
    )  # fmt: skip


async def _stored(conn: Conn, ctx: Context, vehicle_ids: Sequence[int], day: date) -> dict[int, list[Any]]:
    """The run rows of the vehicles' current rollups of `day` (vehicles without one are left out)."""
    found = await conn.fetch(q.ROLLUP_EVENTS, list(vehicle_ids), day, day, RUNS)
    return {r["vehicle_id"]: r["rows"] for r in found if r["rows"] is not None and ctx.holds(r)}


async def _analysis(ctx: Context, v: Vehicle, track: Track, routes: list[Route], day: date) -> Analysis:
    d0, d1 = (b.timestamp() for b in day_bounds(day))
    lines = [engine.line(r) for r in routes]
    return await asyncio.to_thread(engine.analyze, track, v, routes, lines, ctx.zones, d0, d1, DEFAULT)


async def _day(conn: Conn, plans: Sequence[RunPlan], vehicle_ids: Sequence[int], day: date) -> dict[Key, Observation]:
    d0, d1 = day_bounds(day)
    ctx = await load(conn, None, Selection(list(vehicle_ids), None, None), Window(d0, d1, LOCAL_TZ))
    stored = await _stored(conn, ctx, vehicle_ids, day)
    others = await asof.routes_on(conn, sorted({p.route_id for p in plans}), day)
    out: dict[Key, Observation] = {}
    for vid in dict.fromkeys(vehicle_ids):
        v = ctx.vehicle(vid)
        assert v is not None  # load raised NotFound otherwise
        mine = v.routes_on(day)
        assigned = {r.id for r in mine}
        rows = stored.get(vid, [])
        live: dict[int | None, list[RunPlan]] = defaultdict(list)  # None: the assigned routes' analysis
        for p in plans:
            if p.route_id in assigned:
                row = next((r for r in rows if _matches(r, p)), None)
                if row is not None:
                    out[(p.route_id, vid, p.run_no)] = from_row(p, vid, row)
                else:
                    live[None].append(p)
            elif p.route_id in others:
                live[p.route_id].append(p)
            else:  # a route that did not exist that day: nothing can have covered it
                out[(p.route_id, vid, p.run_no)] = Observation(
                    p.route_id, day, p.run_no, vid, 0.0, 0.0, 0.0, None, None
                )
        if not live:
            continue
        track = await fetch.track(conn, vid, d0, d1)
        for extra, todo in live.items():
            routes = mine if extra is None else [*mine, others[extra]]
            a = await _analysis(ctx, v, track, routes, day)
            out |= {(o.route_id, vid, o.run_no): o for o in observe(a, todo)}
    return out


async def observations(conn: Conn, plans: Sequence[RunPlan], vehicle_ids: Sequence[int]) -> list[Observation]:
    """One Observation per (plan, vehicle), plans in the order given and vehicles in theirs within each.

    A vehicle id that does not exist is a NotFound naming `vehicle_id`. A vehicle with no fix in a run's window
    has coverage 0 there.
    """
    by_day: dict[date, list[RunPlan]] = defaultdict(list)
    for p in plans:
        by_day[p.day].append(p)
    found: dict[tuple[date, int, int, int], Observation] = {}
    for day, todo in sorted(by_day.items()):
        found |= {(day, *k): o for k, o in (await _day(conn, todo, vehicle_ids, day)).items()}
    return [found[(p.day, p.route_id, vid, p.run_no)] for p in plans for vid in vehicle_ids]
