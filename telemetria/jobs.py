"""Expensive work off the event loop, bounded: one mechanism for every request that may take seconds.

File verification, PDF and XLSX exports and the public itineraries go through one `Jobs` per app (issue 33):
at most `workers` run at once, at most `queue` more wait for a turn, and one caller (a user, or "public" for
every anonymous request together) may hold at most `per_user` of them running or waiting. A job that does not
fit is refused at once with 429 and `Retry-After`, "tente novamente em N s", N estimated from the durations of
the last jobs, instead of piling up behind the others while trackers' posts wait.

Pure CPU work (reading an uploaded workbook, projecting route lines) runs in a small process pool
(`run_process`), so the service's event loop keeps the GIL; work that must stay in this process (a streamed
document whose rows come from the database) holds a turn (`enter`/`leave`, `hold`) and runs in threads.
"""

from __future__ import annotations

import asyncio
import math
import multiprocessing
import os
import time
from collections import Counter, deque
from collections.abc import AsyncIterable, AsyncIterator, Callable
from concurrent.futures import ProcessPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import Request
from fastapi.responses import StreamingResponse

from telemetria.http import HttpError
from telemetria.malloc import give_back_large_blocks

T = TypeVar("T")
PUBLIC = "public"  # the one caller every anonymous request counts as
FIRST_GUESS_S = 5.0  # a job's duration before any was timed
# The pool's processes run at a lower CPU priority than the service: on a small server (2 cores) a verification or
# a workbook read competes with the event loop for the CPU, and trackers' posts must not wait behind it. Work is
# only lent the cores the service does not use; nothing is refused or lost for it.
WORKER_NICENESS = 10


def _lower_priority() -> None:
    """The pool's processes' initializer: WORKER_NICENESS added to their niceness (best effort), and glibc's
    threshold fixed (malloc.py): they read uploads and write documents of megabytes."""
    give_back_large_blocks()
    try:
        os.nice(WORKER_NICENESS)
    except OSError:  # pragma: no cover - a platform without it
        pass


class Busy(HttpError):
    """429: no turn for this caller now; `retry_after_s` says when to try again."""

    def __init__(self, retry_after_s: int, why: str) -> None:
        super().__init__(
            429,
            f"{why}; tente novamente em {retry_after_s} s",
            {"Retry-After": str(retry_after_s)},
            retry_after_s=retry_after_s,
        )


@dataclass(frozen=True, slots=True)
class Ticket:
    """A turn taken by `who` (give it back with Jobs.leave)."""

    who: str
    started: float


class Jobs:
    """A bounded queue of expensive jobs with a per-caller limit (see the module's docstring)."""

    def __init__(self, workers: int, queue: int, per_user: int, processes: int | None = None) -> None:
        self.workers, self.queue, self.per_user = workers, queue, per_user
        self.processes = processes if processes is not None else workers
        self._turns = asyncio.Semaphore(workers)
        self._waiting = 0
        self._running = 0
        self._by_user: Counter[str] = Counter()
        self._durations: deque[float] = deque(maxlen=20)
        self._pool: ProcessPoolExecutor | None = None

    def retry_after_s(self) -> int:
        """Seconds until a turn is likely free: the jobs ahead times a recent job's duration, over the workers."""
        each = sum(self._durations) / len(self._durations) if self._durations else FIRST_GUESS_S
        ahead = self._waiting + self._running
        return max(1, math.ceil(each * max(1, ahead) / self.workers))

    async def enter(self, who: str) -> Ticket:
        """Wait for a turn (raises Busy when the caller already holds its share, or the queue is full)."""
        if self._by_user[who] >= self.per_user:
            raise Busy(self.retry_after_s(), f"já há {self._by_user[who]} tarefa(s) pesada(s) sua(s) em andamento")
        if self._running >= self.workers and self._waiting >= self.queue:
            raise Busy(self.retry_after_s(), "o serviço está ocupado com outras tarefas pesadas")
        self._by_user[who] += 1
        self._waiting += 1
        try:
            await self._turns.acquire()
        except BaseException:
            self._by_user[who] -= 1
            raise
        finally:
            self._waiting -= 1
        self._running += 1
        return Ticket(who, time.monotonic())

    def leave(self, ticket: Ticket) -> None:
        """Give a turn back (once per `enter`)."""
        self._durations.append(time.monotonic() - ticket.started)
        self._running -= 1
        self._by_user[ticket.who] -= 1
        if self._by_user[ticket.who] <= 0:
            del self._by_user[ticket.who]
        self._turns.release()

    @asynccontextmanager
    async def turn(self, who: str) -> AsyncIterator[None]:
        """A turn for the duration of the block."""
        ticket = await self.enter(who)
        try:
            yield
        finally:
            self.leave(ticket)

    async def hold(self, ticket: Ticket, chunks: AsyncIterable[T]) -> AsyncIterator[T]:
        """`chunks` as they come, the turn given back when they end (or the client goes away)."""
        try:
            async for chunk in chunks:
                yield chunk
        finally:
            self.leave(ticket)

    async def in_process(self, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` (module-level, its arguments and result picklable) in the process pool (take a turn first)."""
        return await asyncio.get_running_loop().run_in_executor(self._processes(), fn, *args)

    async def run_process(self, who: str, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in the process pool, in a turn."""
        async with self.turn(who):
            return await self.in_process(fn, *args)

    async def run_thread(self, who: str, fn: Callable[..., T], *args: Any) -> T:
        """`fn(*args)` in a thread, in a turn."""
        async with self.turn(who):
            return await asyncio.to_thread(fn, *args)

    def _processes(self) -> ProcessPoolExecutor:
        if self._pool is None:  # spawned, not forked: the service's threads and sockets stay out of the children
            self._pool = ProcessPoolExecutor(
                self.processes, mp_context=multiprocessing.get_context("spawn"), initializer=_lower_priority
            )
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None


def jobs_of(request: Request) -> Jobs:
    """The app's job queue (made on first use from its settings)."""
    state = request.app.state
    if not hasattr(state, "jobs"):
        s = state.settings
        state.jobs = Jobs(s.heavy_jobs_workers, s.heavy_jobs_queue, s.heavy_jobs_per_user)
    jobs: Jobs = state.jobs
    return jobs


async def streamed(request: Request, who: str, make: Callable[[], StreamingResponse]) -> StreamingResponse:
    """A document streamed in a turn of the app's queue: `make()` once a turn is had (429 when `who` already has
    one or the queue is full), the turn held until the document has been sent (or the client went away)."""
    jobs = jobs_of(request)
    ticket = await jobs.enter(who)
    try:
        answer = make()
    except BaseException:
        jobs.leave(ticket)
        raise
    answer.body_iterator = jobs.hold(ticket, answer.body_iterator)
    return answer


def user_key(user_id: int) -> str:
    """Whose share a logged-in user's job counts against."""
    return f"user:{user_id}"
