"""Headers every answer carries (ASGI middleware): `X-Content-Type-Options: nosniff` everywhere, and
`Cache-Control: no-store` on the JSON API and /metrics, whose answers hold personal and fleet data that no
browser or proxy cache should keep. A header the route set itself is left as it is."""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_NOSNIFF = (b"x-content-type-options", b"nosniff")
_NO_STORE = (b"cache-control", b"no-store")
_PRIVATE_PREFIXES = ("/api/", "/metrics")


def security_headers(path: str) -> tuple[tuple[bytes, bytes], ...]:
    """The headers every answer on `path` carries."""
    return (_NOSNIFF, _NO_STORE) if path.startswith(_PRIVATE_PREFIXES) else (_NOSNIFF,)


def with_security_headers(headers: Iterable[tuple[bytes, bytes]], path: str) -> list[tuple[bytes, bytes]]:
    """`headers` and those of `security_headers(path)` the route did not set itself."""
    out = list(headers)
    present = {name.lower() for name, _ in out}
    out.extend(h for h in security_headers(path) if h[0] not in present)
    return out


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path = scope["path"]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = with_security_headers(message.get("headers", ()), path)
            await send(message)

        await self.app(scope, receive, send_with_headers)
