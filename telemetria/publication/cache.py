"""Answers of the public area that browsers and proxies may keep: `Cache-Control: public`, an ETag, 304s.

Nothing in them is anyone's: any cache may keep them for five minutes, then ask again with If-None-Match and get
a bodiless 304 when the content has not changed.
"""

from __future__ import annotations

import hashlib

from fastapi import Request
from fastapi.responses import Response

CACHE_CONTROL = "public, max-age=300"


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
