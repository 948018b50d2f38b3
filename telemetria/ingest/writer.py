"""Group commit: concurrent requests' fixes go to the database together, one transaction per flush.

Each request waits on a future that is resolved only after the transaction holding its fixes has
committed, so a 2xx always means stored. Flushers run concurrently (one connection each); while
one is committing, the next requests pile up and go in the following flush.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import asyncpg

from telemetria import metrics
from telemetria.db import DB_ERRORS, Conn, is_unavailable
from telemetria.fix import Fix
from telemetria.ingest import queries as q
from telemetria.ingest.rows import IngestResult, Installation, Plan, Request, credit, credit_all, newest_stored, plan
from telemetria.localtime import LOCAL_TZ

log = logging.getLogger(__name__)

# Up to this many rows a flush is one call of ingest_fixes() with arrays (one round trip, commit
# included); above it, an explicit transaction with binary COPY (four round trips, but far
# cheaper to encode per row).
SMALL_FLUSH_ROWS = 64


class Unavailable(Exception):
    """The request is not acknowledged; the client should retry later.

    Usually nothing was committed, but when the connection drops while COMMIT is under way the
    outcome is unknown and the fixes may be stored (bench.chaos sees it under PostgreSQL restarts):
    a retry is still safe, since a fix already stored is answered as a duplicate.
    """


class Overloaded(Unavailable):
    """Too many fixes already wait for the database; the request was not queued."""


class Unstorable(Exception):
    """The database refused this request's data itself (not a lost connection): retrying cannot help."""


class _RegistryChanged(Exception):
    """The registry copy in memory is stale (the database raises SQLSTATE TL001 for the same)."""


@dataclass(frozen=True, slots=True)
class Registry:
    """Which trackers are active and where each was installed when, as of `epoch`."""

    epoch: int
    active: dict[int, bool]
    installs: dict[int, list[Installation]]

    @classmethod
    def from_rows(cls, rows: list[Any]) -> Registry:
        active: dict[int, bool] = {}
        installs: dict[int, list[Installation]] = {}
        for r in rows:
            if r["tracker_id"] is None:
                continue
            active[r["tracker_id"]] = r["active"]
            if r["vehicle_id"] is not None:
                span = Installation(r["vehicle_id"], r["since"], r["until"])
                installs.setdefault(r["tracker_id"], []).append(span)
        return cls(rows[0]["epoch"], active, installs)


@dataclass(slots=True)
class _Pending:
    request: Request
    future: asyncio.Future[IngestResult]


