"""`track`: every position of the window with time, speed and distance, the places passed, and totals.

Positions stream (one local day in memory at a time), so a year of a vehicle exports in constant
memory. Each position carries the speed limit that applies there (zone, route, vehicle or the
default), which the history's speed chart draws. GeoJSON/GPX/KML draw one line per vehicle and
day, and the stops and route points passed. Every file names the daily seals of the vehicle-days it
covers (seals/table.py), which `telemetria verify` and POST /api/v1/seals/verify check it against.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import numpy as np

from telemetria.db import Conn
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.places import locality_name, passed_points, road, road_near
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Context, Window
from telemetria.reports.output import gis as gf
from telemetria.reports.output.csv import BOOL, COORD, DATETIME, DEG, HMS, INT, KM, KM_STEP, KMH, TEXT, Column
from telemetria.reports.output.document import Table
from telemetria.reports.output.report import VEHICLE, WORDS, Report, local, words
from telemetria.reports.store.fetch import analyses
from telemetria.seals import store as seal_store
from telemetria.seals import table as seal_table
from telemetria.seals.model import SealRef

COLUMNS = [
    *VEHICLE,
    Column("Data e hora", "time", DATETIME),
    Column("Latitude", "lat", COORD),
    Column("Longitude", "lon", COORD),
    Column("Velocidade (km/h)", "speed_kmh", KMH),
    Column("Direção (graus)", "heading_deg", DEG),
    Column("Ignição", "ignition", TEXT),
    Column("Km desde a posição anterior", "step_km", KM_STEP),
    Column("Km acumulado", "km", KM),
    Column("Método", words("method")),
    Column("Usada", "used", BOOL),
    Column("Recebida em", "received", DATETIME),
    Column("Atraso de envio (s)", "delay_s", INT),
]
# The footer's lists the CSV has no room for: the XLSX's sheets "Totais" and "Locais", the PDF's sections.
TOTALS_COLUMNS = [
    *VEHICLE,
    Column("Km", "km", KM),
    Column("Posições", "fixes", INT),
    Column("Velocidade máxima (km/h)", "max_kmh", KMH),
    Column("Tempo em movimento", "moving_s", HMS),
    Column("Velocidade média (km/h)", "avg_kmh", KMH),
]
PLACE_KINDS = {"stop": "parada", "road": "via"}
PLACE_COLUMNS = [
    *VEHICLE,
    Column("Data e hora", "time", DATETIME),
    Column("Tipo", lambda r: PLACE_KINDS.get(r["kind"]) or WORDS.get(r["kind"], r["kind"])),
    Column("Nome", "name", TEXT),
    Column("Ponto autorizado", "authorized", BOOL),
    Column("Duração", "duration_s", HMS),
    Column("Latitude", "lat", COORD),
    Column("Longitude", "lon", COORD),
    Column("Via", "road", TEXT),
    Column("Km na via", "km", KM),
    Column("Saída da via", "end", DATETIME),
    Column("Localidade", "locality", TEXT),
]
METHODS = {0: None, 1: "route", 2: "chord", 3: "road"}
IGNITION = {-1: None, 0: "desligada", 1: "ligada"}


class Totals:
    """Per vehicle, folded as the positions stream: km, fixes, top speed, moving time."""

    def __init__(self) -> None:
        self.by_vehicle: dict[int, dict[str, Any]] = {}

    def add(self, a: Analysis) -> None:
        t = self.by_vehicle.setdefault(
            a.vehicle.id, {**a.vehicle.label(), "km": 0.0, "fixes": 0, "max_kmh": None, "moving_s": 0.0}
        )
        t["km"] += float(np.sum(a.seg.length_m[a.own])) / 1000.0
        t["fixes"] += int(a.own.sum())
        t["moving_s"] += a.moving_s(a.own)
        top = a.max_kmh(a.own)
        if top is not None and (t["max_kmh"] is None or top > t["max_kmh"]):
            t["max_kmh"] = top

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for t in self.by_vehicle.values():
            avg = t["km"] / (t["moving_s"] / 3600) if t["moving_s"] > 0 else None
            out.append(
                {
                    **t, "km": round(t["km"], 3), "moving_s": round(t["moving_s"]),
                    "max_kmh": None if t["max_kmh"] is None else round(t["max_kmh"], 1),
                    "avg_kmh": None if avg is None else round(avg, 1),
                }
            )  # fmt: skip
        return out


def positions(a: Analysis, win: Window) -> list[dict[str, Any]]:
    """The window's positions of one analysis, with per-segment and cumulative km."""
    tr, seg = a.track, a.seg
    idx = np.flatnonzero(a.own)
    cum = np.cumsum(seg.length_m[idx]) / 1000.0
    label = a.vehicle.label()
    out = []
    for n, i in enumerate(idx.tolist()):
        speed = tr.speed_kmh[i]
        heading = tr.heading_deg[i]
        limit = a.limit_kmh[i]
        out.append(
            {
                **label,
                "time": local(tr.t[i], win.tz),
                "lat": float(tr.lat[i]),
                "lon": float(tr.lon[i]),
                "speed_kmh": None if speed != speed else round(float(speed), 1),
                "heading_deg": None if heading != heading else round(float(heading)),
                "ignition": IGNITION[int(tr.ignition[i])],
                "step_km": round(float(seg.length_m[i]) / 1000.0, 4),
                "km": round(float(cum[n]), 4),
                "method": METHODS[int(seg.method[i])],
                "used": bool(a.keep[i]),
                "received": local(tr.received[i], win.tz),
                "delay_s": round(float(tr.received[i] - tr.t[i])),
                "limit_kmh": None if limit != limit else round(float(limit), 1),  # the one speeding is judged by
                "road": road(a, i),
            }
        )
    return out


