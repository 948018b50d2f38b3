"""Headers every answer carries (ASGI middleware): `X-Content-Type-Options: nosniff` everywhere, and
`Cache-Control: no-store` on the JSON API and /metrics, whose answers hold personal and fleet data that no
browser or proxy cache should keep. A header the route set itself is left as it is."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

_NOSNIFF = (b"x-content-type-options", b"nosniff")
_NO_STORE = (b"cache-control", b"no-store")
_PRIVATE_PREFIXES = ("/api/", "/metrics")


class SecurityHeadersMiddleware:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = [_NOSNIFF, _NO_STORE] if scope["path"].startswith(_PRIVATE_PREFIXES) else [_NOSNIFF]

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in extra if h[0] not in present)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
