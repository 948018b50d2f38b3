"""Group commit: concurrent requests' fixes go to the database together, one transaction per flush.

Each request waits on a future that is resolved only after the transaction holding its fixes has
committed, so a 2xx always means stored. Flushers run concurrently (one connection each); while
one is committing, the next requests pile up and go in the following flush.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import asyncpg

from telemetria.db import DB_ERRORS, Conn, is_unavailable
from telemetria.ingest import queries as q
from telemetria.ingest.model import Fix, Rejected

log = logging.getLogger(__name__)

NOT_INSTALLED = "tracker was not installed in any vehicle at the fix's time"
TRACKER_INACTIVE = "tracker is inactive"


class Unavailable(Exception):
    """Nothing of the request was committed; the client should retry later."""


class Overloaded(Unavailable):
    """Too many fixes already wait for the database; the request was not queued."""


class Unstorable(Exception):
    """The database refused this request's data itself (not a lost connection): retrying cannot help."""


@dataclass(slots=True)
class WriteResult:
    accepted: int = 0
    duplicates: int = 0
    rejected: list[Rejected] = field(default_factory=list)
    tracker_inactive: bool = False


@dataclass(slots=True)
class _Pending:
    tracker_id: int
    indexes: list[int]
    fixes: list[Fix]
    future: asyncio.Future[WriteResult]


@dataclass(frozen=True, slots=True)
class _Installation:
    vehicle_id: int
    since: datetime | None
    until: datetime | None

    @property
    def unbounded(self) -> bool:
        return self.since is None and self.until is None

    def covers(self, ts: datetime) -> bool:
        return (self.since is None or self.since <= ts) and (self.until is None or ts < self.until)


