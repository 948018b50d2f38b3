"""`speeding`, `stops`, `trips` and `route-deviation`: the episodes of each vehicle, in time order.

An analysis gives each kind's rows in a neutral form (reports/analysis/events.py: times as epoch
seconds, no vehicle, no driver), which a closed day's rollup keeps (`report_rollups.events`); a
report presents them in its zone, with the vehicle and the trips' drivers. Whole closed days
with the default knobs are read from their current rollups, anything else is analysed now: the
same rows either way.
"""

from __future__ import annotations

import time
from collections import Counter
from datetime import date
from typing import Any

from telemetria.db import Conn
from telemetria.reports.analysis.days import day_bounds, split
from telemetria.reports.analysis.events import BOUNDS, ROWS, Row
from telemetria.reports.analysis.track import utc
from telemetria.reports.knobs import DEFAULT, ReportParams
from telemetria.reports.model import Context, Vehicle, Window
from telemetria.reports.output import gis as gf
from telemetria.reports.output.csv import BETWEEN, BOOL, COORD, DATETIME, HMS, INT, KM, KMH, PCT, TEXT, Column
from telemetria.reports.output.document import Drawing
from telemetria.reports.output.report import VEHICLE, Report, local, words
from telemetria.reports.store import queries as q
from telemetria.reports.store.fetch import analyze_piece

TIMES = ("start", "end")  # epoch seconds in neutral rows, aware datetimes in the report
# The bounds of speeding's, stops' and deviations' start and end (issue 34: analysis/events.py), likewise; a row of a
# rollup stored before them has none, and shows them as None.
BOUNDED = ("speeding", "stops", "route-deviation")

SPAN = [Column("Início", "start", DATETIME), Column("Fim", "end", DATETIME), Column("Duração", "duration_s", HMS)]


def _between(lo: str, hi: str) -> Any:
    return lambda row: None if row.get(lo) is None and row.get(hi) is None else (row.get(lo), row.get(hi))


# An episode's or stop's start and end are estimates (the midpoints with the fixes around it, issue 34): the files
# show between which instants each lies, after the estimated duration.
ESTIMATED_SPAN = [
    *SPAN,
    Column("Início entre", _between("start_min", "start_max"), BETWEEN),
    Column("Fim entre", _between("end_min", "end_max"), BETWEEN),
]


SPEEDING_COLUMNS = [
    *VEHICLE, *ESTIMATED_SPAN,
    Column("Velocidade máxima (km/h)", "max_kmh", KMH),
    Column("Limite (km/h)", "limit_kmh", KMH),
    Column("Excesso (%)", "excess_pct", PCT),
    Column("Gravidade CTB, Art. 218", words("tier")),  # not the occurrence's severity (Lei 3.588/2023, Art. 37)
    Column("Posições acima do limite", "fixes", INT),
    Column("Latitude", "lat", COORD),
    Column("Longitude", "lon", COORD),
    Column("Local", "place", TEXT),
]  # fmt: skip


STOPS_COLUMNS = [
    *VEHICLE, *ESTIMATED_SPAN,
    Column("Latitude", "lat", COORD),
    Column("Longitude", "lon", COORD),
    Column("Ponto autorizado", "authorized", BOOL),
    Column("Ponto", "point", TEXT),
    Column("Tipo do ponto", words("point_kind")),
    Column("Ponto mais próximo", "nearest_point", TEXT),
    Column("Distância ao ponto (m)", "nearest_point_m", INT),
    Column("Ignição desligada", "ignition_off", BOOL),
]  # fmt: skip


IN_PROGRESS_S = 600.0  # a trip whose newest fix is older than this is no longer shown as under way


def _in_progress(rows: list[Row], win: Window, now: float) -> list[Row]:
    """Trips with `in_progress`: the vehicle's last trip, when the period reaches now, it ended at the newest fix
    without reaching a stop, and that fix is at most IN_PROGRESS_S old (the vehicle is still on its way)."""
    out = [{k: v for k, v in r.items() if k != "_open"} | {"in_progress": False} for r in rows]
    if rows and rows[-1].get("_open") and win.end.timestamp() > now and now - rows[-1]["end"] <= IN_PROGRESS_S:
        out[-1]["in_progress"] = True
    return out


TRIPS_COLUMNS = [
    *VEHICLE, *SPAN,
    Column("Latitude inicial", "start_lat", COORD),
    Column("Longitude inicial", "start_lon", COORD),
    Column("Local inicial", "start_place", TEXT),
    Column("Latitude final", "end_lat", COORD),
    Column("Longitude final", "end_lon", COORD),
    Column("Local final", "end_place", TEXT),
    Column("Km", "km", KM),
    Column("Velocidade média (km/h)", "avg_kmh", KMH),
    Column("Velocidade máxima (km/h)", "max_kmh", KMH),
    Column("Condutor", "driver", TEXT),
    Column("Rota", "route", TEXT),
    Column("Mais de 2 h a bordo (Art. 9 §1)", "over_2h", BOOL),
    Column("Desvio de rota", "deviation", BOOL),
    Column("Excesso de velocidade", "speeding", BOOL),
    Column("Em andamento", "in_progress", BOOL),
]  # fmt: skip


