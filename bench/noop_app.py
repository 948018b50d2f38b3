"""The baseline for single-fix ingest: FastAPI + uvicorn doing nothing but parse a fix-shaped body.

Served by bench/ingest.py with the service's own server settings (uvloop, httptools, one worker,
no access log), so the gap between the two is what the service adds: auth, decode, validate and
the round trip to the database.
"""

from __future__ import annotations

from datetime import datetime

import orjson
from fastapi import FastAPI
from fastapi.responses import Response
from pydantic import BaseModel

app = FastAPI(title="telemetria bench no-op")


class FixIn(BaseModel):
    ts: datetime
    lat: float
    lon: float
    speed_kmh: float | None = None
    heading_deg: float | None = None
    altitude_m: float | None = None
    accuracy_m: float | None = None
    hdop: float | None = None
    satellites: int | None = None
    ignition: bool | None = None
    odometer_m: float | None = None
    driver_id: str | None = None
    valid: bool = True


@app.post("/api/v1/fixes")
async def post_fix(fix: FixIn) -> Response:
    # Same answer shape and serializer as the service, so response size and encoding match.
    return Response(orjson.dumps({"accepted": 1, "duplicates": 0, "rejected": []}), media_type="application/json")


@app.get("/readyz")
async def readyz() -> Response:
    return Response(b'{"status":"ready"}', media_type="application/json")
