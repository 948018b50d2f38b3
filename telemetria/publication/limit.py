"""A limit per client address on the public area's anonymous requests (issue 33): a token bucket each.

Every address may make `burst` requests at once and `rate` a second on average; beyond that the request is refused
before it reads anything (429 with `Retry-After`, "tente novamente em N s"). Ten anonymous clients fetching the
itineraries back to back kept the event loop busy sending megabytes, and trackers' posts waited behind them; the
answers themselves are memoized per data version (cache.py), so this bounds what is left: how often one address
may ask. PublicLimitMiddleware applies it to /public/... and the /publico pages, in front of the application. The
buckets of at most `max_clients` addresses are kept (the least recently seen go first), so the memory
is bounded too; a forgotten address starts again with a full bucket, which only errs towards answering.
"""

from __future__ import annotations

import math
import time
from collections import OrderedDict
from collections.abc import Callable

import orjson
from starlette.types import ASGIApp, Receive, Scope, Send


class PerClient:
    """Token buckets of `burst` tokens refilled at `rate` a second, one per client key."""

    def __init__(
        self, rate: float, burst: int, max_clients: int = 10_000, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.rate, self.burst, self.max_clients, self.clock = rate, float(burst), max_clients, clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # key → (tokens, at)

    def take(self, key: str) -> int | None:
        """Spend one of `key`'s tokens: None when it had one, else the whole seconds until it will."""
        now = self.clock()
        tokens, at = self._buckets.pop(key, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        wait = None
        if tokens >= 1.0:
            tokens -= 1.0
        else:
            wait = max(1, math.ceil((1.0 - tokens) / self.rate))
        self._buckets[key] = (tokens, now)
        while len(self._buckets) > self.max_clients:
            self._buckets.popitem(last=False)
        return wait


class PublicLimitMiddleware:
    """The limit in front of the application (pure ASGI, inside ForwardedMiddleware so the address is the client's):
    a refusal costs no routing, no dependency and no database, which matters because an anonymous client that does
    not honour Retry-After asks again at once."""

    PREFIXES = ("/public/", "/publico")

    def __init__(self, app: ASGIApp, *, enabled: bool, rate: float, burst: int) -> None:
        self.app, self.enabled = app, enabled
        self.limit = PerClient(rate, burst)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.enabled and scope["type"] == "http" and scope["path"].startswith(self.PREFIXES):
            client = scope.get("client")
            wait = self.limit.take(client[0] if client else "")
            if wait is not None:
                await _refuse(send, wait)
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send, wait: int) -> None:
    body = orjson.dumps({"detail": f"muitas consultas deste endereço; tente novamente em {wait} s"})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(wait).encode()),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