DEVIATION_COLUMNS = [
    *VEHICLE, *ESTIMATED_SPAN,
    Column("Rota", "route", TEXT),
    Column("Distância máxima da rota (m)", "max_distance_m", INT),
    Column("Km fora da rota", "km_off_route", KM),
    Column("Posições fora da rota", "fixes", INT),
    Column("Latitude de saída", "left_lat", COORD),
    Column("Longitude de saída", "left_lon", COORD),
    Column("Latitude de retorno", "rejoined_lat", COORD),
    Column("Longitude de retorno", "rejoined_lon", COORD),
    Column("Retornou à rota", "rejoined", BOOL),
]  # fmt: skip

# Each kind: the key of its rows in the JSON, and its CSV columns (its rows: analysis.events.ROWS).
KINDS: dict[str, tuple[str, list[Column]]] = {
    "speeding": ("episodes", SPEEDING_COLUMNS),
    "stops": ("stops", STOPS_COLUMNS),
    "trips": ("trips", TRIPS_COLUMNS),
    "route-deviation": ("episodes", DEVIATION_COLUMNS),
}


async def _neutral_rows(
    conn: Conn, ctx: Context, v: Vehicle, win: Window, params: ReportParams, kind: str,
    stored: dict[tuple[int, date], list[Row]], sources: Counter[str],
) -> list[Row]:  # fmt: skip
    """The vehicle's rows over the window: a whole closed day's from its rollup, the rest analysed now."""
    out: list[Row] = []
    for day, s, e in split(win.start, win.end, win.tz):
        kept = stored.get((v.id, day)) if (s, e) == day_bounds(day) else None
        sources["from_rollups" if kept is not None else "computed_live"] += 1
        if kept is None:
            kept = ROWS[kind](await analyze_piece(conn, v, ctx.zones, day, s, e, params, ctx.network_on(day)))
        out += kept
    return out


async def _present(conn: Conn, v: Vehicle, kind: str, rows: list[Row], win: Window) -> list[Row]:
    """Rows as the report shows them: the vehicle first, times in the report's zone, drivers of trips."""
    out = [{**v.label(), **row, **{k: local(row[k], win.tz) for k in TIMES}} for row in rows]
    if kind in BOUNDED:
        out = [shown | {k: local(row.get(k), win.tz) for k in BOUNDS} for shown, row in zip(out, rows, strict=True)]
    if kind == "trips" and rows:
        found = await conn.fetch(q.DRIVERS_AT, v.id, [utc(r["start"]) for r in rows])
        for shown, driver in zip(out, found, strict=True):
            shown["driver"] = driver["name"]
    return out


async def report(
    kind: str, conn: Conn, ctx: Context, win: Window, params: ReportParams, unauthorized_only: bool = False,
    now: float | None = None,
) -> Report:  # fmt: skip
    """The episodes of `kind` for every vehicle of the context (computed now: the rows are a list)."""
    now = time.time() if now is None else now
    key, columns = KINDS[kind]
    stored: dict[tuple[int, date], list[Row]] = {}
    if params == DEFAULT and ctx.vehicles:
        days = win.local_days()
        found = await conn.fetch(q.ROLLUP_EVENTS, [v.id for v in ctx.vehicles], days[0], days[-1], kind)
        stored = {(r["vehicle_id"], r["day"]): r["rows"] for r in found if ctx.holds(r)}
    items: list[Row] = []
    sources: Counter[str] = Counter(from_rollups=0, computed_live=0)
    for v in ctx.vehicles:
        rows = await _neutral_rows(conn, ctx, v, win, params, kind, stored, sources)
        if unauthorized_only:
            rows = [r for r in rows if not r["authorized"]]
        if kind == "trips":
            rows = _in_progress(rows, win, now)
        items += await _present(conn, v, kind, rows, win)
    header: dict[str, Any] = {"unauthorized_only": True} if unauthorized_only else {}
    return Report(
        kind.replace("-", "_"),
        win,
        key,
        items,
        columns,
        header,
        lambda: {"count": len(items), "vehicle_days": dict(sources)},
        drawing=drawing(kind, ctx, items, win) if kind in MAPPED else None,
    )


# The PDF's map of a kind: where each episode starts and ends ((lat, lon) keys, the place's kind), and the routes.
MAPPED = {
    "trips": (("start_lat", "start_lon", "start"), ("end_lat", "end_lon", "end")),
    "route-deviation": (("left_lat", "left_lon", "left"), ("rejoined_lat", "rejoined_lon", "rejoined")),
}


def drawing(kind: str, ctx: Context, items: list[Row], win: Window) -> Drawing:
    """The PDF's map: the route lines of the vehicles' assignments, and each episode's ends as points."""

    async def draw() -> tuple[list[gf.Segment], list[gf.Place]]:
        routes = {a.route.id: a.route for v in ctx.vehicles for a in v.assignments}
        lines = [
            gf.Segment(f"rota {r.code}", [gf.Position(win.start, a, o) for a, o in zip(r.lat, r.lon, strict=True)])
            for r in routes.values()
        ]
        places = [
            gf.Place(f"{row['plate']} {row['start']:%d/%m %H:%M}", mark, row[lat], row[lon], row["start"])
            for row in items
            for lat, lon, mark in MAPPED[kind]
            if row.get(lat) is not None and row.get(lon) is not None
        ]
        return lines, places

    return draw
