"""The two baselines for single-fix ingest, served by bench/ingest.py under the service's own server
settings (uvloop, httptools, one worker, no access log), with the same requests.

- `bare`: a plain Starlette route that reads the body, parses it with orjson and answers as the
  service does. The service's ingest route is a plain Starlette route with orjson too, so this is
  the limit on the same stack: what is left when the service does nothing.
- `app`: FastAPI with a 13-field pydantic model for the body. It is what a typical FastAPI app
  costs for the same request, not a limit: it does more per request than the service's route.
- `stack()`: the service's own app (its ingest front and middleware, FastAPI for the rest) with its
  ingest route swapped for the bare one. Not a baseline to meet but a split of the gap: bare → stack is what
  the framework and middleware cost per request, stack → service what ingest itself does.

None of them authenticates, validates or stores. The gap between the service and `bare` is what
the service adds per request: its middleware (headers, request id, body limit), the in-flight
budget, auth, decode, validate and the wait for the database's commit.
"""

from __future__ import annotations

from datetime import datetime

import orjson
from fastapi import FastAPI
from fastapi.responses import Response
from pydantic import BaseModel
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.routing import Route

# Same answer shape and serializer as the service, so response size and encoding match.
_ANSWER = {"accepted": 1, "duplicates": 0, "rejected": []}
_READY = b'{"status":"ready"}'

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
    return Response(orjson.dumps(_ANSWER), media_type="application/json")


@app.get("/readyz")
async def readyz() -> Response:
    return Response(_READY, media_type="application/json")


async def _bare_fix(request: Request) -> Response:
    orjson.loads(await request.body())
    return Response(orjson.dumps(_ANSWER), media_type="application/json")


async def _bare_ready(request: Request) -> Response:
    return Response(_READY, media_type="application/json")


bare = Starlette(routes=[Route("/api/v1/fixes", _bare_fix, methods=["POST"]), Route("/readyz", _bare_ready)])


def stack() -> FastAPI:
    """The service's app, settings from the environment, its ingest route answered by the bare no-op (a factory)."""
    from telemetria.app import create_app
    from telemetria.settings import Settings

    service = create_app(Settings())
    routes = service.router.routes
    at = next(i for i, r in enumerate(routes) if isinstance(r, Route) and r.path == "/api/v1/fixes")
    routes[at] = Route("/api/v1/fixes", _bare_fix, methods=["POST"])
    if service.ingest_front is not None:  # the route the service really serves it by, in front of FastAPI
        service.ingest_front.endpoints["/api/v1/fixes"] = _bare_fix
    return service
