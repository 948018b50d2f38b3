"""The public area's CSV tables (pt-BR, as every export: reports/output/csv.py): columns and rows (pure)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import date, tzinfo
from typing import Any

from telemetria.publication.itinerary import PublicRoute
from telemetria.publication.service import ZERO, RouteService
from telemetria.reports.output.csv import BOM, COORD, DATE, INT, TEXT, Column, ColumnSpec, CsvFormatter, decimal

KM3 = decimal(3)
KINDS = {"boarding": "embarque", "school": "escola"}

ITINERARY_COLUMNS = [
    Column("Ano letivo", "year", INT), Column("Rota", "code"), Column("Nome da rota", "name"),
    Column("Turno", "shift"), Column("Km declarado", "declared_km", KM3), Column("Km do traçado", "length_km", KM3),
    Column("Escolas", "schools"), Column("Ordem", "order", INT), Column("Tipo", "kind"), Column("Local", "place"),
    Column("Latitude", "lat", COORD), Column("Longitude", "lon", COORD), Column("Horário", "time", TEXT),
]  # fmt: skip

SERVICE_COLUMNS = [
    Column("Linha", "kind"), Column("Mês", "month"), Column("Rota", "code"), Column("Nome da rota", "name"),
    Column("Corridas devidas", "runs_due", INT), Column("Corridas realizadas", "runs_made", INT),
    Column("Km realizado", "km_made", KM3), Column("Contado até", "to", DATE),
]  # fmt: skip


def itinerary_rows(year: int, routes: Sequence[PublicRoute]) -> Iterator[dict[str, Any]]:
    """One row per published stop (the route's columns repeated); a route without stops, one row."""
    for r in routes:
        head = {"year": year, "code": r.code, "name": r.name, "shift": r.shift, "declared_km": r.declared_km,
                "length_km": r.length_km, "schools": ", ".join(r.schools)}  # fmt: skip
        if not r.stops:
            yield {**head, "order": None, "kind": None, "place": None, "lat": None, "lon": None, "time": None}
        for s in r.stops:
            yield {**head, "order": s.order, "kind": KINDS[s.kind], "place": s.name, "lat": s.lat, "lon": s.lon,
                   "time": s.scheduled_time}  # fmt: skip


def service_rows(month: str, last: date, routes: Sequence[RouteService]) -> Iterator[dict[str, Any]]:
    """One row per route, then the total."""
    for r in routes:
        yield {"kind": "rota", "month": month, "code": r.code, "name": r.name, "runs_due": r.runs_due,
               "runs_made": r.runs_made, "km_made": r.km_made, "to": last}  # fmt: skip
    yield {"kind": "total", "month": month, "code": None, "name": None,
           "runs_due": sum(r.runs_due for r in routes), "runs_made": sum(r.runs_made for r in routes),
           "km_made": sum((r.km_made for r in routes), ZERO), "to": last}  # fmt: skip


def csv_bytes(columns: Sequence[ColumnSpec], rows: Iterator[dict[str, Any]], tz: tzinfo) -> bytes:
    """The whole file (the public tables are small: the ETag is a digest of it)."""
    fmt = CsvFormatter(columns, tz)
    return (BOM + fmt.header() + "".join(fmt.line(r) for r in rows)).encode("utf-8")
