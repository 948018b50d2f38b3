"""Small HTTP helpers shared by the routers: JSON answers, error bodies, bounded body reads."""

from __future__ import annotations

from collections.abc import Callable
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
    """A request that cannot be carried out because of one field; answered as `{"detail", "field"}`.

    `people`, when given, is the refusal as a Portuguese sentence for the person, answered as `message` too:
    pages show it as it is (api.js `explain`), as they do the process's 409s."""

    status = 400

    def __init__(self, message: str, field: str | None = None, status: int | None = None, *, people: str = ""):
        super().__init__(message)
        self.field = field
        self.people = people
        if status is not None:
            self.status = status

    def answer(self) -> dict[str, Any]:
        body: dict[str, Any] = {"detail": str(self), "field": self.field}
        return {**body, "message": self.people} if self.people else body


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


async def read_body(request: Request, limit: int, cover: Callable[[int], None] | None = None) -> bytes:
    """The request body, or 413 as soon as it is known to exceed `limit` bytes, or 408 when it does not
    arrive in time (the deadline is BodyLimitMiddleware's, on every route).

    `cover` is told the size read so far as bytes arrive (a claim that grows with them; 503 if it cannot).
    """
    return b"".join(await read_chunks(request, limit, cover))


async def read_chunks(request: Request, limit: int, cover: Callable[[int], None] | None = None) -> list[bytes]:
    """The request body as the pieces it arrived in (read_body's checks), not joined: a caller that hands a
    large body on (to a file, to a worker) need not copy megabytes on the event loop while holding the GIL."""
    declared_length(request, limit)
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise HttpError(413, f"body exceeds the limit of {limit} bytes")
            if cover is not None:
                cover(size)
            chunks.append(chunk)
    except BodyCut as e:
        raise HttpError(e.status, e.detail) from None
    return chunks


def overloaded(why: str) -> HttpError:
    return unavailable(f"overloaded, retry later: {why}")


def bearer_token(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, token = header.partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None
