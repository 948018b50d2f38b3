"""The ASGI application: `build()` reads settings once; `create_app(settings)` wires everything."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import asyncpg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import Response
from starlette.types import Receive, Scope, Send

from telemetria import __version__, apidocs, metrics
from telemetria.auditread import api as audit_api
from telemetria.auth import api as auth_api
from telemetria.auth.throttle import KeyedLocks, LoginThrottle
from telemetria.bodylimit import BodyLimitMiddleware
from telemetria.contracts import api as contracts_api
from telemetria.db import DB_ERRORS, connect, create_pool, is_unavailable, pending_migrations
from telemetria.forwarded import ForwardedMiddleware
from telemetria.headers import SecurityHeadersMiddleware
from telemetria.http import FieldError, HttpError, bearer_token, error_response, json_response, unavailable
from telemetria.ingest import api as ingest_api
from telemetria.ingest.auth import TrackerAuth
from telemetria.ingest.front import IngestFront
from telemetria.ingest.inflight import InflightBudget
from telemetria.ingest.service import IngestService, limits_from
from telemetria.ingest.writer import Writer
from telemetria.live import api as live_api
from telemetria.logs import RequestIdMiddleware
from telemetria.malloc import give_back_large_blocks
from telemetria.measurement import api as measurement_api
from telemetria.nulguard import NulGuardMiddleware
from telemetria.occurrences import api as occurrences_api
from telemetria.occurrences import day as day_api
from telemetria.occurrences.detection import detector
from telemetria.occurrences.detection.duewindows import DueWindows
from telemetria.occurrences.notify import outbox as notify
from telemetria.ops import retention
from telemetria.publication import api as publication_api
from telemetria.publication.limit import PublicLimitMiddleware
from telemetria.registry import api_drivers, api_fleet, api_routes, api_versions
from telemetria.reports import api as reports_api
from telemetria.reports import knobs as report_knobs
from telemetria.reports.store import rollup
from telemetria.reports.store.queries import last_fixes
from telemetria.roads import api as roads_api
from telemetria.roads.inforce import NetworkChanged
from telemetria.seals import api as seals_api
from telemetria.seals import upload
from telemetria.seals import verify_api as seals_verify_api
from telemetria.sete import api as sete_api
from telemetria.settings import Settings
from telemetria.traccar import api as traccar_api
from telemetria.traccar import api_gateways
from telemetria.traccar.auth import GatewayAuth
from telemetria.web import pages, public_pages

log = logging.getLogger(__name__)
# Trackers' ways in, served in front of FastAPI (ingest/front.py): our JSON API, OsmAnd, Traccar's forwarding.
INGEST_ROUTES = [*ingest_api.ROUTES, *traccar_api.ROUTES]
_METRICS_CHALLENGE = {"WWW-Authenticate": 'Bearer realm="metrics"'}

# Every user-facing API router; each route declares its guard (see auth/guard.py).
API_ROUTERS = (
    auth_api.router, api_fleet.router, api_drivers.router, api_routes.router, api_versions.router, audit_api.router,
    reports_api.router, live_api.router, contracts_api.router, measurement_api.router, occurrences_api.router,
    day_api.router, seals_api.router, seals_verify_api.router, roads_api.router, api_gateways.router,
    sete_api.router,
)  # fmt: skip


class Telemetria(FastAPI):
    """FastAPI, with the ingest routes served in front of its stack (telemetria/ingest/front.py)."""

    ingest_front: IngestFront | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        front = self.ingest_front
        if front is not None and scope["type"] == "http" and front.handles(scope):
            scope["app"] = self  # what Starlette sets: the handlers find app.state through it
            await front(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def create_app(settings: Settings) -> Telemetria:
    app = Telemetria(
        title="Telemetria",
        version=__version__,
        lifespan=partial(_lifespan, settings),
        description="Telemetria do transporte escolar municipal (Lei 3.588/2023, Art. 15): posições dos "
        "rastreadores, cadastro, mapa ao vivo, relatórios e auditoria. Períodos: `to` é o último dia, minuto "
        "ou segundo incluído.",
        docs_url=None,  # served by telemetria/apidocs.py from the package's own files, not from a CDN
        redoc_url=None,
        # We export Prometheus metrics and JSON logs, not OpenTelemetry. Left on, FastAPI asks the global
        # OpenTelemetry providers on every request whether one is configured (about 5-12 µs a request,
        # 2-3 % of a single-fix post in bench.profile), to find that none is.
        telemetry={"tracing": False, "metrics": False, "logs": False},
    )
    _add_state(app, settings)
    _add_middleware(app, settings)
    _add_routers(app)
    _add_openapi(app)
    _add_error_handlers(app)
    _add_ops_endpoints(app, settings)
    # the runs due on a day, as the boletim counts them, for the reporting and schedule reports (reports/due.py)
    app.state.due_windows = DueWindows
    return app


@asynccontextmanager
async def _lifespan(settings: Settings, app: FastAPI) -> AsyncIterator[None]:
    """The services that need the event loop: the pools, the writer, and the periodic tasks."""
    # min_size=0: the service starts (and answers 503) even while the database is down.
    pool = await create_pool(settings, min_size=0)
    # Reports read through reports_pool: a streaming replica when configured, else the same pool.
    reports_pool = pool
    if settings.reports_database_url:
        # Read-only (a replica): the registry's day promotion is the main pool's (db.DayPromotion).
        reports_pool = await create_pool(settings, dsn=settings.reports_database_url, min_size=0, promote=False)
    writer = Writer(
        partial(connect, settings),
        max_rows=settings.writer_max_rows,
        flushers=settings.writer_connections,
        max_pending_rows=settings.writer_max_pending_rows,
        max_link_s=report_knobs.DEFAULT.max_link_s,
    )
    writer.start()
    app.state.pool = pool
    app.state.reports_pool = reports_pool
    app.state.writer = writer
    app.state.tracker_auth = TrackerAuth(pool, ttl_s=settings.auth_cache_ttl_s)
    app.state.gateway_auth = GatewayAuth(pool, app.state.tracker_auth, ttl_s=settings.auth_cache_ttl_s)
    app.state.ingest = IngestService(writer, limits_from(settings))
    # Verifications' folders left in the temporary folder by a process killed mid-way (seals/upload.py).
    await asyncio.to_thread(upload.sweep, time.time())
    tasks = []
    if settings.retention_interval_s > 0:
        periodic = retention.periodic(pool, settings.retention_days, settings.retention_interval_s)
        tasks.append(asyncio.create_task(periodic, name="retention"))
    if settings.rollup_interval_s > 0:
        tasks.append(asyncio.create_task(rollup.periodic(pool, settings.rollup_interval_s), name="rollups"))
    # Always started: with notifications off it records that (so nothing is queued) and ends.
    tasks.append(asyncio.create_task(notify.periodic(pool, settings), name="notifications"))
    if settings.detector_interval_s > 0:
        supervise = detector.supervise(
            settings.dsn(), settings.detector_interval_s, settings.detector_nice, settings.detector_processes
        )
        tasks.append(asyncio.create_task(supervise, name="detector"))
    try:
        yield
    finally:
        for task in reversed(tasks):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await writer.stop()
        if (jobs := getattr(app.state, "jobs", None)) is not None:
            jobs.close()
        if reports_pool is not pool:
            await reports_pool.close()
        await pool.close()


def _add_state(app: FastAPI, settings: Settings) -> None:
    """What needs no event loop: settings, login throttles, the ingest in-flight budget."""
    notify.kinds(settings)  # an unknown kind in TELEMETRIA_NOTIFY_KINDS stops the start, naming it
    app.state.settings = settings
    app.state.login_throttle = LoginThrottle(settings.login_attempts_per_min, 60.0)
    app.state.login_locks = KeyedLocks()
    app.state.ingest_budget = InflightBudget(
        settings.ingest_max_inflight_bytes,
        settings.ingest_max_inflight_requests,
        share_bytes=settings.tracker_share_bytes,
        share_requests=settings.tracker_share_requests,
    )


def _add_middleware(app: Telemetria, settings: Settings) -> None:
    """Every route's guarantees, outermost last; the ingest front gets the same ones but the NUL guard."""
    # Inside the body limit, which bounds what the NUL guard reads; ingest rejects NULs per item itself.
    app.add_middleware(NulGuardMiddleware, skip={route.path for route in INGEST_ROUTES})
    app.add_middleware(  # every route, before parsing: bodies bounded in size and in time
        BodyLimitMiddleware,
        limit_bytes=settings.max_body_bytes,
        timeout_s=settings.body_timeout_s,
        min_rate=settings.body_min_bytes_per_s,
    )
    app.add_middleware(RequestIdMiddleware, access=settings.access_log)
    # The public area's share per client address (publication/limit.py): its refusals cost no routing.
    app.add_middleware(
        PublicLimitMiddleware,
        enabled=settings.public_enabled,
        rate=settings.public_requests_per_s,
        burst=settings.public_burst,
        hold_s=settings.public_refusal_hold_s,
    )
    # Outside everything but the headers: everything inside sees the client's address, not the proxy's.
    app.add_middleware(ForwardedMiddleware, trusted=settings.trusted_proxies)
    app.add_middleware(SecurityHeadersMiddleware)  # outermost of all: every answer has its headers

    # The ingest routes get the same guarantees in front of all this (telemetria/ingest/front.py).
    app.ingest_front = IngestFront(
        {route.path: route for route in INGEST_ROUTES},
        partial(
            BodyLimitMiddleware,
            limit_bytes=settings.max_body_bytes,
            timeout_s=settings.body_timeout_s,
            min_rate=settings.body_min_bytes_per_s,
        ),
        _db_down,
        trusted=settings.trusted_proxies,
        access=settings.access_log,
    )


