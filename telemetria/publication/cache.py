"""Answers of the public area that browsers and proxies may keep: `Cache-Control: public`, an ETag, 304s.

Nothing in them is anyone's: any cache may keep them for five minutes, then ask again with If-None-Match and get
a bodiless 304 when the content has not changed.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar, cast

from fastapi import Request
from fastapi.responses import Response

T = TypeVar("T")
CACHE_CONTROL = "public, max-age=300"
MEMO_TTL_S = 300.0  # as long as any cache may keep the answer anyway
MEMO_SIZE = 64
VERSIONED_TTL_S = 24 * 3600.0  # an answer keyed by its data version is never stale; only bounded in number


class Memo:
    """Figures computed for the public, kept MEMO_TTL_S seconds per app: an anonymous caller asking again (or with
    junk parameters that defeat proxies' caches) does not make the service measure the month again."""

    def __init__(self, ttl_s: float = MEMO_TTL_S, size: int = MEMO_SIZE) -> None:
        self.ttl_s, self.size = ttl_s, size
        self._items: OrderedDict[Any, tuple[float, Any]] = OrderedDict()
        self._flights: dict[Any, asyncio.Future[Any]] = {}

    def get(self, key: Any, now: float | None = None) -> Any | None:
        hit = self._items.get(key)
        if hit is None or hit[0] <= (time.monotonic() if now is None else now):
            self._items.pop(key, None)
            return None
        return hit[1]

    def put(self, key: Any, value: Any, now: float | None = None, ttl_s: float | None = None) -> None:
        self._items[key] = ((time.monotonic() if now is None else now) + (ttl_s or self.ttl_s), value)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    async def once(self, key: Any, compute: Callable[[], Awaitable[T]], ttl_s: float | None = None) -> T:
        """The value kept for `key`, else `compute()`'s, computed once however many callers ask meanwhile (they
        wait for the same result; a failure is theirs too, and nothing is kept)."""
        hit = self.get(key)
        if hit is not None:
            return cast(T, hit)
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = asyncio.get_running_loop().create_future()
            try:
                value = await compute()
            except BaseException as e:
                flight.set_exception(e)
                flight.exception()  # retrieved: no "never retrieved" warning when nobody else waited
                raise
            finally:
                self._flights.pop(key, None)
            self.put(key, value, ttl_s=ttl_s)
            flight.set_result(value)
            return value
        return cast(T, await asyncio.shield(flight))


def memo_of(request: Request) -> Memo:
    """The app's memo (made on first use)."""
    state = request.app.state
    if not hasattr(state, "public_memo"):
        state.public_memo = Memo()
    memo: Memo = state.public_memo
    return memo


def etag_of(body: bytes) -> str:
    """A strong validator: the quoted SHA-256 of the body (its first 32 hex digits)."""
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def matches(if_none_match: str | None, etag: str) -> bool:
    """Whether an If-None-Match header names `etag` (weak comparison, as RFC 9110 §13.1.2 says, or `*`)."""
    if not if_none_match:
        return False
    tags = [t.strip() for t in if_none_match.split(",")]
    return "*" in tags or etag in (t.removeprefix("W/") for t in tags)


def cached(request: Request, body: bytes, media_type: str, headers: dict[str, str] | None = None) -> Response:
    """`body` with the cache headers, or 304 when the request already has it."""
    etag = etag_of(body)
    common = {"Cache-Control": CACHE_CONTROL, "ETag": etag}
    if matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=common)
    return Response(body, media_type=media_type, headers={**common, **(headers or {})})


def version_etag(key: Any) -> str:
    """A strong validator named by the data version an answer was computed from (not by its bytes): checking it
    needs no body."""
    return '"v' + hashlib.sha256(repr(key).encode()).hexdigest()[:32] + '"'


def not_modified(etag: str) -> Response:
    return Response(status_code=304, headers={"Cache-Control": CACHE_CONTROL, "ETag": etag})


def versioned(body: bytes, media_type: str, etag: str, headers: dict[str, str] | None = None) -> Response:
    """`body` with the cache headers and the version's ETag."""
    common = {"Cache-Control": CACHE_CONTROL, "ETag": etag}
    return Response(body, media_type=media_type, headers={**common, **(headers or {})})
