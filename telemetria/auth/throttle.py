"""Per-address login throttle: at most `limit` attempts per `window_s`, in this process's memory.

The limit that holds across processes is counted in the audit log (auth/limits.py); this one
turns a flood from one address away before it costs a database query.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager


class LoginThrottle:
    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._attempts: dict[str, deque[float]] = {}
        self._now = time.monotonic

    def retry_after(self, key: str) -> float:
        """0 when an attempt from `key` may go ahead now (and counts it), else seconds to wait."""
        now = self._now()
        q = self._attempts.setdefault(key, deque())
        while q and q[0] <= now - self.window_s:
            q.popleft()
        if len(q) >= self.limit:
            return q[0] + self.window_s - now
        q.append(now)
        if len(self._attempts) > 100_000:  # bound memory under an address-spraying attack
            self._attempts = {k: v for k, v in self._attempts.items() if v and v[-1] > now - self.window_s}
        return 0.0


class KeyedLocks:
    """One holder at a time per key, in this process; a key's lock exists only while held or awaited.

    Logins of one account from one address are checked one at a time, so a burst of them cannot
    all be checked before the first failures are counted (each check takes an argon2 hash).
    """

    def __init__(self) -> None:
        self._locks: dict[Hashable, tuple[asyncio.Lock, int]] = {}

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (asyncio.Lock(), 0))
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
