"""A limit per client address on the public area's anonymous requests (issue 33): a token bucket each.

Every address may make `burst` requests at once and `rate` a second on average; beyond that the request is refused
before it reads anything (429 with `Retry-After`, "tente novamente em N s"). Ten anonymous clients fetching the
itineraries back to back kept the event loop busy sending megabytes, and trackers' posts waited behind them; the
answers themselves are memoized per data version (cache.py), so this bounds what is left: how often one address
may ask. PublicLimitMiddleware applies it to /public/... and the /publico pages, in front of the application. The
buckets of at most `max_clients` addresses are kept (the least recently seen go first), so the memory
is bounded too; a forgotten address starts again with a full bucket, which only errs towards answering.

A refusal is held for `hold_s` (at most the wait it names) before it is sent, as nginx's limit_req delays what is
over the rate: a client that does not honour Retry-After and asks again at once otherwise gets ~1,000 refusals a
second from the same event loop as the trackers (bench.contention: 34,000 429s in 30 s from ten clients, a
tracker's p99 1.8-2.2× its idle one); held, it gets one per connection per `hold_s`. At most MAX_HELD refusals
are held at once, so holding costs a bounded number of sleeping requests; beyond that they are sent at once.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable

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
    MAX_HELD = 1_000

    def __init__(
        self,
        app: ASGIApp,
        *,
        enabled: bool,
        rate: float,
        burst: int,
        hold_s: float = 0.0,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self.app, self.enabled, self.hold_s, self.sleep = app, enabled, hold_s, sleep
        self.limit = PerClient(rate, burst)
        self.held = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.enabled and scope["type"] == "http" and scope["path"].startswith(self.PREFIXES):
            client = scope.get("client")
            wait = self.limit.take(client[0] if client else "")
            if wait is not None:
                held = await self._hold(wait)
                await _refuse(send, max(1, math.ceil(wait - held)))  # the wait left once held
                return
        await self.app(scope, receive, send)

    async def _hold(self, wait: int) -> float:
        """A refusal's pause before it is sent (module docstring), unless MAX_HELD are already paused: its seconds."""
        if self.hold_s <= 0 or self.held >= self.MAX_HELD:
            return 0.0
        pause = min(self.hold_s, float(wait))
        self.held += 1
        try:
            await self.sleep(pause)
        finally:
            self.held -= 1
        return pause


async def _refuse(send: Send, wait: int) -> None:
    body = orjson.dumps({"detail": f"muitas consultas deste endereço; tente novamente em {wait} s"})
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"retry-after", str(wait).encode()),
    ]
    await send({"type": "http.response.start", "status": 429, "headers": headers})
    await send({"type": "http.response.body", "body": body})
