"""`GET /api/v1/roads/status` (the road network in use) and `GET /api/v1/roads` (its ways in a box, as GeoJSON):
what the pages draw as an offline base layer, so the map shows roads and their names where no tile server is
allowed or reachable."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping
from typing import Any

import shapely
from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from telemetria.auth.guard import require
from telemetria.auth.roles import Perm, Principal
from telemetria.deps import Conn
from telemetria.http import FieldError, json_response
from telemetria.roads import queries as q
from telemetria.roads import store
from telemetria.roads.model import Network

router = APIRouter(prefix="/api/v1", tags=["roads"])

MAX_FEATURES = 4000  # per answer: a phone draws this many lines without trouble
MAX_SPAN_DEG = 2.0  # a box wider or taller than this is refused: a municipality fits in far less
# The least zoom at which each kind of way is drawn: trunks from afar, tracks and service roads close up.
MIN_ZOOM = {"motorway": 0, "trunk": 0, "primary": 0, "secondary": 9, "tertiary": 10, "unclassified": 11,
            "residential": 12, "living_street": 13, "road": 12, "track": 13, "service": 14}  # fmt: skip
OTHER_KINDS_ZOOM = 12  # kinds not listed above (links, busways...) show from this zoom


def network_json(n: Network) -> dict[str, Any]:
    return {
        "network_id": n.id, "source": n.source, "sha256": n.sha256, "bbox": list(n.bbox) if n.bbox else None,
        "imported_at": n.imported_at.isoformat(), "ways": n.ways, "km": round(n.km, 3),
        "named_km": round(n.named_km, 3), "paved_km": round(n.paved_km, 3),
        "effective_from": n.effective_from.isoformat() if n.effective_from else None, "localities": n.localities,
    }  # fmt: skip


@router.get("/roads/status")
async def status(_: Principal = Depends(require(Perm.READ)), *, conn: Conn) -> Response:
    """The road network in use (`network`: null when none was imported: km are then measured as before)."""
    n = await store.current(conn)
    return json_response({"network": None if n is None else network_json(n)})


def parse_bbox(text: str) -> tuple[float, float, float, float]:
    """W,S,E,N degrees, checked: 400 naming `bbox` when it is not four numbers of a box on the Earth."""
    try:
        w, s, e, n = (float(x) for x in text.split(","))
    except ValueError:
        raise FieldError("bbox: four numbers W,S,E,N (degrees) are expected", "bbox") from None
    if not all(math.isfinite(x) for x in (w, s, e, n)) or not (-180 <= w < e <= 180 and -90 <= s < n <= 90):
        raise FieldError("bbox: W < E within -180..180 and S < N within -90..90 are expected", "bbox")
    if e - w > MAX_SPAN_DEG or n - s > MAX_SPAN_DEG:
        raise FieldError(f"bbox: at most {MAX_SPAN_DEG:g}° wide and tall", "bbox")
    return w, s, e, n


def feature(way: Mapping[str, Any], tolerance_deg: float) -> dict[str, Any]:
    """A stored way (queries.MAP_WAYS's row) as a GeoJSON feature, simplified to `tolerance_deg`."""
    line = shapely.simplify(shapely.linestrings(list(zip(way["lon"], way["lat"], strict=True))), tolerance_deg)
    coords = [[round(x, 6), round(y, 6)] for x, y in shapely.get_coordinates(line).tolist()]
    return {
        "type": "Feature",
        "geometry": {"type": "LineString", "coordinates": coords},
        "properties": {
            "road": way["name"] or way["ref"], "highway": way["highway"], "paved": way["paved"],
            "surface": way["surface"],
        },
    }  # fmt: skip


def features(rows: list[Any], zoom: int) -> list[dict[str, Any]]:
    tolerance = 360.0 / (256 * 2**zoom)  # degrees per pixel at the equator
    return [feature(r, tolerance) for r in rows]


@router.get("/roads")
async def ways(
    bbox: str = Query(..., description="W,S,E,N degrees"),
    zoom: int = Query(14, ge=0, le=22, description="the map's zoom: fewer and simpler ways from afar"),
    _: Principal = Depends(require(Perm.READ)),
    *,
    conn: Conn,
) -> Response:
    """The ways of the network in use inside `bbox`, as a GeoJSON FeatureCollection (road name or ref, highway
    kind, paved), simplified to the zoom's pixel; `truncated` when more than MAX_FEATURES would be drawn."""
    box = parse_bbox(bbox)
    n = await store.current(conn)
    if n is None:
        return json_response({"type": "FeatureCollection", "features": [], "network_id": None, "truncated": False})
    hidden = [kind for kind, least in MIN_ZOOM.items() if least > zoom]
    found = await q.map_ways(conn, n.id, box, hidden, zoom >= OTHER_KINDS_ZOOM, list(MIN_ZOOM), MAX_FEATURES + 1)
    truncated = len(found) > MAX_FEATURES
    feats = await asyncio.to_thread(features, found[:MAX_FEATURES], zoom)  # simplifying: off the event loop
    return json_response(
        {"type": "FeatureCollection", "features": feats, "network_id": n.id, "truncated": truncated},
        headers={"Cache-Control": "private, max-age=300"},
    )