def _add_routers(app: FastAPI) -> None:
    # The ingest routes stay in the router too: their other methods' 405s, and the routes' listing.
    app.router.routes.extend(INGEST_ROUTES)
    for router in API_ROUTERS:
        app.include_router(router)
    # The public area (no login; 404 while public_enabled is off): not in API_ROUTERS, whose routes all need a login.
    app.include_router(publication_api.router)
    app.include_router(public_pages.router)
    app.include_router(seals_api.public_router)  # no login: 404 unless publication is on
    app.include_router(pages.router)  # the web system's HTML pages (telemetria/web)
    app.mount("/static", pages.Static(directory=pages.HERE / "static"), name="static")
    app.include_router(apidocs.router)
    app.mount(apidocs.ASSETS, apidocs.assets(), name="docs-assets")


def _add_openapi(app: FastAPI) -> None:
    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            schema["paths"] = {**ingest_api.OPENAPI_PATHS, **traccar_api.OPENAPI_PATHS, **schema["paths"]}
            schema.setdefault("components", {}).setdefault("securitySchemes", {}).update(
                ingest_api.OPENAPI_SECURITY | traccar_api.OPENAPI_SECURITY
            )
            schema["components"].setdefault("schemas", {}).update(api_routes.OPENAPI_COMPONENTS)
            apidocs.summarize(schema)
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