class Writer:
    """Group commit over `flushers` connections of its own, each opened by `connect` and kept open."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[Conn]],
        *,
        max_rows: int = 20_000,
        flushers: int = 2,
        max_pending_rows: int = 200_000,
    ):
        self._connect = connect
        self._max_rows = max_rows
        self._flushers = flushers
        self._max_pending = max_pending_rows
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._pending_rows = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._conns: list[Conn | None] = []

    @property
    def pending_rows(self) -> int:
        return self._pending_rows

    def start(self) -> None:
        self._tasks = [asyncio.create_task(self._run(), name=f"writer-{i}") for i in range(self._flushers)]
        self._conns = [None] * self._flushers

    async def stop(self) -> None:
        """Finish what is queued, then stop the flushers."""
        await self._queue.join()
        for t in self._tasks:
            t.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for conn in self._conns:
            if conn is not None and not conn.is_closed():
                await conn.close()

    async def write(self, tracker_id: int, indexes: list[int], fixes: list[Fix]) -> WriteResult:
        """Store fixes of one request; returns once they are committed, raises Unavailable if not."""
        if not fixes:
            return WriteResult()
        if self._pending_rows + len(fixes) > self._max_pending:
            raise Overloaded(f"{self._pending_rows} fixes already waiting for the database")
        fut: asyncio.Future[WriteResult] = asyncio.get_running_loop().create_future()
        self._pending_rows += len(fixes)
        self._queue.put_nowait(_Pending(tracker_id, indexes, fixes, fut))
        # If the request is cancelled (client gone) the future is cancelled with it, but the fixes
        # are queued and still land; the flusher skips answering a future that is done.
        return await fut

    async def _run(self) -> None:
        slot = self._tasks.index(asyncio.current_task())  # type: ignore[arg-type]
        while True:
            batch = [await self._queue.get()]
            rows = len(batch[0].fixes)
            while rows < self._max_rows and not self._queue.empty():
                item = self._queue.get_nowait()
                batch.append(item)
                rows += len(item.fixes)
            try:
                await self._flush_and_answer(slot, batch)
            finally:
                self._pending_rows -= rows
                for _ in batch:
                    self._queue.task_done()

    async def _flush_and_answer(self, slot: int, batch: list[_Pending]) -> None:
        try:
            results = await self._flush(slot, batch)
        except DB_ERRORS as e:
            if is_unavailable(e):
                log.warning("flush of %d requests failed, nothing acknowledged: %s", len(batch), e)
                _fail(batch, Unavailable(str(e)))
                return
            # The data itself was refused. One request's bad data must not sink the others that
            # shared its transaction (they would be retried with it forever): write them one by one.
            if len(batch) > 1:
                for p in batch:
                    await self._flush_and_answer(slot, [p])
            else:
                log.warning("request refused by the database: %s", e)
                _fail(batch, Unstorable(f"{type(e).__name__}: {e}"))
        except Exception as e:  # a bug must not kill the flusher and strand every later request
            log.exception("flush of %d requests failed unexpectedly", len(batch))
            _fail(batch, Unavailable(f"internal error: {type(e).__name__}"))
        else:
            for p, r in zip(batch, results, strict=True):
                if not p.future.done():
                    p.future.set_result(r)

    async def _connection(self, slot: int) -> Conn:
        conn = self._conns[slot]
        if conn is None or conn.is_closed():
            self._conns[slot] = None
            conn = await self._connect()
            await conn.execute(q.CREATE_STAGE)
            self._conns[slot] = conn
        return conn

    async def _flush(self, slot: int, batch: list[_Pending]) -> list[WriteResult]:
        conn = await self._connection(slot)
        try:
            await conn.execute(q.BEGIN_LOCKED)
            results = await self._write_locked(conn, batch)
            await conn.execute("COMMIT")
        except BaseException:
            # Whatever state the connection is in, a fresh one is the safe next step.
            self._conns[slot] = None
            conn.terminate()
            raise
        return results

    async def _write_locked(self, conn: Conn, batch: list[_Pending]) -> list[WriteResult]:
        active: dict[int, bool] = {}
        installs: dict[int, list[_Installation]] = {}
        for r in await conn.fetch(q.INSTALLATIONS, list({p.tracker_id for p in batch})):
            active[r["tracker_id"]] = r["active"]
            if r["vehicle_id"] is not None:
                installs.setdefault(r["tracker_id"], []).append(_Installation(r["vehicle_id"], r["since"], r["until"]))

        rows: list[tuple[Any, ...]] = []
        owners: list[int] = []  # batch position of each row
        results = [WriteResult() for _ in batch]
        for pos, p in enumerate(batch):
            if not active.get(p.tracker_id, False):
                results[pos].tracker_inactive = True
                results[pos].rejected = [Rejected(i, TRACKER_INACTIVE) for i in p.indexes]
                continue
            spans = installs.get(p.tracker_id, [])
            # The common case, one installation with no bounds, needs no search per fix.
            always = spans[0].vehicle_id if len(spans) == 1 and spans[0].unbounded else None
            for i, f in zip(p.indexes, p.fixes, strict=True):
                vid = always or next((s.vehicle_id for s in spans if s.covers(f.ts)), None)
                if vid is None:
                    results[pos].rejected.append(Rejected(i, NOT_INSTALLED))
                    continue
                owners.append(pos)
                rows.append(
                    (
                        vid,
                        p.tracker_id,
                        f.ts,
                        f.lat,
                        f.lon,
                        f.speed_kmh,
                        f.heading_deg,
                        f.altitude_m,
                        f.accuracy_m,
                        f.hdop,
                        f.satellites,
                        f.ignition,
                        f.odometer_m,
                        f.driver_id,
                        f.valid,
                        f.attributes,
                    )
                )
        if not rows:
            return results
        # Most flushes hold only new fixes: COPY them straight into the hypertable, which is the
        # cheapest write there is. If any of them is already stored (or appears twice), the unique
        # index refuses the COPY; undo it and take the careful path that sorts out duplicates.
        try:
            await conn.copy_records_to_table("fixes", records=rows, columns=q.FIX_COLUMNS)
        except (asyncpg.UniqueViolationError, asyncpg.DeadlockDetectedError):
            # (A deadlock: another flush is copying some of the same keys in another order.)
            await conn.execute(q.ROLLBACK_TO_FAST_PATH)
        else:
            for pos in owners:
                results[pos].accepted += 1
            return results
        await conn.copy_records_to_table("fix_stage", records=rows, columns=q.FIX_COLUMNS)
        inserted = {(r[0], r[1]) for r in await conn.fetch(q.INSERT_FROM_STAGE)}
        # The insert takes rows in (vehicle, ts, ord) order, so a key's first occurrence in the
        # flush is the one stored and credited; a later copy (a re-send racing its original) is a
        # duplicate, so accepted always equals rows stored.
        for row, pos in zip(rows, owners, strict=True):
            key = (row[0], row[2])
            if key in inserted:
                results[pos].accepted += 1
                inserted.discard(key)
            else:
                results[pos].duplicates += 1
        return results


def _fail(batch: list[_Pending], exc: Exception) -> None:
    for p in batch:
        if not p.future.done():
            p.future.set_exception(exc)
