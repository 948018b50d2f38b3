"""`speeding`, `stops`, `trips` and `route-deviation`: the episodes of each vehicle, in time order."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

from telemetria.db import Conn
from telemetria.reports import queries as q
from telemetria.reports.context import Context
from telemetria.reports.csvout import BOOL, COORD, DATETIME, HMS, INT, TEXT, Column, decimal
from telemetria.reports.engine import Analysis
from telemetria.reports.output import VEHICLE, Report, local, words
from telemetria.reports.params import ReportParams
from telemetria.reports.places import place
from telemetria.reports.request import Window
from telemetria.reports.runner import analyses
from telemetria.reports.track import utc

Rows = Callable[[Conn, Analysis, Window], Any]

SPAN = [Column("Início", "start", DATETIME), Column("Fim", "end", DATETIME), Column("Duração", "duration_s", HMS)]


def _span(a: Analysis, start: float, end: float, win: Window) -> dict[str, Any]:
    return {
        **a.vehicle.label(),
        "start": local(start, win.tz),
        "end": local(end, win.tz),
        "duration_s": round(end - start),
    }


def _at(a: Analysis, i: int, prefix: str = "") -> dict[str, Any]:
    return {f"{prefix}lat": round(float(a.track.lat[i]), 6), f"{prefix}lon": round(float(a.track.lon[i]), 6)}


async def _speeding(conn: Conn, a: Analysis, win: Window) -> list[dict[str, Any]]:
    return [
        {
            **_span(a, e.start, e.end, win),
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
    Column("Velocidade máxima (km/h)", "max_kmh", decimal(1)),
    Column("Limite (km/h)", "limit_kmh", decimal(1)),
    Column("Excesso (%)", "excess_pct", decimal(1)),
    Column("Gravidade (CTB Art. 218)", words("tier")),
    Column("Posições acima do limite", "fixes", INT),
    Column("Latitude", "lat", COORD),
    Column("Longitude", "lon", COORD),
    Column("Local", "place", TEXT),
]  # fmt: skip


async def _stops(conn: Conn, a: Analysis, win: Window) -> list[dict[str, Any]]:
    out = []
    for c in a.stops:
        s = c.stop
        point = c.point
        out.append(
            {
                **_span(a, s.start, s.end, win),
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


async def _trips(conn: Conn, a: Analysis, win: Window) -> list[dict[str, Any]]:
    if not a.trips:
        return []
    starts = [utc(x.start) for x in a.trips]
    drivers = {r["ts"]: r["name"] for r in await conn.fetch(q.DRIVERS_AT, a.vehicle.id, starts)}
    out = []
    for x in a.trips:
        km = a.km_between(x.first, x.last)
        span = slice(x.first + 1, x.last + 1)
        routes = {a.routes[r].code for r in a.seg.route[span].tolist() if r >= 0}
        speeding = any(x.first <= e.first <= x.last for e in a.speeding)
        deviation = any(x.first <= d.first <= x.last for d in a.deviations)
        out.append(
            {
                **_span(a, x.start, x.end, win),
                **_at(a, x.first, "start_"),
                "start_place": place(a, x.first)["place"],
                **_at(a, x.last, "end_"),
                "end_place": place(a, x.last)["place"],
                "km": round(km, 3),
                "avg_kmh": round(km / (x.moving_s / 3600), 1) if x.moving_s > 0 else None,
                "max_kmh": None if x.max_kmh != x.max_kmh else round(x.max_kmh, 1),
                "driver": drivers.get(utc(x.start)),
                "route": ", ".join(sorted(routes)) or None,
                "over_2h": x.over_2h,
                "deviation": deviation,
                "speeding": speeding,
            }
        )
    return out


TRIPS_COLUMNS = [
    *VEHICLE, *SPAN,
    Column("Latitude inicial", "start_lat", COORD),
    Column("Longitude inicial", "start_lon", COORD),
    Column("Local inicial", "start_place", TEXT),
    Column("Latitude final", "end_lat", COORD),
    Column("Longitude final", "end_lon", COORD),
    Column("Local final", "end_place", TEXT),
    Column("Km", "km", decimal(3)),
    Column("Velocidade média (km/h)", "avg_kmh", decimal(1)),
    Column("Velocidade máxima (km/h)", "max_kmh", decimal(1)),
    Column("Condutor", "driver", TEXT),
    Column("Rota", "route", TEXT),
    Column("Mais de 2 h a bordo (Art. 9 §1)", "over_2h", BOOL),
    Column("Desvio de rota", "deviation", BOOL),
    Column("Excesso de velocidade", "speeding", BOOL),
]  # fmt: skip


async def _deviations(conn: Conn, a: Analysis, win: Window) -> list[dict[str, Any]]:
    out = []
    for d in a.deviations:
        left = d.left if d.left is not None else d.first
        back = d.rejoined if d.rejoined is not None else d.last
        route = a.routes[int(a.near[d.i_max])]
        out.append(
            {
                **_span(a, d.start, d.end, win),
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
    Column("Km fora da rota", "km_off_route", decimal(3)),
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


async def _rows(
    conn: Conn, ctx: Context, win: Window, params: ReportParams, rows: Rows, only: Callable[[dict[str, Any]], bool]
) -> AsyncIterator[dict[str, Any]]:
    for v in ctx.vehicles:
        async for a in analyses(conn, ctx, v, win, params):
            for row in await rows(conn, a, win):
                if only(row):
                    yield row


async def report(
    kind: str, conn: Conn, ctx: Context, win: Window, params: ReportParams, unauthorized_only: bool = False
) -> Report:
    """The episodes of `kind` for every vehicle of the context (computed now: the rows are a list)."""
    key, rows, columns = KINDS[kind]

    def only(row: dict[str, Any]) -> bool:
        return not (unauthorized_only and row.get("authorized", False))

    items = [row async for row in _rows(conn, ctx, win, params, rows, only)]
    header: dict[str, Any] = {"unauthorized_only": True} if unauthorized_only else {}
    return Report(kind.replace("-", "_"), win, key, items, columns, header, lambda: {"count": len(items)})
