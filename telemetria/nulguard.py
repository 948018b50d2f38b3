"""Text holding a NUL character (U+0000) is refused at the edge with a 400 naming the field (ASGI middleware).

PostgreSQL cannot store U+0000 in text; let through, such a value came back as the database's own error text.
Checked here once for every route, in the path, the query string and a JSON or form body, so no handler has
to remember it. The ingest routes are left out: they reject such a value per item and keep the rest of the
batch. Multipart bodies (route files) are not scanned, since a file may hold any bytes: their form fields pass
the registry's text checks, and the file readers refuse control characters in the names they take.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from typing import Any
from urllib.parse import parse_qsl

import orjson
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from telemetria.ingest.storable import NUL_ESCAPE

_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
_FORM = "application/x-www-form-urlencoded"


class NulGuardMiddleware:
    """Answer 400 `{"detail", "field"}` to a request whose path, query or JSON/form body holds a NUL."""

    def __init__(self, app: ASGIApp, skip: Collection[str] = ()) -> None:
        self.app = app
        self.skip = frozenset(skip)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in self.skip:
            await self.app(scope, receive, send)
            return
        field = "path" if "\x00" in scope["path"] else _in_form(scope["query_string"])
        media = _media_type(scope["headers"])
        if field is None and scope["method"] in _BODY_METHODS and not media.startswith("multipart/"):
            messages = await _read(receive)
            body = b"".join(m.get("body", b"") for m in messages)
            field = _in_form(body) if media == _FORM else _in_json(body)
            receive = _replay(messages, receive)
        if field is None:
            await self.app(scope, receive, send)
            return
        detail = f"{field}: contains a NUL character (U+0000), which cannot be stored"
        body = orjson.dumps({"detail": detail, "field": field})
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 400, "headers": headers})
        await send({"type": "http.response.body", "body": body})


def _media_type(headers: list[tuple[bytes, bytes]]) -> str:
    raw = next((v for k, v in headers if k == b"content-type"), b"")
    return raw.decode("latin-1").split(";")[0].strip().lower()


async def _read(receive: Receive) -> list[Message]:
    """The body's messages as they came (up to a disconnect), to be replayed to the application."""
    messages: list[Message] = []
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request" or not message.get("more_body", False):
            return messages


def _replay(messages: list[Message], receive: Receive) -> Receive:
    pending = list(messages)

    async def replay() -> Message:
        return pending.pop(0) if pending else await receive()

    return replay


def _in_form(encoded: bytes) -> str | None:
    """The name of the first query or form field holding a NUL, or None."""
    if b"%00" not in encoded and b"\x00" not in encoded:
        return None
    for key, value in parse_qsl(encoded.decode("latin-1"), keep_blank_values=True):
        if "\x00" in key or "\x00" in value:
            return _shown(key)
    return None  # "%00" only inside a longer escape that does not decode to a NUL


def _in_json(body: bytes) -> str | None:
    """Where a NUL sits in a JSON body ("stops[2].name"), "body" if it cannot be told, or None."""
    if b"\x00" not in body and not NUL_ESCAPE.search(body):
        return None
    try:
        return _where(json.loads(body), "") or "body"
    except (ValueError, RecursionError):  # not JSON after all: the route's own parser will say so
        return "body"


def _where(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        return (path or "body") if "\x00" in value else None
    if isinstance(value, dict):
        for key, child in value.items():
            here = f"{path}.{_shown(key)}" if path else _shown(key)
            if "\x00" in key:
                return here
            if found := _where(child, here):
                return found
    elif isinstance(value, list):
        for i, child in enumerate(value):
            if found := _where(child, f"{path}[{i}]"):
                return found
    return None


def _shown(name: str) -> str:
    return name.replace("\x00", "\\u0000")[:100]
