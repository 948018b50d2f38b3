"""Seals API: `GET /api/v1/seals` (every version of the vehicle-days' seals a user may see) and the public fleet
roots, `GET /public/seals` and `GET /public/seals/{yyyy-mm-dd}` (no login; only when publication is on), which a
root printed in a process is checked against (docs/verification.md)."""

from __future__ import annotations

import hashlib
import re
from datetime import date, timedelta
from typing import Any

import orjson
from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from telemetria.auth.guard import require
from telemetria.auth.roles import Perm, Principal
from telemetria.deps import Conn
from telemetria.http import FieldError, json_response
from telemetria.ids import IdQuery
from telemetria.seals import store
from telemetria.seals.model import Seal

router = APIRouter(prefix="/api/v1/seals", tags=["seals"])
public_router = APIRouter(prefix="/public/seals", tags=["public"])
READ = Depends(require(Perm.READ))
MAX_SPAN = timedelta(days=366)
PUBLIC_DAYS = 3660  # the list of days a public answer holds at most: ten years
PUBLIC_CACHE = {"Cache-Control": "public, max-age=300"}


def _day(text: str, name: str) -> date:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        raise FieldError(f"{name}: {text!r} is not a date (YYYY-MM-DD): seals are of whole local days", name)
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise FieldError(f"{name}: {text!r} is not a date (YYYY-MM-DD)", name) from None


@router.get("")
async def list_seals(
    start: str = Query(..., alias="from", max_length=40, description="first local day, e.g. 2026-03-01"),
    end: str = Query(..., alias="to", max_length=40, description="last local day included, e.g. 2026-03-31"),
    vehicle_id: IdQuery = None, who: Principal = READ, *, conn: Conn,
) -> Response:  # fmt: skip
    """Every version of the daily seals of the vehicles the caller may see, by vehicle, day and version."""
    first, last = _day(start, "from"), _day(end, "to")
    if last < first:
        raise FieldError("to: must not be before from", "to")
    if last - first >= MAX_SPAN:
        raise FieldError(f"to: at most {MAX_SPAN.days} days at a time", "to")
    if vehicle_id is not None and not await store.visible(conn, who.scope, vehicle_id):
        raise FieldError(f"vehicle_id: no vehicle {vehicle_id}", "vehicle_id", 404)
    found = await store.seals(conn, who.scope, vehicle_id, first, last)
    return json_response({"items": [_item(s) for s in found]})


def _item(s: Seal) -> dict[str, Any]:
    return {
        "vehicle_id": s.vehicle_id, "plate": s.plate, "date": s.day, "version": s.version, "fixes": s.fixes,
        "sha256": s.sha256, "previous_sha256": s.previous_sha256, "sealed_at": s.sealed_at,
    }  # fmt: skip


def _published(request: Request) -> None:
    if not request.app.state.settings.public_enabled:
        raise FieldError("not found", None, 404)  # the public area is off: as if it did not exist


def _public(request: Request, content: Any) -> Response:
    """A public answer, cacheable, with an ETag: a client that has it gets 304 without the body."""
    body = orjson.dumps(content)
    headers = {**PUBLIC_CACHE, "ETag": f'"{hashlib.sha256(body).hexdigest()[:32]}"'}
    if headers["ETag"] in (t.strip() for t in request.headers.get("if-none-match", "").split(",")):
        return Response(status_code=304, headers=headers)
    return Response(body, media_type="application/json", headers=headers)


@public_router.get("")
async def public_roots(request: Request) -> Response:
    """The days with a fleet root, newest first, each with its latest root (no login; publication on).

    The public routes take a connection of the pool for their reads only and give it back before the answer is
    sent: an anonymous client reading slowly holds none (issue 33, item 2)."""
    _published(request)
    async with request.app.state.pool.acquire() as conn:
        roots = await store.latest_roots(conn, PUBLIC_DAYS)
    return _public(request, {"items": [{"date": r.day, **r.as_json()} for r in roots]})


@public_router.get("/{day}")
async def public_day(day: str, request: Request) -> Response:
    """A day's fleet roots, every version, and the leaves of the latest (no login; publication on; like
    public_roots, no connection held while the answer is sent)."""
    _published(request)
    when = _day(day, "day")
    async with request.app.state.pool.acquire() as conn:
        roots, leaves = await store.day_roots(conn, when)
    if not roots:
        raise FieldError(f"day: no fleet root for {when.isoformat()}", "day", 404)
    return _public(request, {"date": when, "roots": [r.as_json() for r in roots], "leaves": leaves})