def _add_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(HttpError)
    async def _http_error(request: Request, exc: HttpError) -> Response:
        return error_response(exc)

    @app.exception_handler(FieldError)  # registry and user-management refusals
    async def _field_error(request: Request, exc: FieldError) -> Response:
        return json_response(exc.answer(), exc.status)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> Response:
        errors = [{"field": ".".join(str(p) for p in e["loc"]), "error": e["msg"]} for e in exc.errors()]
        detail = "; ".join(f"{e['field']}: {e['error']}" for e in errors)
        return json_response({"detail": detail, "errors": errors}, 422)

    @app.exception_handler(NetworkChanged)  # a roads import replaced the network a report was reading: rare, brief
    async def _roads_changed(request: Request, exc: NetworkChanged) -> Response:
        detail = "a malha viária foi reimportada durante o cálculo; tente de novo"
        return json_response({"detail": detail}, 503, headers={"Retry-After": "1"})

    for exc_type in DB_ERRORS:
        app.add_exception_handler(exc_type, _db_down)


def _add_ops_endpoints(app: FastAPI, settings: Settings) -> None:
    """/api/v1 (about), /healthz, /readyz and /metrics."""

    @app.get("/api/v1", include_in_schema=False)
    async def about() -> Response:
        return json_response(
            {"service": "telemetria", "version": __version__, "ingest": ["/api/v1/fixes", "/osmand"], "docs": "/docs"}
        )

    @app.get("/healthz", tags=["ops"])
    async def healthz() -> Response:
        return json_response({"status": "ok", "pid": os.getpid()})

    @app.get("/readyz", tags=["ops"])
    async def readyz(request: Request) -> Response:
        try:
            async with request.app.state.pool.acquire(timeout=5) as conn:
                pending = await pending_migrations(conn)
        except DB_ERRORS as e:  # readiness is exactly "can we use the database now"
            return json_response({"status": "unready", "database": f"unreachable: {type(e).__name__}"}, 503)
        if pending:
            return json_response({"status": "unready", "migrations_pending": [m.version for m in pending]}, 503)
        return json_response({"status": "ready"})

    @app.get("/metrics", tags=["ops"], summary="Prometheus metrics (text exposition format)")
    async def metrics_endpoint(request: Request) -> Response:
        token = settings.metrics_token
        if token is None and settings.metrics_require_token:
            return json_response({"detail": "metrics are closed until TELEMETRIA_METRICS_TOKEN is set"}, 403)
        if token is not None and not secrets.compare_digest(
            (bearer_token(request) or "").encode(), token.get_secret_value().encode()
        ):
            return json_response(
                {"detail": "metrics need Authorization: Bearer <metrics token>"}, 401, _METRICS_CHALLENGE
            )
        try:
            async with asyncio.timeout(5):
                fleet = [(f.plate, f.age_s) for f in await last_fixes(request.app.state.pool)]
            up = True
        except DB_ERRORS:  # (TimeoutError is one) the process metrics are still worth serving
            fleet, up = [], False
        body = metrics.render(metrics.database_families(up, fleet))
        return Response(body, media_type=metrics.CONTENT_TYPE)


async def _db_down(request: Request, exc: Exception) -> Response:
    if isinstance(exc, asyncpg.DataError):
        # A value the database cannot take that validation let through: the client's input, so a 400, never
        # a 500, and in our words: the database's text names its internals and can quote the value.
        log.info("database refused a value during %s %s: %s", request.method, request.url.path, type(exc).__name__)
        return json_response({"detail": _refused_value(exc)}, 400)
    if not is_unavailable(exc):
        raise exc
    log.warning("database unavailable during %s %s: %s", request.method, request.url.path, exc)
    return error_response(unavailable())


def _refused_value(exc: Exception) -> str:
    if isinstance(exc, asyncpg.CharacterNotInRepertoireError | asyncpg.UntranslatableCharacterError):
        return "invalid value: a text contains a NUL character (U+0000) or is not valid UTF-8, which cannot be stored"
    if isinstance(exc, asyncpg.StringDataRightTruncationError):
        return "invalid value: a text is longer than the database can store"
    return "invalid value: a value is out of the range or form the database can store"


def build() -> Telemetria:
    """Entry point for uvicorn's factory mode: settings are read here, once per process."""
    give_back_large_blocks()  # request bodies freed leave the process's memory (telemetria/malloc.py)
    return create_app(Settings())
