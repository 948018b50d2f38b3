"""A built report and how it leaves: JSON (streamed), pt-BR CSV (streamed), or a GIS file for tracks."""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import orjson
from fastapi.responses import StreamingResponse

from telemetria.period import last_included
from telemetria.reports.model import Window
from telemetria.reports.output import csv, gis
from telemetria.reports.output.csv import Column, as_async
from telemetria.reports.output.document import Drawing, Table
from telemetria.seals import table as seal_table
from telemetria.seals.model import SealRef

# The codes JSON carries (for scripts), as a pt-BR CSV shows them (for people).
WORDS = {
    "route": "rota", "chord": "linha reta", "route+chord": "rota e linha reta", "none": "sem deslocamento",
    "no_fixes": "sem posições", "road": "estradas", "route+road": "rota e estradas",
    "road+chord": "estradas e linha reta", "route+road+chord": "rota, estradas e linha reta",
    "media": "média", "grave": "grave", "gravissima": "gravíssima",
    "boarding": "embarque", "school": "escola", "garage": "garagem",
    "served": "atendido", "passed": "passou sem parar", "skipped": "pulado", "pending": "pendente",
}  # fmt: skip


def words(key: str) -> Callable[[dict[str, Any]], str | None]:
    """A CSV getter showing the code in row[key] in Portuguese."""
    return lambda row: None if row[key] is None else WORDS.get(row[key], row[key])


# The first columns of every report's CSV: which vehicle a row is about.
VEHICLE = [Column("Veículo (id)", "vehicle_id", csv.INT), Column("Placa", "plate")]

# The seals table a track export ends with (seals/table.py): in the CSV after an empty line, its first column
# marking the rows (`selo`); the XLSX's "Selos" sheet and the PDF's section take SEAL_COLUMNS[1:] over
# seal_table.cells(ref) of each ref.
SEAL_COLUMNS = [
    Column(seal_table.CSV_TITLE, lambda _row: seal_table.CSV_MARK),
    Column("Veículo (id)", "vehicle_id", csv.INT), Column("Placa", "plate"), Column("Dia", "day", csv.DATE),
    Column("Versão", "version", csv.INT), Column("Posições", "fixes", csv.INT), Column("SHA-256", "sha256"),
    Column("De (UTC)", "from"), Column("Até (UTC)", "to"),
]  # fmt: skip

Rows = AsyncIterable[dict[str, Any]] | Iterable[dict[str, Any]]


@dataclass(eq=False)
class Report:
    """`{"from", "to", "tz", **header, key: [rows...], **footer()}`; the footer is built after the rows ran."""

    kind: str
    window: Window
    key: str
    rows: Rows
    columns: Sequence[Column]
    header: dict[str, Any] = field(default_factory=dict)
    footer: Callable[[], dict[str, Any]] | None = None
    gis: Callable[[], Awaitable[tuple[Any, Any]]] | None = None  # (segments, places) for GeoJSON/GPX/KML
    totals: Callable[[], list[dict[str, Any]]] | None = None  # closing rows of the CSV (the group's total)
    extra: Callable[[], list[Table]] | None = None  # XLSX sheets / PDF sections known once the rows ran
    drawing: Drawing | None = None  # the PDF's map, when the report has one (defaults to `gis`)
    seals: Callable[[], Awaitable[list[SealRef]]] | None = None  # the daily seals a track is cut from

    def head(self) -> dict[str, Any]:
        w = self.window
        return {"from": w.start.astimezone(w.tz), "to": w.end.astimezone(w.tz), "tz": w.tz.key, **self.header}


def local(t: float | None, tz: ZoneInfo) -> datetime | None:
    """Epoch seconds → an aware datetime in the report's zone (ISO 8601 with its offset in JSON)."""
    return None if t is None else datetime.fromtimestamp(float(t), tz)


def _dumps(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)


