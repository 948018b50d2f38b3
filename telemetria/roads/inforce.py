"""Which road network is in force on a day, and that network ready for the reports (built once per process).

A network applies from its first day (`road_networks.effective_from`) until the next one's: an import never
changes the km of days before it unless it is back-dated on purpose (`telemetria roads import --from`), as a
registry edit's `effective_from` does. Ways of a network never change once imported, so a built network is kept
by (database, id, import time) with no invalidation; the few last used are kept.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from datetime import date, datetime
from typing import Any

from telemetria.db import Conn
from telemetria.roads import queries as q
from telemetria.roads import steps, store
from telemetria.roads.model import Roads

KEPT = 2  # networks kept built: the one in force and the previous (days before it); ~175 MiB per 50k ways
_built: OrderedDict[tuple[str, int, datetime], Roads] = OrderedDict()
_locks: dict[tuple[str, int, datetime], asyncio.Lock] = {}


class NetworkChanged(LookupError):
    """The network was replaced while it was being read (a concurrent import): the request should be retried."""


async def in_force(conn: Conn) -> tuple[tuple[tuple[date, int], ...], dict[int, dict[str, Any]]]:
    """Context.networks, and what names each network in a report: id, source file, its SHA-256, first day."""
    rows = await conn.fetch(q.IN_FORCE)
    named = {
        r["id"]: {"network_id": r["id"], "source": r["source"], "sha256": r["sha256"],
                  "effective_from": r["effective_from"].isoformat()}
        for r in rows
    }  # fmt: skip
    return tuple((r["effective_from"], r["id"]) for r in rows), named


async def network_on(conn: Conn, day: date) -> int | None:
    """The network in force on local date `day`, None when none is."""
    found: int | None = await conn.fetchval(q.IN_FORCE_ON, day)
    return found


async def roads(conn: Conn, network_id: int) -> Roads:
    """The network `network_id` ready for matching (roads/steps.py), built at its first use in this process."""
    stamp = await conn.fetchrow(q.STAMP, network_id)
    if stamp is None:
        raise LookupError(f"no road network {network_id}")
    key = (stamp["db"], network_id, stamp["imported_at"])
    found = _built.get(key)
    if found is not None:
        _built.move_to_end(key)
        return found
    async with _locks.setdefault(key, asyncio.Lock()):
        found = _built.get(key)
        if found is None:
            ways = [w for _, w in await store.load_ways(conn, network_id)]
            if len(ways) != stamp["ways"]:
                # Superseded (its ways deleted) between the two reads: never build, nor keep, a partial network.
                raise NetworkChanged(f"road network {network_id} changed while being read; ask again")
            places = await store.load_localities(conn, network_id)
            found = _built[key] = await asyncio.to_thread(steps.build, network_id, ways, places)
            while len(_built) > KEPT:
                _built.popitem(last=False)
    return found
