"""`schedule`: each route run a vehicle was assigned on the local days the window touches, up to today, when
it was due: the runs due are the boletim's (issue 36): a school day of the calendar (without a school year
registered: a weekday), inside the route's contract validity, and not every run of the route in a shift that
had no school that day (occurrences/detection/duewindows.py). A Saturday lists no run.

A run's points served, passed, skipped or pending and its delays come from reports/analysis/schedule.py
(the decisions are written there); this module makes its row, CSV columns and footer.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.schedule import PASSED, PENDING, SERVED, SKIPPED, Run, Visit, runs_of, still_open
from telemetria.reports.due import DueFactory
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Context, Route, Vehicle, Window
from telemetria.reports.output.csv import DATE, DATETIME, INT, MIN, TEXT, Column
from telemetria.reports.output.document import Table
from telemetria.reports.output.report import VEHICLE, Report, local, words
from telemetria.reports.store.fetch import analyze_piece


def row(v: Vehicle, route: Route, run: Run, tz: ZoneInfo, pending: bool) -> dict[str, Any]:
    """The report row of one run: times as aware datetimes in `tz`, delays in minutes."""
    visits = run.visits
    school = run.school()
    first = visits[0] if visits else None
    last = visits[-1] if visits else None
    sv = visits[school] if school is not None else None

    def served(w: Visit | None, when: str) -> datetime | None:
        return local(getattr(w, when), tz) if w is not None and w.status == SERVED else None

    return {
        **v.label(),
        "date": run.day,
        "route_id": route.id,
        "route_code": route.code,
        "route_name": route.name,
        "made": None if pending else run.made,
        "departure": served(first, "departure"),
        "school_arrival": served(sv, "arrival"),
        "end_arrival": served(last, "arrival"),
        "scheduled_departure": local(run.scheduled[0], tz) if visits else None,
        "scheduled_school": local(run.scheduled[school], tz) if school is not None else None,
        "delay_departure_min": run.delay_min(0) if first and first.status == SERVED else None,
        "delay_school_min": run.delay_min(school) if school is not None and sv and sv.status == SERVED else None,
        "points_total": len(visits),
        "points_served": run.count(SERVED),
        "points_passed": run.count(PASSED),
        "points_skipped": run.count(SKIPPED),
        "points_pending": run.count(PENDING),
        "skipped": [w.point.name for w in visits if w.status == SKIPPED],
        "points": [
            {
                "seq": w.point.seq,
                "name": w.point.name,
                "kind": w.point.kind,
                "status": w.status,
                "scheduled": local(run.scheduled[i], tz),
                "arrival": local(w.arrival, tz),
                "departure": local(w.departure, tz),
                "delay_min": run.delay_min(i),
                "distance_m": None if w.distance_m is None else round(w.distance_m),
            }
            for i, w in enumerate(visits)
        ],
    }


MADE = {True: "Sim", False: "Não", None: "Pendente"}  # None: not made yet, while the run can still be made

COLUMNS = [
    *VEHICLE,
    Column("Data", "date", DATE),
    Column("Rota (id)", "route_id", INT),
    Column("Código da rota", "route_code", TEXT),
    Column("Nome da rota", "route_name", TEXT),
    Column("Realizada", lambda r: MADE[r["made"]], TEXT),
    Column("Saída prevista", "scheduled_departure", DATETIME),
    Column("Saída", "departure", DATETIME),
    Column("Atraso na saída (min)", "delay_departure_min", MIN),
    Column("Chegada prevista à escola", "scheduled_school", DATETIME),
    Column("Chegada à escola", "school_arrival", DATETIME),
    Column("Atraso na chegada à escola (min)", "delay_school_min", MIN),
    Column("Chegada ao fim da rota", "end_arrival", DATETIME),
    Column("Pontos da rota", "points_total", INT),
    Column("Pontos atendidos", "points_served", INT),
    Column("Pontos passados sem parar", "points_passed", INT),
    Column("Pontos pulados", "points_skipped", INT),
    Column("Pontos pendentes", "points_pending", INT),
    Column("Nomes dos pontos pulados", lambda r: ", ".join(r["skipped"]) or None, TEXT),
]

# What the CSV has no room for (the XLSX's sheets, the PDF's sections): each run's points, and the footer's counts.
POINT_COLUMNS = [
    *VEHICLE,
    Column("Data", "date", DATE),
    Column("Código da rota", "route_code", TEXT),
    Column("Ordem", "seq", INT),
    Column("Ponto", "name", TEXT),
    Column("Tipo do ponto", words("kind")),
    Column("Situação", words("status")),
    Column("Horário previsto", "scheduled", DATETIME),
    Column("Chegada", "arrival", DATETIME),
    Column("Saída", "departure", DATETIME),
    Column("Atraso (min)", "delay_min", MIN),
    Column("Distância ao ponto (m)", "distance_m", INT),
]
COUNT_COLUMNS = [
    Column("Corridas devidas", "scheduled", INT),
    Column("Realizadas", "made", INT),
    Column("Não realizadas", "not_made", INT),
    Column("Pendentes", "pending", INT),
]


def points(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Every run's points, one row each, after the run's vehicle, day and route."""
    keep = ("vehicle_id", "plate", "date", "route_code")
    return [{**{k: r[k] for k in keep}, **p} for r in rows for p in r["points"]]


async def report(
    conn: Conn, ctx: Context, win: Window, params: ReportParams, due_source: DueFactory, now: datetime | None = None
) -> Report:
    """Every run assigned to the context's vehicles on the local days the window touches, up to today; `due_source`
    gives the runs due (reports/due.py)."""
    now = now or datetime.now(LOCAL_TZ)
    today = now.astimezone(LOCAL_TZ).date()
    zones = ctx.zones
    rows: list[dict[str, Any]] = []
    due = due_source()  # the runs due as the boletim counts them (occurrences/detection/duewindows.py)
    for v in ctx.vehicles:
        for day in win.local_days():
            if day > today or not v.in_scope(day) or not v.routes_on(day):
                continue
            d0, d1 = day_bounds(day)
            a = await analyze_piece(conn, v, zones, day, d0, d1, params, ctx.network_on(day))
            for route, run in runs_of(a, day, params):
                if not await due.windows(conn, route, day):
                    continue
                run = still_open(run, now.timestamp())
                rows.append(row(v, route, run, win.tz, not run.made and now.timestamp() < run.closes))

    def footer() -> dict[str, Any]:
        made = [r["made"] for r in rows]
        return {
            "count": len(rows),
            "scheduled": len(rows),
            "made": made.count(True),
            "not_made": made.count(False),
            "pending": made.count(None),
        }

    def extra() -> list[Table]:
        return [Table("Pontos", POINT_COLUMNS, points(rows)), Table("Resumo", COUNT_COLUMNS, [footer()])]

    return Report("runs", win, "runs", rows, COLUMNS, {}, footer, extra=extra)
