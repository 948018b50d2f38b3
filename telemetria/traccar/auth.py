"""Which Traccar gateway is posting, and which tracker it may speak for; cached briefly, as trackers' tokens.

A gateway's token maps to (gateway id, contractor id or None). A change to gateways bumps registry_epoch
(migration 0029), and the cache is dropped when the epoch has moved (read at most once per `epoch_check_s`),
so a deactivated gateway stops within about a second. Trackers are looked up through the trackers' own cache
(ingest.auth.TrackerAuth) for a gateway of every tracker; a contractor's gateway asks the database per
position, since whether it may speak for a tracker depends on the fix time (the tracker's installation then).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from telemetria.db import Pool
from telemetria.ingest import queries as ingest_q
from telemetria.ingest.auth import TrackerAuth
from telemetria.registry.fleet import token_hash
from telemetria.traccar import queries as q

_NEGATIVE_TTL_S = 2.0
_MAX_ENTRIES = 10_000


@dataclass(frozen=True, slots=True)
class Gateway:
    id: int
    contractor_id: int | None


class NotAllowed(Exception):
    """The tracker exists but is outside the gateway's contractor's fleet at the fix time."""


class GatewayAuth:
    def __init__(
        self, pool: Pool, trackers: TrackerAuth, ttl_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic, epoch_check_s: float = 1.0,
    ):  # fmt: skip
        self._pool = pool
        self._trackers = trackers
        self._ttl = ttl_s
        self._clock = clock
        self._epoch_check_s = epoch_check_s
        self._cache: dict[str, tuple[Gateway | None, float]] = {}
        self._epoch: int | None = None
        self._epoch_read_at = -float("inf")

    async def by_token(self, token: str) -> Gateway | None:
        """The active gateway holding this bearer token, or None."""
        now = self._clock()
        if now - self._epoch_read_at >= self._epoch_check_s:
            self._epoch_read_at = now
            epoch = await self._pool.fetchval(ingest_q.REGISTRY_EPOCH)
            if epoch != self._epoch:
                self._cache.clear()
                self._epoch = epoch
        hit = self._cache.get(token)
        if hit is not None and hit[1] > now:
            return hit[0]
        row = await self._pool.fetchrow(q.GATEWAY_BY_TOKEN, token_hash(token))
        gateway = Gateway(row["id"], row["contractor_id"]) if row is not None else None
        if len(self._cache) >= _MAX_ENTRIES:
            self._cache.clear()
        self._cache[token] = (gateway, now + (self._ttl if gateway is not None else _NEGATIVE_TTL_S))
        return gateway

    async def tracker(self, gateway: Gateway, unique_id: str, fix_time: datetime) -> int | None:
        """The active tracker with this unique id that the gateway may speak for; None if there is none.

        Raises NotAllowed when it exists but was not in the gateway's contractor's vehicles at `fix_time`.
        """
        if gateway.contractor_id is None:
            return await self._trackers.by_unique_id(unique_id)
        row = await self._pool.fetchrow(q.TRACKER_FOR_CONTRACTOR, unique_id, gateway.contractor_id, fix_time)
        if row is None:
            return None
        if not row["allowed"]:
            raise NotAllowed
        return int(row["id"])
