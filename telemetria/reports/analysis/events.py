"""The rows of each event kind (speeding, stops, trips, route-deviation) of one analysis, in neutral form (pure).

Neutral: times as epoch seconds, no vehicle, no driver. A closed day's rollup keeps them
(`report_rollups.events`); reports/kinds/events.py presents them in the report's zone, with the
vehicle and the trips' drivers. The rollup also keeps, as kind `runs`, what the day shows of each run of
the vehicle's routes (runs.py), which the measurement reads (telemetria/measurement/observe.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from telemetria.reports.analysis import runs
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.places import place, road, road_near

Row = dict[str, Any]
Rows = Callable[[Analysis], list[Row]]


def _span(start: float, end: float) -> Row:
    return {"start": start, "end": end, "duration_s": round(end - start)}


BOUNDS = ("start_min", "start_max", "end_min", "end_max")


def _estimated(x: Any) -> Row:
    """An episode's or stop's span as estimated (start and end at the midpoints with the fixes around it, issue 34:
    episodes.py, stops.py) and the bounds of each (None: no fix bounds that side within gap_s)."""
    return _span(x.start, x.end) | {k: getattr(x, k) for k in BOUNDS}


def _at(a: Analysis, i: int, prefix: str = "") -> dict[str, Any]:
    return {f"{prefix}lat": round(float(a.track.lat[i]), 6), f"{prefix}lon": round(float(a.track.lon[i]), 6)}


def speeding(a: Analysis) -> list[Row]:
    return [
        {
            **_estimated(e),
            "max_kmh": round(e.max_kmh, 1),
            "limit_kmh": round(e.limit_kmh, 1),
            "excess_pct": round(e.excess_pct, 1),
            "tier": e.tier,
            "fixes": e.n_fixes,
            **_at(a, e.i_max),
            **place(a, e.i_max),
        }
        for e in a.speeding
    ]


def stops(a: Analysis) -> list[Row]:
    out = []
    for c in a.stops:
        s = c.stop
        point = c.point
        out.append(
            {
                **_estimated(s),
                "lat": round(s.lat, 6),
                "lon": round(s.lon, 6),
                "authorized": c.authorized,
                "point": point.name if point and c.authorized else None,
                "point_kind": point.kind if point and c.authorized else None,
                "nearest_point": point.name if point else None,
                "nearest_point_m": round(c.distance_m) if point else None,
                "ignition_off": s.ignition_off,
                "road": road_near(a, s.lat, s.lon),
            }
        )
    return out


def trips(a: Analysis) -> list[Row]:
    out = []
    kept = np.flatnonzero(a.keep)
    newest = int(kept[-1]) if len(kept) else -1
    for x in a.trips:
        km = a.km_between(x.first, x.last)
        span = slice(x.first + 1, x.last + 1)
        routes = {a.routes[r].code for r in a.seg.route[span].tolist() if r >= 0}
        speeding = any(x.first <= e.first <= x.last for e in a.speeding)
        deviation = any(x.first <= d.first <= x.last for d in a.deviations)
        out.append(
            {
                **_span(x.start, x.end),
                **_at(a, x.first, "start_"),
                "start_place": place(a, x.first)["place"],
                "start_road": road(a, x.first),
                **_at(a, x.last, "end_"),
                "end_place": place(a, x.last)["place"],
                "end_road": road(a, x.last),
                "km": round(km, 3),
                "avg_kmh": round(km / (x.moving_s / 3600), 1) if x.moving_s > 0 else None,
                "max_kmh": None if x.max_kmh != x.max_kmh else round(x.max_kmh, 1),
                "route": ", ".join(sorted(routes)) or None,
                "over_2h": x.over_2h,
                "deviation": deviation,
                "speeding": speeding,
                # Ends at the newest fix without reaching a stop: maybe still under way (see _in_progress).
                "_open": x.to_stop is None and x.last == newest,
            }
        )
    return out


def deviations(a: Analysis) -> list[Row]:
    out = []
    for d in a.deviations:
        left = d.left if d.left is not None else d.first
        back = d.rejoined if d.rejoined is not None else d.last
        route = a.routes[int(a.near[d.i_max])]
        out.append(
            {
                **_estimated(d),
                "route": route.code,
                "max_distance_m": round(d.max_distance_m),
                "km_off_route": round(a.km_between(left, back), 3),
                "fixes": d.n_fixes,
                **_at(a, left, "left_"),
                **_at(a, back, "rejoined_"),
                "rejoined": d.rejoined is not None,
                **_at(a, d.i_max, "far_"),
            }
        )
    return out


ROWS: dict[str, Rows] = {"speeding": speeding, "stops": stops, "trips": trips, "route-deviation": deviations}


RUNS = "runs"  # not an event report: the rows of runs.rows, one per run of each route of the day


def neutral(a: Analysis) -> dict[str, list[Row]]:
    """Every kind's rows of one analysis of one local day, and its runs, as a rollup keeps them."""
    return {kind: rows(a) for kind, rows in ROWS.items()} | {RUNS: runs.rows(a)}