async def _json(report: Report) -> AsyncIterator[bytes]:
    head = _dumps(report.head())
    yield head[:-1] + (b"," if len(head) > 2 else b"") + b'"' + report.key.encode() + b'":['
    buf = csv.Chunker()
    first = True
    async for row in as_async(report.rows):
        out = buf.add(("" if first else ",") + _dumps(row).decode())
        first = False
        if out:
            yield out
    yield buf.flush() + b"]"
    tail = _dumps(report.footer()) if report.footer else b"{}"
    yield (b"," + tail[1:]) if len(tail) > 2 else b"}"


def json_stream(report: Report) -> StreamingResponse:
    return StreamingResponse(_json(report), media_type="application/json")


# The downloaded file's name says what it is, in Portuguese (the report's page title, ASCII-safe).
FILE_STEMS = {
    "km": "km_rodados", "summary": "resumo_por_veiculo", "trips": "trechos", "speeding": "excesso_de_velocidade",
    "stops": "paradas", "route_deviation": "desvios_de_rota", "track": "trajetoria", "runs": "cumprimento_de_horarios",
    "reporting": "regularidade_de_transmissao",
}  # fmt: skip


# What each report is, for people: the XLSX's and PDF's title.
TITLES = {
    "km": "Km rodados", "summary": "Resumo por veículo", "trips": "Trechos", "speeding": "Excesso de velocidade",
    "stops": "Paradas", "route_deviation": "Desvios de rota", "track": "Trajetória",
    "runs": "Cumprimento de horários", "reporting": "Regularidade de transmissão",
}  # fmt: skip


def filename(report: Report, ext: str) -> str:
    """`km_rodados_2026-03-01_2026-03-31.csv`: what it is, and the period as asked for, its last day included."""
    w = report.window
    stem = FILE_STEMS.get(report.kind, report.kind)
    return csv.export_filename(stem, *last_included(w.start, w.end, w.tz), ext)


async def _with_totals(report: Report) -> AsyncIterator[dict[str, Any]]:
    async for row in as_async(report.rows):
        yield row
    for row in report.totals() if report.totals else ():
        yield row


def seals_csv(refs: Sequence[SealRef], tz: ZoneInfo) -> str:
    """The CSV's seals table: an empty line, its header, a `selo` row per sealed vehicle-day (CRLF)."""
    fmt = csv.CsvFormatter(SEAL_COLUMNS, tz)
    return "\r\n" + fmt.header() + "".join(fmt.line(seal_table.cells(r)) for r in refs)


async def _csv_body(report: Report) -> AsyncIterator[bytes]:
    async for chunk in csv.csv_chunks(report.columns, _with_totals(report), report.window.tz):
        yield chunk
    if report.seals is not None:  # known once the rows ran: the seals of the days they were cut from
        yield seals_csv(await report.seals(), report.window.tz).encode("utf-8")


def csv_stream(report: Report) -> StreamingResponse:
    body = _csv_body(report)
    headers = {"Content-Disposition": csv.content_disposition(filename(report, "csv"))}
    return StreamingResponse(body, media_type=csv.CSV_MEDIA_TYPE, headers=headers)


def file_stream(report: Report, body: AsyncIterator[bytes], media_type: str, ext: str) -> StreamingResponse:
    headers = {"Content-Disposition": csv.content_disposition(filename(report, ext))}
    return StreamingResponse(body, media_type=media_type, headers=headers)


def gis_stream(report: Report, fmt: str) -> StreamingResponse:
    """The track as GeoJSON, GPX or KML: lines per vehicle and day, and the places as points."""

    async def body() -> AsyncIterator[bytes]:
        assert report.gis is not None
        segments, marks = await report.gis()
        seals = await report.seals() if report.seals is not None else None
        make = {"geojson": gis.geojson_chunks, "gpx": gis.gpx_chunks, "kml": gis.kml_chunks}[fmt]
        async for chunk in make(segments, marks, title=f"Telemetria: {report.kind}", seals=seals):
            yield chunk

    media = {"geojson": gis.GEOJSON_MEDIA_TYPE, "gpx": gis.GPX_MEDIA_TYPE, "kml": gis.KML_MEDIA_TYPE}[fmt]
    return file_stream(report, body(), media, fmt)