class Writer:
    """Group commit over `flushers` connections of its own, each opened by `connect` and kept open."""

    def __init__(
        self,
        connect: Callable[[], Awaitable[Conn]],
        *,
        max_rows: int = 5_000,
        flushers: int = 2,
        max_pending_rows: int = 200_000,
        max_link_s: float,
    ):
        self._connect = connect
        # Rollups are by local day; a stored fix can change the days up to one link (max_link_s) around it.
        self._stale_zone = (LOCAL_TZ.key, timedelta(seconds=max_link_s))
        self._max_rows = max_rows
        self._flushers = flushers
        self._max_pending = max_pending_rows
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._pending_rows = 0
        self._tasks: list[asyncio.Task[None]] = []
        self._conns: list[Conn | None] = []
        self._registry: Registry | None = None

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

    async def write(self, tracker_id: int, indexes: list[int], fixes: list[Fix]) -> IngestResult:
        """Store fixes of one request; returns once they are committed, raises Unavailable if not."""
        if not fixes:
            return IngestResult()
        if self._pending_rows + len(fixes) > self._max_pending:
            raise Overloaded(f"{self._pending_rows} fixes already waiting for the database")
        fut: asyncio.Future[IngestResult] = asyncio.get_running_loop().create_future()
        self._pending_rows += len(fixes)
        self._queue.put_nowait(_Pending(Request(tracker_id, indexes, fixes), fut))
        # If the request is cancelled (client gone) the future is cancelled with it, but the fixes
        # are queued and still land; the flusher skips answering a future that is done.
        return await fut

    async def _run(self) -> None:
        slot = self._tasks.index(asyncio.current_task())  # type: ignore[arg-type]
        while True:
            batch = [await self._queue.get()]
            rows = len(batch[0].request.fixes)
            while rows < self._max_rows and not self._queue.empty():
                item = self._queue.get_nowait()
                batch.append(item)
                rows += len(item.request.fixes)
            try:
                await self._flush_and_answer(slot, batch)
            finally:
                self._pending_rows -= rows
                metrics.WRITER_PENDING.set(self._pending_rows)
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

    async def _flush(self, slot: int, batch: list[_Pending]) -> list[IngestResult]:
        conn = await self._connection(slot)
        requests = [item.request for item in batch]
        try:
            for _ in range(3):
                registry = self._registry or await self._load_registry(conn)
                p = plan(requests, registry.active, registry.installs)
                try:
                    start = time.perf_counter()
                    stored = await self._write(conn, registry.epoch, p)
                    metrics.observe_flush(len(p.rows), time.perf_counter() - start, stored)
                    return p.results
                except (asyncpg.PostgresError, _RegistryChanged) as e:
                    if isinstance(e, asyncpg.PostgresError) and e.sqlstate != q.REGISTRY_CHANGED:
                        raise
                    if conn.is_in_transaction():
                        await conn.execute("ROLLBACK")
                    self._registry = None
            raise RuntimeError("the tracker registry keeps changing; giving up this flush")
        except BaseException:
            # Whatever state the connection is in, a fresh one is the safe next step.
            self._conns[slot] = None
            conn.terminate()
            raise

    async def _load_registry(self, conn: Conn) -> Registry:
        self._registry = Registry.from_rows(await conn.fetch(q.REGISTRY))
        return self._registry

    async def _write(self, conn: Conn, epoch: int, p: Plan) -> list[datetime]:
        """Write the plan's rows and credit them; returns the fix times stored.

        Raises TL001 if the registry changed since `epoch`.
        """
        if not p.rows:
            # Everything was rejected on the registry's word: make sure that word is current.
            if await conn.fetchval(q.REGISTRY_EPOCH) != epoch:
                raise _RegistryChanged
            return []
        if len(p.rows) <= SMALL_FLUSH_ROWS:
            columns = list(zip(*p.rows, strict=True))
            inserted = {(r[0], r[1]) for r in await conn.fetch(q.INGEST_FIXES, epoch, *columns, *self._stale_zone)}
            stored = [key[1] for key in inserted]
            credit(p, inserted)
            return stored
        await conn.execute(q.begin_locked(epoch))
        # Most flushes hold only new fixes: COPY them straight into the hypertable, which is the
        # cheapest write there is. If any of them is already stored (or appears twice), the unique
        # index refuses the COPY; undo it and take the careful path that sorts out duplicates.
        try:
            await conn.copy_records_to_table("fixes", records=p.rows, columns=q.FIX_COLUMNS)
        except (asyncpg.UniqueViolationError, asyncpg.DeadlockDetectedError):
            # (A deadlock: another flush is copying some of the same keys in another order.)
            await conn.execute(q.ROLLBACK_TO_FAST_PATH)
            await conn.copy_records_to_table("fix_stage", records=p.rows, columns=q.FIX_COLUMNS)
            inserted = {(r[0], r[1]) for r in await conn.fetch(q.INSERT_FROM_STAGE)}
            stored = [key[1] for key in inserted]
            # Both before credit(), which empties `inserted`.
            spans = _spans(inserted)
            newest = newest_stored(p.rows, inserted)
            credit(p, inserted)
        else:
            stored = [row[2] for row in p.rows]
            spans = _spans((row[0], row[2]) for row in p.rows)
            newest = newest_stored(p.rows)
            credit_all(p)
        if stored:
            await conn.execute(q.NOTE_STORED, *newest, *spans, *self._stale_zone)
        await conn.execute("COMMIT")
        return stored


def _spans(keys: Iterable[tuple[int, datetime]]) -> tuple[list[int], list[datetime]]:
    """Each vehicle's first and last fix time among `keys`, as the two arrays mark_rollups_stale takes."""
    lo: dict[int, datetime] = {}
    hi: dict[int, datetime] = {}
    for v, ts in keys:
        if v not in lo:
            lo[v] = hi[v] = ts
        elif ts < lo[v]:
            lo[v] = ts
        elif ts > hi[v]:
            hi[v] = ts
    vs = list(lo)
    return vs + vs, [lo[v] for v in vs] + [hi[v] for v in vs]


def _fail(batch: list[_Pending], exc: Exception) -> None:
    for p in batch:
        if not p.future.done():
            p.future.set_exception(exc)
