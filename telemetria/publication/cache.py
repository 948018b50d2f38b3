"""Answers of the public area that browsers and proxies may keep: `Cache-Control: public`, an ETag, 304s.

Nothing in them is anyone's: any cache may keep them for five minutes, then ask again with If-None-Match and get
a bodiless 304 when the content has not changed.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from typing import Any

from fastapi import Request
from fastapi.responses import Response

CACHE_CONTROL = "public, max-age=300"
MEMO_TTL_S = 300.0  # as long as any cache may keep the answer anyway
MEMO_SIZE = 64


class Memo:
    """Figures computed for the public, kept MEMO_TTL_S seconds per app: an anonymous caller asking again (or with
    junk parameters that defeat proxies' caches) does not make the service measure the month again."""

    def __init__(self, ttl_s: float = MEMO_TTL_S, size: int = MEMO_SIZE) -> None:
        self.ttl_s, self.size = ttl_s, size
        self._items: OrderedDict[Any, tuple[float, Any]] = OrderedDict()

    def get(self, key: Any, now: float | None = None) -> Any | None:
        hit = self._items.get(key)
        if hit is None or hit[0] <= (time.monotonic() if now is None else now):
            self._items.pop(key, None)
            return None
        return hit[1]

    def put(self, key: Any, value: Any, now: float | None = None) -> None:
        self._items[key] = ((time.monotonic() if now is None else now) + self.ttl_s, value)
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)


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
