"""`speeding`, `stops`, `trips` and `route-deviation`: the episodes of each vehicle, in time order.

An analysis gives each kind's rows in a neutral form (times as epoch seconds, no vehicle, no
driver), which a closed day's rollup keeps (`report_rollups.events`); a report presents them in
its zone, with the vehicle and the trips' drivers. Whole closed days with the default knobs are
read from their current rollups, anything else is analysed now: the same rows either way.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import date
from typing import Any

import numpy as np

from telemetria.db import Conn
from telemetria.reports import queries as q
from telemetria.reports.context import Context, Vehicle
from telemetria.reports.csvout import BOOL, COORD, DATETIME, HMS, INT, KM, KMH, PCT, TEXT, Column
from telemetria.reports.engine import Analysis
from telemetria.reports.output import VEHICLE, Report, local, words
from telemetria.reports.params import DEFAULT, ReportParams
from telemetria.reports.places import place
from telemetria.reports.request import Window
from telemetria.reports.runner import analyze_piece, day_bounds, split
from telemetria.reports.track import utc

Row = dict[str, Any]
Rows = Callable[[Analysis], list[Row]]
TIMES = ("start", "end")  # epoch seconds in neutral rows, aware datetimes in the report

SPAN = [Column("Início", "start", DATETIME), Column("Fim", "end", DATETIME), Column("Duração", "duration_s", HMS)]


def _span(start: float, end: float) -> Row:
    return {"start": start, "end": end, "duration_s": round(end - start)}


def _at(a: Analysis, i: int, prefix: str = "") -> dict[str, Any]:
    return {f"{prefix}lat": round(float(a.track.lat[i]), 6), f"{prefix}lon": round(float(a.track.lon[i]), 6)}


def _speeding(a: Analysis) -> list[Row]:
    return [
        {
            **_span(e.start, e.end),
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


SPEEDING_COLUMNS = [
    *VEHICLE, *SPAN,
    Column("Velocidade máxima (km/h)", "max_kmh", KMH),
    Column("Limite (km/h)", "limit_kmh", KMH),
    Column("Excesso (%)", "excess_pct", PCT),
    Column("Gravidade (CTB Art. 218)", words("tier")),
    Column("Posições acima do limite", "fixes", INT),
    Column("Latitude", "lat", COORD),
    Column("Longitude", "lon", COORD),
    Column("Local", "place", TEXT),
]  # fmt: skip


def _stops(a: Analysis) -> list[Row]:
    out = []
    for c in a.stops:
        s = c.stop
        point = c.point
        out.append(
            {
                **_span(s.start, s.end),
                "lat": round(s.lat, 6),
                "lon": round(s.lon, 6),
                "authorized": c.authorized,
                "point": point.name if point and c.authorized else None,
                "point_kind": point.kind if point and c.authorized else None,
                "nearest_point": point.name if point else None,
                "nearest_point_m": round(c.distance_m) if point else None,
                "ignition_off": s.ignition_off,
            }
        )
    return out


STOPS_COLUMNS = [
    *VEHICLE, *SPAN,
    Column("Latitude", "lat", COORD),
    Column("Longitude", "lon", COORD),
    Column("Ponto autorizado", "authorized", BOOL),
    Column("Ponto", "point", TEXT),
    Column("Tipo do ponto", words("point_kind")),
    Column("Ponto mais próximo", "nearest_point", TEXT),
    Column("Distância ao ponto (m)", "nearest_point_m", INT),
    Column("Ignição desligada", "ignition_off", BOOL),
]  # fmt: skip


def _trips(a: Analysis) -> list[Row]:
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
                **_at(a, x.last, "end_"),
                "end_place": place(a, x.last)["place"],
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


def _deviations(a: Analysis) -> list[Row]:
    out = []
    for d in a.deviations:
        left = d.left if d.left is not None else d.first
        back = d.rejoined if d.rejoined is not None else d.last
        route = a.routes[int(a.near[d.i_max])]
        out.append(
            {
                **_span(d.start, d.end),
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


DEVIATION_COLUMNS = [
    *VEHICLE, *SPAN,
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

KINDS: dict[str, tuple[str, Rows, list[Column]]] = {
    "speeding": ("episodes", _speeding, SPEEDING_COLUMNS),
    "stops": ("stops", _stops, STOPS_COLUMNS),
    "trips": ("trips", _trips, TRIPS_COLUMNS),
    "route-deviation": ("episodes", _deviations, DEVIATION_COLUMNS),
}


def neutral(a: Analysis) -> dict[str, list[Row]]:
    """Every kind's rows of one analysis, as a rollup keeps them."""
    return {kind: rows(a) for kind, (_, rows, _) in KINDS.items()}


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
            kept = KINDS[kind][1](await analyze_piece(conn, v, ctx.zones, day, s, e, params))
        out += kept
    return out


async def _present(conn: Conn, v: Vehicle, kind: str, rows: list[Row], win: Window) -> list[Row]:
    """Rows as the report shows them: the vehicle first, times in the report's zone, drivers of trips."""
    out = [{**v.label(), **row, **{k: local(row[k], win.tz) for k in TIMES}} for row in rows]
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
    key, _, columns = KINDS[kind]
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
    )
