"""The public area's API (no login): the itineraries (Art. 13) and each route's monthly service.

Every route here answers 404 while `public_enabled` is off, before reading anything, as if the area did not
exist. Nothing here names a vehicle, a plate, a driver or a live position; answers are cacheable (cache.py).
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Literal

import orjson
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from telemetria.http import FieldError, HttpError
from telemetria.jobs import PUBLIC, jobs_of
from telemetria.localtime import LOCAL_TZ
from telemetria.publication import store, tables
from telemetria.publication.body import itineraries_body
from telemetria.publication.cache import (
    VERSIONED_TTL_S,
    cached,
    matches,
    memo_of,
    not_modified,
    version_etag,
    versioned,
)
from telemetria.publication.service import answer, month_span
from telemetria.reports.output.csv import CSV_MEDIA_TYPE, content_disposition, export_filename
from telemetria.settings import Settings


async def enabled(request: Request) -> None:
    """A dependency of every public route: 404 while the public area is off."""
    settings: Settings = request.app.state.settings
    if not settings.public_enabled:
        raise HttpError(404, "Not Found")


router = APIRouter(prefix="/public", tags=["public"], dependencies=[Depends(enabled)])
Format = Literal["json", "csv"]
FIRST_YEAR, LAST_YEAR = 2000, 2100  # a month outside is refused before any date arithmetic can overflow


def local_today() -> date:
    return datetime.now(LOCAL_TZ).date()


def _json(request: Request, content: object) -> Response:
    return cached(request, orjson.dumps(content), "application/json")


@router.get("/itineraries")
async def itineraries(request: Request, format: Format = Query("json")) -> Response:
    """The itineraries of the school year in force: routes, km, schools, boarding places on the grid, times, line.

    Computed once per data version (the registry generation, the school years, the day, the grid) in the job
    queue's worker process, never on the event loop; the ETag names that version, so a revalidation costs one
    lookup and a 304 (issue 33: thirty long routes took 1.2-2.1 s of the event loop per anonymous request).

    No connection of the (small) pool is held while the answer is sent: ten anonymous clients slowly reading a
    large answer each held one (the Conn dependency gives it back only once the answer is sent), and a tracker's
    post waited for the pool."""
    cell_m = request.app.state.settings.public_boarding_precision_m
    today = local_today()
    pool = request.app.state.pool
    async with pool.acquire() as conn:
        version, year = await store.data_version(conn, today)
    key = ("itineraries", version, today, cell_m, format)
    etag = version_etag(key)
    media = CSV_MEDIA_TYPE if format == "csv" else "application/json"
    extra = {}
    if format == "csv":
        extra = {"Content-Disposition": content_disposition(export_filename(f"itinerarios_{year}"))}
    if matches(request.headers.get("if-none-match"), etag):
        return not_modified(etag)

    async def compute() -> bytes:
        async with pool.acquire() as conn:
            got = await store.registered(conn, today)
        return await jobs_of(request).run_process(PUBLIC, itineraries_body, got, today, cell_m, format)

    body: bytes = await memo_of(request).once(key, compute, ttl_s=VERSIONED_TTL_S)
    return versioned(body, media, etag, extra)


@router.get("/service")
async def service(
    request: Request,
    month: str = Query(..., max_length=7, description="yyyy-mm, e.g. 2026-03"),
    format: Format = Query("json"),
) -> Response:
    """Each route's service in a month: runs due, runs made, km made (a month in progress: up to yesterday).

    Like the itineraries, it takes a connection of the pool for its read only and gives it back before the
    answer is sent: a slow anonymous reader holds none (issue 33, item 2)."""
    if not re.fullmatch(r"\d{4}-\d{2}", month):
        raise FieldError(f"month: {month!r} is not a month (yyyy-mm)", "month")
    try:
        first = date.fromisoformat(month + "-01")
    except ValueError:
        raise FieldError(f"month: {month!r} is not a month (yyyy-mm)", "month") from None
    if not FIRST_YEAR <= first.year <= LAST_YEAR:
        raise FieldError(f"month: {month!r} is not between {FIRST_YEAR} and {LAST_YEAR}", "month")
    today = local_today()
    span = month_span(first, today)
    if span is None:
        raise FieldError(f"month: no day of {month} is over yet (a month is counted up to yesterday)", "month")
    lo, hi = span
    memo = memo_of(request)
    routes = memo.get(("service", lo, hi))
    if routes is None:
        async with request.app.state.pool.acquire() as conn:
            routes = await store.service(conn, lo, hi)
        memo.put(("service", lo, hi), routes)
    complete = (hi + timedelta(days=1)).month != hi.month  # else a month in progress, counted up to yesterday
    if format == "csv":
        body = tables.csv_bytes(tables.SERVICE_COLUMNS, tables.service_rows(month, hi, routes), LOCAL_TZ)
        name = export_filename(f"servico_{month}")
        return cached(request, body, CSV_MEDIA_TYPE, {"Content-Disposition": content_disposition(name)})
    return _json(request, answer(month, lo, hi, complete, routes))