def roads_passed(a: Analysis, win: Window) -> list[dict[str, Any]]:
    """The roads the window's kept positions lie on, in order: each stretch of consecutive positions on one road
    (an unnamed way or none ends a stretch) with its entry and exit times and the km driven on it (the segments
    ending at its positions after the first)."""
    if a.roads is None:
        return []
    idx = np.flatnonzero(a.own & a.keep)
    out: list[dict[str, Any]] = []
    current: str | None = None
    for i in idx.tolist():
        on = road(a, i)
        if on is not None and on == current:
            out[-1]["km"] += float(a.seg.length_m[i]) / 1000.0
            out[-1]["end"] = local(a.track.t[i], win.tz)
        elif on is not None:
            out.append(
                {
                    **a.vehicle.label(), "time": local(a.track.t[i], win.tz), "kind": "road", "name": on,
                    "authorized": None, "duration_s": None, "lat": round(float(a.track.lat[i]), 6),
                    "lon": round(float(a.track.lon[i]), 6), "road": on, "km": 0.0,
                    "end": local(a.track.t[i], win.tz),
                    "locality": locality_name(a, float(a.track.lat[i]), float(a.track.lon[i])),
                }
            )  # fmt: skip
        current = on
    for r in out:
        r["km"] = round(r["km"], 3)
        r["duration_s"] = round((r["end"] - r["time"]).total_seconds())
    return out


def places(a: Analysis, win: Window) -> list[dict[str, Any]]:
    """Stops made and registered route points passed in the window, in time order."""
    out = [
        {
            **a.vehicle.label(),
            "time": local(c.stop.start, win.tz),
            "kind": "stop",
            "name": c.point.name if c.point and c.authorized else "parada",
            "authorized": c.authorized,
            "duration_s": round(c.stop.duration_s),
            "lat": round(c.stop.lat, 6),
            "lon": round(c.stop.lon, 6),
            "road": road_near(a, c.stop.lat, c.stop.lon),
            "km": None,
            "end": None,
            "locality": locality_name(a, c.stop.lat, c.stop.lon),
        }
        for c in a.stops
    ]
    for p, i in passed_points(a):
        out.append(
            {
                **a.vehicle.label(), "time": local(a.track.t[i], win.tz), "kind": p.kind, "name": p.name,
                "authorized": True, "duration_s": None, "lat": p.lat, "lon": p.lon, "road": road(a, i), "km": None,
                "end": None, "locality": locality_name(a, p.lat, p.lon),
            }
        )  # fmt: skip
    out += roads_passed(a, win)
    out.sort(key=lambda r: (r["time"], r["kind"] == "road"))
    return out


async def report(conn: Conn, ctx: Context, win: Window, params: ReportParams) -> Report:
    """The track report; its positions are computed while they stream, on `conn`.

    The caller keeps `conn` until the answer has been sent (reports/api.py takes it as a dependency,
    telemetria/deps.py), so the stream needs no connection of its own.
    """
    totals = Totals()
    passed: list[dict[str, Any]] = []

    async def rows() -> AsyncIterator[dict[str, Any]]:
        for v in ctx.vehicles:
            async for a in analyses(conn, ctx, v, win, params):
                totals.add(a)
                passed.extend(places(a, win))
                for row in positions(a, win):
                    yield row

    async def drawing() -> tuple[list[gf.Segment], list[gf.Place]]:
        segments, marks = [], []
        for v in ctx.vehicles:
            async for a in analyses(conn, ctx, v, win, params):
                pts = [
                    gf.Position(r["time"], r["lat"], r["lon"], r["speed_kmh"]) for r in positions(a, win) if r["used"]
                ]
                if pts:
                    day = local(a.start, win.tz)
                    segments.append(gf.Segment(f"{v.plate} {day:%d/%m/%Y}", pts))
                marks += [
                    gf.Place(p["name"], p["kind"], p["lat"], p["lon"], p["time"])
                    for p in places(a, win)
                    if p["kind"] != "road"  # the roads passed are the line itself, not marks on it
                ]
        return segments, marks

    def footer() -> dict[str, Any]:
        return {"totals": totals.rows(), "places": passed}

    def extra() -> list[Table]:
        return [Table("Totais", TOTALS_COLUMNS, totals.rows()), Table("Locais", PLACE_COLUMNS, passed)]

    async def seals() -> list[SealRef]:
        """The seals of the vehicle-days the window covers, each with the window clipped to its day."""
        refs = await seal_store.refs_for(conn, [v.id for v in ctx.vehicles], win.start, win.end)
        mine = [r for r in refs if (v := ctx.vehicle(r.vehicle_id)) is not None and v.in_scope(r.day)]
        return seal_table.clipped(mine, win.start, win.end)

    return Report("track", win, "positions", rows(), COLUMNS, {}, footer, gis=drawing, extra=extra, seals=seals)
