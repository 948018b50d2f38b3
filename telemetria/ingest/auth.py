"""Which tracker is posting: bearer tokens (our API) and unique ids (OsmAnd), cached briefly.

A lookup per request would double the database round trips of a single-fix post. The cache only
maps a credential to a tracker id; whether the tracker is still active is checked again inside
the writer's transaction, so deactivating a tracker takes effect at once for storage. A rotated
token must stop working too: every change to trackers bumps `registry_epoch`, and the cache is
dropped when, read at most once per `epoch_check_s`, it has moved (so within about a second, in
every worker process, for one tiny query per second).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from telemetria.db import Pool
from telemetria.ingest import queries as q
from telemetria.registry.fleet import token_hash

# Unknown credentials are remembered for less time, so a tracker registered a moment ago works soon.
_NEGATIVE_TTL_S = 2.0
_MAX_ENTRIES = 100_000


class TrackerAuth:
    def __init__(
        self, pool: Pool, ttl_s: float = 30.0, clock: Callable[[], float] = time.monotonic, epoch_check_s: float = 1.0
    ):
        self._pool = pool
        self._ttl = ttl_s
        self._clock = clock
        self._cache: dict[tuple[str, str], tuple[int | None, float]] = {}
        self._epoch_check_s = epoch_check_s
        self._epoch: int | None = None
        self._epoch_read_at = -float("inf")

    async def by_token(self, token: str) -> int | None:
        """The active tracker holding this bearer token, or None."""
        # Keyed by the token itself: hashing is needed only for the database lookup on a miss.
        return await self._lookup(("token", token), q.TRACKER_BY_TOKEN, token, token_hash)

    async def by_unique_id(self, unique_id: str) -> int | None:
        """The active tracker with this unique id (IMEI or the id an OsmAnd client is set to), or None."""
        return await self._lookup(("uid", unique_id), q.TRACKER_BY_UNIQUE_ID, unique_id, str)

    async def _current(self, now: float) -> None:
        """Forget every cached credential once the registry changed (a token rotated, a tracker moved)."""
        if now - self._epoch_read_at < self._epoch_check_s:
            return
        self._epoch_read_at = now  # before the await: concurrent requests do not all read it
        epoch = await self._pool.fetchval(q.REGISTRY_EPOCH)
        if epoch != self._epoch:
            self._cache.clear()
            self._epoch = epoch

    async def _lookup(
        self, key: tuple[str, str], sql: str, credential: str, as_arg: Callable[[str], bytes | str]
    ) -> int | None:
        """The cached answer for `key`, else the database's for `as_arg(credential)` (only then computed)."""
        now = self._clock()
        await self._current(now)
        hit = self._cache.get(key)
        if hit is not None and hit[1] > now:
            return hit[0]
        if hit is not None:
            del self._cache[key]
        tracker_id: int | None = await self._pool.fetchval(sql, as_arg(credential))
        if len(self._cache) >= _MAX_ENTRIES:
            self._cache.clear()
        self._cache[key] = (tracker_id, now + (self._ttl if tracker_id is not None else _NEGATIVE_TTL_S))
        return tracker_id
