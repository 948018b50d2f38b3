"""What a report request asks for, read from its query string: window, zone, vehicles, knobs (the HTTP edge).

The values are reports/model.py's `Window` and `Selection` and reports/knobs.py's `ReportParams`; what is
wrong with a parameter is a 400 naming it (`FieldError`).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from typing import Annotated, Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from fastapi import Query
from pydantic import Field

from telemetria.http import FieldError
from telemetria.ids import MAX_ID
from telemetria.period import instant
from telemetria.reports.knobs import DEFAULT, ReportParams
from telemetria.reports.model import Selection, Window

MAX_SPAN = timedelta(days=366)


def zone(name: str) -> ZoneInfo:
    """The IANA zone `name`, or a 400 naming the parameter."""
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise FieldError(f"tz: unknown time zone {name!r} (an IANA name such as America/Porto_Velho)", "tz") from None


def window(start: str, end: str, tz_name: str) -> Window:
    """The checked window: `from` before `to`, at most MAX_SPAN long."""
    tz = zone(tz_name)
    w = Window(instant(start, tz, "from"), instant(end, tz, "to", end=True), tz)
    if w.end <= w.start:
        raise FieldError("to: must be after from", "to")
    if w.end - w.start > MAX_SPAN:
        raise FieldError(f"to: a report covers at most {MAX_SPAN.days} days", "to")
    return w


def common(
    start: str = Query(..., alias="from", max_length=40, description="local date or date-time, or RFC 3339"),
    end: str = Query(
        ..., alias="to", max_length=40, description="the last day, minute or second included (see telemetria/period.py)"
    ),
    tz: str = Query("America/Porto_Velho", max_length=64),
    vehicle_id: list[Annotated[int, Field(ge=1, le=MAX_ID)]] | None = Query(None),
    contractor_id: int | None = Query(None, ge=1, le=MAX_ID),
    route_id: int | None = Query(None, ge=1, le=MAX_ID),
) -> tuple[Window, Selection]:
    """The parameters every report takes."""
    if sum(x is not None for x in (vehicle_id, contractor_id, route_id)) > 1:
        raise FieldError("give at most one of vehicle_id, contractor_id, route_id", "vehicle_id")
    if vehicle_id is not None and len(vehicle_id) > 1000:
        raise FieldError("vehicle_id: at most 1000 vehicles", "vehicle_id")
    return window(start, end, tz), Selection(vehicle_id, contractor_id, route_id)


def report_params(
    stop_min_s: float | None = Query(None, ge=10, le=3600),
    authorized_radius_m: float | None = Query(None, ge=5, le=1000),
    speeding_min_s: float | None = Query(None, ge=0, le=600),
    default_limit_kmh: float | None = Query(None, gt=0, le=150),
    deviation_tolerance_m: float | None = Query(None, ge=10, le=5000),
    max_jump_kmh: float | None = Query(None, ge=50, le=400),
) -> ReportParams:
    """The report's knobs: defaults, with any the request overrides (rollups are used only for defaults)."""
    given: dict[str, Any] = {
        k: v
        for k, v in {
            "stop_min_s": stop_min_s,
            "authorized_radius_m": authorized_radius_m,
            "speeding_min_s": speeding_min_s,
            "default_limit_kmh": default_limit_kmh,
            "deviation_tolerance_m": deviation_tolerance_m,
            "max_jump_kmh": max_jump_kmh,
        }.items()
        if v is not None
    }
    return replace(DEFAULT, **given) if given else DEFAULT
