"""`summary`: per vehicle over the period, km, driving time, trips, speeds, counts of each alert, the drivers.

The figures are km's daily facts (reports/kinds/km.py: from current rollups where they exist) added up.
"""

from __future__ import annotations

from datetime import datetime

from telemetria.db import Conn
from telemetria.reports.analysis.facts import Facts
from telemetria.reports.kinds.km import daily_facts, km_or_blank, vehicle_row
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Context, Window
from telemetria.reports.output.csv import BOOL, HMS, INT, KM, KMH, TEXT, Column
from telemetria.reports.output.report import VEHICLE, Report, words
from telemetria.reports.store import queries as q

SUMMARY_COLUMNS = [
    *VEHICLE,
    Column("Prefixo", "prefix"),
    Column("Contratada", "contractor"),
    Column("Km", km_or_blank("km"), KM),
    Column("Método", words("method")),
    Column("Km em lacunas de sinal", km_or_blank("gap_km"), KM),
    Column("Km pavimentados", km_or_blank("paved_km"), KM),
    Column("Km não pavimentados", km_or_blank("unpaved_km"), KM),
    Column("Tempo em movimento", "driving_s", HMS),
    Column("Trechos", "trips", INT),
    Column("Velocidade máxima (km/h)", "max_kmh", KMH),
    Column("Velocidade média (km/h)", "avg_kmh", KMH),
    Column("Paradas", "stops", INT),
    Column("Paradas fora de pontos autorizados", "unauthorized_stops", INT),
    Column("Excessos de velocidade", "speeding", INT),
    Column("Desvios de rota", "deviations", INT),
    Column("Condutores", lambda r: ", ".join(r["drivers"]), TEXT),
    Column("Com posições", "active", BOOL),
]


async def summary(conn: Conn, ctx: Context, win: Window, params: ReportParams, now: datetime | None = None) -> Report:
    """Per vehicle over the period: km, driving time, trips, speeds, counts of each alert, the drivers."""
    per = await daily_facts(conn, ctx, win, params, now)
    rows = []
    for v in ctx.vehicles:
        f = Facts()
        for _, day_facts, _ in per[v.id]:
            f.add(day_facts)
        drivers = [r["name"] for r in await conn.fetch(q.DRIVERS_IN, v.id, win.start, win.end)]
        rows.append(
            {
                **vehicle_row(v, f, win),
                "trips": f.trips,
                "avg_kmh": round(f.km / (f.moving_s / 3600), 1) if f.moving_s > 0 else None,
                "stops": f.stops,
                "unauthorized_stops": f.unauthorized_stops,
                "speeding": f.speeding,
                "deviations": f.deviations,
                "drivers": drivers,
                "active": f.fixes > 0,
            }
        )
    return Report("summary", win, "vehicles", rows, SUMMARY_COLUMNS)
