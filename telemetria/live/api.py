"""`GET /api/v1/live`: what the live map polls, scoped like every other read."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response

from telemetria.auth.guard import require
from telemetria.auth.roles import Perm, Principal
from telemetria.deps import Conn
from telemetria.http import json_response
from telemetria.ids import IdQuery
from telemetria.live import queries
from telemetria.live.status import freshness
from telemetria.localtime import LOCAL_TZ

router = APIRouter(prefix="/api/v1", tags=["live"])


def _local(ts: datetime | None) -> str | None:
    return None if ts is None else ts.astimezone(LOCAL_TZ).isoformat()


def _round(x: float | None, digits: int) -> float | None:
    return None if x is None else round(x, digits)


@router.get("/live")
async def live(
    request: Request,
    vehicle_id: IdQuery = None,
    trail_s: int = Query(600, ge=0, le=3600, description="seconds of recent positions behind each vehicle"),
    who: Principal = Depends(require(Perm.READ)),
    *,
    conn: Conn,
) -> Response:
    """Each visible active vehicle's newest position, driver, route of the day and freshness (§2: 30 s)."""
    settings = request.app.state.settings
    now = datetime.now(UTC)
    rows = await queries.live(conn, who.scope, vehicle_id, now.astimezone(LOCAL_TZ).date())
    seen = [r["vehicle_id"] for r in rows if r["ts"] is not None]
    trails = await queries.trails(conn, seen, now - timedelta(seconds=trail_s), who.scope) if trail_s and seen else {}
    vehicles: list[dict[str, Any]] = []
    for r in rows:
        age = r["age_s"]
        vehicles.append(
            {
                "vehicle_id": r["vehicle_id"], "plate": r["plate"], "prefix": r["prefix"],
                "contractor_id": r["contractor_id"], "contractor": r["contractor"],
                "driver_id": r["driver_id"], "driver": r["driver"], "routes": r["routes"],
                "time": _local(r["ts"]), "received": _local(r["received_at"]),
                "age_s": None if age is None else max(0, round(age)),
                "status": freshness(age, settings.live_online_s, settings.live_offline_s).value,
                "lat": r["lat"], "lon": r["lon"], "speed_kmh": _round(r["speed_kmh"], 1),
                "heading_deg": _round(r["heading_deg"], 0), "ignition": r["ignition"],
                "trail": trails.get(r["vehicle_id"], []),
            }
        )  # fmt: skip
    return json_response(
        {
            "time": _local(now),
            "online_s": settings.live_online_s,
            "offline_s": settings.live_offline_s,
            "vehicles": vehicles,
        }
    )
