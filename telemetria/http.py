"""Small HTTP helpers shared by the routers: JSON answers, error bodies, bounded body reads."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Request
from fastapi.responses import Response

from telemetria.bodylimit import BodyCut

RETRY_AFTER_S = 5


class HttpError(Exception):
    """An answer other than 2xx, with a message for the client that names what is wrong."""

    def __init__(self, status: int, detail: str, headers: dict[str, str] | None = None, **extra: Any):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.headers = headers or {}
        self.extra = extra


class FieldError(ValueError):
    """A request that cannot be carried out because of one field; answered as `{"detail", "field"}`."""

    status = 400

    def __init__(self, message: str, field: str | None = None, status: int | None = None):
        super().__init__(message)
        self.field = field
        if status is not None:
            self.status = status


def json_response(content: Any, status: int = 200, headers: dict[str, str] | None = None) -> Response:
    return Response(orjson.dumps(content), status_code=status, media_type="application/json", headers=headers)


def error_response(err: HttpError) -> Response:
    return json_response({"detail": err.detail, **err.extra}, err.status, err.headers)


def unavailable(detail: str = "database unavailable, retry later") -> HttpError:
    return HttpError(503, detail, {"Retry-After": str(RETRY_AFTER_S)})


def declared_length(request: Request, limit: int) -> int:
    """The body length in bytes the client declared (0 if none), or 413 when it exceeds `limit`."""
    declared = request.headers.get("content-length")
    if declared is None or not (declared.isascii() and declared.isdigit()):
        return 0  # chunked, or a header the server's parser let through: counted as it arrives
    if len(declared) > 18 or int(declared) > limit:
        raise HttpError(413, f"body of {declared[:20]} bytes exceeds the limit of {limit} bytes")
    return int(declared)


async def read_body(request: Request, limit: int, hold: Hold | None = None) -> bytes:
    """The request body, or 413 as soon as it is known to exceed `limit` bytes, or 408 when it does not
    arrive in time (the deadline is BodyLimitMiddleware's, on every route).

    With `hold`, bytes beyond what the client declared must fit its budget as they arrive (503 if not).
    """
    declared_length(request, limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HttpError(413, f"body exceeds the limit of {limit} bytes")
            if hold is not None:
                hold.cover(size)
            chunks.append(chunk)
    except BodyCut as e:
        raise HttpError(e.status, e.detail) from None
    return b"".join(chunks)


class InflightBudget:
    """A per-process cap on requests in progress and the body bytes they hold (buffered, decoded, queued).

    A request claims its declared body length before the body is read; one that does not fit is
    answered 503 + Retry-After at once, having cost almost nothing. Plain counters: only the event
    loop's thread touches them, and no `await` falls between a check and its update.
    """

    def __init__(self, max_bytes: int, max_requests: int) -> None:
        self.max_bytes = max_bytes
        self.max_requests = max_requests
        self.bytes = 0
        self.requests = 0

    def hold(self, declared_bytes: int) -> Hold:
        """A claim on one request and `declared_bytes` of body, for a `with` block; 503 if it does not fit."""
        if self.requests >= self.max_requests:
            raise overloaded(f"{self.requests} requests in progress")
        if self.bytes + declared_bytes > self.max_bytes:
            raise overloaded(f"{self.bytes + declared_bytes} body bytes would be in progress, at most {self.max_bytes}")
        self.requests += 1
        self.bytes += declared_bytes
        return Hold(self, declared_bytes)


class Hold:
    """One request's claim on an InflightBudget; released when its `with` block ends, however it ends."""

    __slots__ = ("_budget", "bytes")

    def __init__(self, budget: InflightBudget, nbytes: int) -> None:
        self._budget: InflightBudget | None = budget
        self.bytes = nbytes

    def cover(self, nbytes: int) -> None:
        """Grow the claim to `nbytes` of body (one longer than declared, or undeclared); 503 if it does not fit."""
        budget, extra = self._budget, nbytes - self.bytes
        if budget is None or extra <= 0:
            return
        if budget.bytes + extra > budget.max_bytes:
            raise overloaded(f"{budget.bytes + extra} body bytes would be in progress, at most {budget.max_bytes}")
        budget.bytes += extra
        self.bytes = nbytes

    def release(self) -> None:
        budget, self._budget = self._budget, None
        if budget is not None:
            budget.requests -= 1
            budget.bytes -= self.bytes

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def overloaded(why: str) -> HttpError:
    return unavailable(f"overloaded, retry later: {why}")


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None
