"""Structured logs: one JSON object per line, tagged with the request id; the X-Request-Id middleware.

No personal data: the access log has the method, the path without its query string (OsmAnd puts
the device id and the position there), the status and the duration; never client addresses,
tokens or bodies.
"""

from __future__ import annotations

import logging
import os
import re
import time
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

import orjson
from starlette.requests import ClientDisconnect
from starlette.types import ASGIApp, Message, Receive, Scope, Send

REQUEST_ID_HEADER = "X-Request-Id"
# The id of the request being served, for every log line written while serving it.
request_id: ContextVar[str | None] = ContextVar("request_id", default=None)

# An id from the client (or a proxy in front) is kept only if it is short and plain.
_GOOD_ID = re.compile(rb"[A-Za-z0-9._:\-]{1,128}")
_HEADER = REQUEST_ID_HEADER.lower().encode()
# Fields a log call may pass with `extra=` that the JSON line carries.
_EXTRA_FIELDS = ("method", "path", "status", "duration_ms")

access_log = logging.getLogger("telemetria.access")
log = logging.getLogger(__name__)


class JsonFormatter(logging.Formatter):
    """One JSON object per record: ts (UTC), level, logger, msg, pid, request_id, exc."""

    def format(self, record: logging.LogRecord) -> str:
        out: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            "pid": record.process,
        }
        rid = getattr(record, "request_id", None) or request_id.get()
        if rid:
            out["request_id"] = rid
        for key in _EXTRA_FIELDS:
            if (value := getattr(record, key, None)) is not None:
                out[key] = value
        if record.exc_info:
            out["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(out, default=str).decode()


class TextFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = super().format(record)
        rid = getattr(record, "request_id", None) or request_id.get()
        return f"{text} [{rid}]" if rid else text


def log_config(fmt: str = "json", level: str = "info") -> dict[str, Any]:
    """A logging.dictConfig for the service and uvicorn (whose own access log stays off)."""
    formatter: dict[str, Any] = (
        {"()": JsonFormatter}
        if fmt == "json"
        else {"()": TextFormatter, "format": "%(levelname)s %(name)s: %(message)s"}
    )
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"default": formatter},
        "handlers": {
            "stderr": {"class": "logging.StreamHandler", "formatter": "default", "stream": "ext://sys.stderr"}
        },
        "root": {"handlers": ["stderr"], "level": level.upper()},
        "loggers": {
            "uvicorn": {"handlers": [], "propagate": True},
            "uvicorn.error": {"handlers": [], "propagate": True},
            "uvicorn.access": {"handlers": [], "propagate": False, "level": "WARNING"},
        },
    }


def new_request_id() -> str:
    return os.urandom(16).hex()


def incoming_request_id(headers: list[tuple[bytes, bytes]]) -> str:
    """The client's (or a proxy's) X-Request-Id if it is short and plain, else a new one."""
    raw = next((v for k, v in headers if k == _HEADER), None)
    return raw.decode() if raw is not None and _GOOD_ID.fullmatch(raw) else new_request_id()


def request_id_header(rid: str) -> tuple[bytes, bytes]:
    return (_HEADER, rid.encode())


def note_disconnect(scope: Scope) -> None:
    # A tracker losing signal mid-upload is an everyday event, not a fault: one plain line, no traceback
    # (uncaught, the server would log it as an ERROR). Nothing is left to answer: the client is gone.
    log.info("client disconnected before sending the whole body: %s %s", scope["method"], scope["path"])


def log_access(scope: Scope, rid: str, status: int, start: float) -> None:
    """The access log's line for one request; `start` is its time.perf_counter() when it came in."""
    access_log.info(
        "%s %s %d",
        scope["method"],
        scope["path"],
        status,
        extra={
            "request_id": rid,
            "method": scope["method"],
            "path": scope["path"],
            "status": status,
            "duration_ms": round((time.perf_counter() - start) * 1000, 2),
        },
    )


class RequestIdMiddleware:
    """Honour a plain X-Request-Id or make one; echo it in the response; log the request if asked."""

    def __init__(self, app: ASGIApp, access: bool = False):
        self.app = app
        self.access = access

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = incoming_request_id(scope["headers"])
        header = request_id_header(rid)
        token = request_id.set(rid)
        status = 0
        start = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message["headers"] = [*message.get("headers", ()), header]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except ClientDisconnect:
            note_disconnect(scope)
        finally:
            if self.access:
                log_access(scope, rid, status, start)
            request_id.reset(token)
