"""Reports API (`GET /api/v1/reports/<kind>`): JSON for screens and scripts; CSV, XLSX, PDF and GIS files for
auditors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from telemetria import metrics
from telemetria.audit.log import record
from telemetria.auth.guard import client_ip, require
from telemetria.auth.roles import Perm, Principal
from telemetria.db import Conn
from telemetria.deps import BuiltReportsConn, ReportsConn
from telemetria.http import FieldError
from telemetria.jobs import jobs_of, streamed, user_key
from telemetria.reports.kinds import events, km, reporting, schedule, summary, track
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Context, ReportError, Selection, Window
from telemetria.reports.output import files
from telemetria.reports.output import report as output
from telemetria.reports.request import common, report_params
from telemetria.reports.store import queries as store_q
from telemetria.reports.store.context import load, require_some

router = APIRouter(prefix="/api/v1/reports", tags=["reports"])
READ = Depends(require(Perm.READ))
COMMON = Depends(common)
KNOBS = Depends(report_params)
Build = Callable[[Conn, Context, Window], Awaitable[output.Report]]
TableFormat = Literal["json", "csv", "xlsx", "pdf"]
DOCUMENT_FORMATS = ("xlsx", "pdf")
GIS_FORMATS = ("geojson", "gpx", "kml")
GIS_MAX_SPAN = timedelta(days=31)
PDF_MAX_SPAN = timedelta(days=31)  # the track's PDF: its pages are held, compressed, until the file is written
# Positions a track file may hold: an XLSX sheet's rows less its header and totals; a PDF of about 1,700 pages.
ROW_CAPS = {"xlsx": 1_048_576 - 1 - 16, "pdf": 50_000}
NOT_FOUND = 404  # what a ReportError means over HTTP: the request names something the caller cannot see


async def _context(conn: Conn, who: Principal, sel: Selection, win: Window) -> Context:
    """What the caller may see of the selection; a domain refusal becomes the answer naming its field."""
    try:
        ctx = await load(conn, who.scope, sel, win)
        require_some(ctx.vehicles, sel)
    except ReportError as e:
        raise FieldError(str(e), e.field, NOT_FOUND) from None
    return ctx


async def _audit(request: Request, conn: Conn, who: Principal, kind: str, detail: dict[str, Any]) -> None:
    """Record an export on the main pool: on `conn` itself when the reports pool is the main pool (no replica),
    so that a request never waits for a second connection of the pool it holds one of."""
    if request.app.state.reports_pool is request.app.state.pool:
        await record(conn, f"export.{kind}", who, client_ip(request), None, detail)
        return
    async with request.app.state.pool.acquire() as main:
        await record(main, f"export.{kind}", who, client_ip(request), None, detail)


async def _within_rows(conn: Conn, ctx: Context, win: Window, fmt: str) -> None:
    """A track file whose rows are positions refused before it is begun when they would not fit: an XLSX sheet
    ends at 1,048,576 rows (XlsxWriter would drop the rest without a word), a PDF past ROW_CAPS["pdf"] is
    thousands of pages drawn for minutes."""
    cap = ROW_CAPS[fmt]
    n = await conn.fetchval(store_q.COUNT_FIXES_UPTO, [v.id for v in ctx.vehicles], win.start, win.end, cap + 1)
    if n > cap:
        raise FieldError(
            f"to: a track {fmt.upper()} holds at most {cap} positions and this one has more: choose fewer "
            "vehicles or days (CSV: any size)",
            "to",
        )


async def serve(
    request: Request, conn: Conn, who: Principal, kind: str, fmt: str, scope: tuple[Window, Selection],
    build: Build,
) -> Response:  # fmt: skip
    """Load what the caller may see, build the report on the reports connection, answer in `fmt`; exports are audited.

    A report whose rows are computed while they stream (track) takes a `ReportsConn`, given back once the answer
    has been sent; the others compute every row here and take a `BuiltReportsConn`, given back before sending.
    """
    win, sel = scope
    if fmt != "json" and not who.can(Perm.EXPORT):
        raise FieldError(f"format: role {who.role.value!r} may not export files", "format", 403)
    with metrics.report_timer(kind):
        ctx = await _context(conn, who, sel, win)
        if kind == "track" and fmt in ROW_CAPS:
            await _within_rows(conn, ctx, win, fmt)
        report = await build(conn, ctx, win)
    if used := ctx.networks_used(win.local_days()):
        report.header["road_networks"] = used  # which road network measured the km (docs/roads.md)
    if fmt == "json":
        return output.json_stream(report)
    detail: dict[str, Any] = {
        "format": fmt, "from": win.start.isoformat(), "to": win.end.isoformat(),
        "vehicles": [v.id for v in ctx.vehicles][:100], "vehicle_count": len(ctx.vehicles),
    }  # fmt: skip
    await _audit(request, conn, who, kind, detail)
    if fmt == "csv":
        return output.csv_stream(report)
    if fmt in DOCUMENT_FORMATS:
        # A PDF or a workbook renders for seconds: in a turn of the job queue (429 "tente novamente em N s" when
        # the user already has one or the queue is full), held until the document has been sent.
        settings = request.app.state.settings
        return await streamed(
            request, user_key(who.user_id),
            lambda: files.respond(files.document_of(report, ctx, sel, who, settings=settings), fmt, jobs_of(request)),
        )  # fmt: skip
    return output.gis_stream(report, fmt)


@router.get("/km")
async def km_report(
    request: Request, scope: tuple[Window, Selection] = COMMON, params: ReportParams = KNOBS,
    by: Literal["vehicle", "day"] = Query("vehicle"), format: TableFormat = Query("json"), who: Principal = READ,
    *, conn: BuiltReportsConn,
) -> Response:  # fmt: skip
    """Km driven per vehicle (or per vehicle and day) and the group total (Art. 15 §5)."""
    return await serve(request, conn, who, "km", format, scope, lambda c, x, w: km.km(c, x, w, params, by == "day"))


@router.get("/summary")
async def summary_report(
    request: Request, scope: tuple[Window, Selection] = COMMON, params: ReportParams = KNOBS,
    format: TableFormat = Query("json"), who: Principal = READ, *, conn: BuiltReportsConn,
) -> Response:  # fmt: skip
    """Per vehicle: km, driving time, trips, top and average speed, counts of each alert, the drivers."""
    return await serve(request, conn, who, "summary", format, scope, lambda c, x, w: summary.summary(c, x, w, params))


def _events(kind: str, doc: str) -> None:
    async def endpoint(
        request: Request, scope: tuple[Window, Selection] = COMMON, params: ReportParams = KNOBS,
        format: TableFormat = Query("json"), who: Principal = READ, *, conn: BuiltReportsConn,
    ) -> Response:  # fmt: skip
        return await serve(
            request, conn, who, kind, format, scope, lambda c, x, w: events.report(kind, c, x, w, params)
        )

    endpoint.__doc__ = doc
    router.add_api_route(f"/{kind}", endpoint, methods=["GET"], name=f"{kind}_report")


_events("speeding", "Speeding episodes with date, time, place, limit, excess and CTB Art. 218 tier (Art. 15 §5).")
_events("trips", "Trips (trechos): start and end, km, average and top speed, driver, route, flags (Art. 15 §4).")
_events("route-deviation", "Departures from the assigned route beyond its tolerance (Art. 26).")


@router.get("/stops")
async def stops_report(
    request: Request, scope: tuple[Window, Selection] = COMMON, params: ReportParams = KNOBS,
    unauthorized: bool = Query(False, description="only stops outside authorized points (Art. 38 IX)"),
    format: TableFormat = Query("json"), who: Principal = READ, *, conn: BuiltReportsConn,
) -> Response:  # fmt: skip
    """Stops with duration and whether they were at an authorized point (Art. 38 IX)."""
    return await serve(
        request,
        conn,
        who,
        "stops",
        format,
        scope,
        lambda c, x, w: events.report("stops", c, x, w, params, unauthorized),
    )


@router.get("/track")
async def track_report(
    request: Request, scope: tuple[Window, Selection] = COMMON, params: ReportParams = KNOBS,
    format: Literal["json", "csv", "xlsx", "pdf", "geojson", "gpx", "kml"] = Query("json"), who: Principal = READ,
    *, conn: ReportsConn,
) -> Response:  # fmt: skip
    """The trajectory: positions with time and speed, places passed, totals; also GeoJSON, GPX and KML."""
    if format in GIS_FORMATS and scope[0].end - scope[0].start > GIS_MAX_SPAN:
        # A map file holds its lines in memory while it is written; JSON and CSV stream any span.
        raise FieldError(f"to: GeoJSON, GPX and KML cover at most {GIS_MAX_SPAN.days} days", "to")
    if format == "pdf" and scope[0].end - scope[0].start > PDF_MAX_SPAN:
        # Every position is a table row: a month of one vehicle is already a thousand pages or more.
        raise FieldError(f"to: a track PDF covers at most {PDF_MAX_SPAN.days} days (CSV: any span)", "to")
    return await serve(request, conn, who, "track", format, scope, lambda c, x, w: track.report(c, x, w, params))


@router.get("/reporting")
async def reporting_report_(
    request: Request, scope: tuple[Window, Selection] = COMMON, params: ReportParams = KNOBS,
    format: TableFormat = Query("json"), who: Principal = READ, *, conn: BuiltReportsConn,
) -> Response:  # fmt: skip
    """Per vehicle and day: fixes, coverage at ≤30 s, gaps while moving, late uploads (Art. 15 §§1–3)."""
    return await serve(
        request,
        conn,
        who,
        "reporting",
        format,
        scope,
        lambda c, x, w: reporting.report(c, x, w, params, request.app.state.due_windows),
    )


@router.get("/schedule")
async def schedule_report(
    request: Request, scope: tuple[Window, Selection] = COMMON, params: ReportParams = KNOBS,
    format: TableFormat = Query("json"), who: Principal = READ, *, conn: BuiltReportsConn,
) -> Response:  # fmt: skip
    """Each scheduled route run: departures and arrivals against the schedule, points skipped, runs not made."""
    return await serve(
        request,
        conn,
        who,
        "schedule",
        format,
        scope,
        lambda c, x, w: schedule.report(c, x, w, params, request.app.state.due_windows),
    )
