"""The live detector: each round turns the fixes that changed into stored occurrences, by fix time.

The vehicles fall in SLICES slices (vehicle_id % SLICES), each under its own advisory lock; a detector process
works those of its Part (the service starts detector_processes of them), so several processes, and several
servers' processes, share the fleet and never work one vehicle at once. One round (run_round) of a part:
1. (part 0, under DETECTOR_LOCK) the closed days not yet rescanned are queued for a complete rescan;
2. the dirty marks the ingest path left on latest_fixes (migrations/0014_detector.sql) of its slices are read,
   oldest first; each dirty vehicle's window is recomputed once: from its dirty_from minus CONTEXT or the start
   of its local day, whichever is earlier (or the start of what it still has open, if earlier) to now; plus the
   vehicles that may be silent while due (live silence); the days those marks may decide runs of are handed over
   (detector_run_days);
3. (part 0) the run kinds: derive.run_candidates for today and every day handed over, reconciled per day;
4. in chunks of CHUNK vehicles: the chunk's marks are read again (what arrived since step 2 is taken too), its
   registry, stored occurrences and fixes are read in a few statements (each vehicle's day only from its
   dirty_from on when this process kept the rest: _KEPT, trackcache.py); derive.window_candidates → reconcile
   (pure) against the stored occurrences of the window → store, each vehicle in its own transaction (new
   occurrences handed to notify.enqueue in it), pausing between windows while the service is busy (yielding.py);
   then the chunk's marks are cleared where no flush marked again meanwhile;
5. a batch of its queued rescans is worked.
docs/architecture.md "How occurrences are found live" gives the reasoning and the figures.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import logging
import logging.config
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

from telemetria.db import DB_ERRORS, Conn, Pool
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.detection import chunkread, derive, queries, store
from telemetria.occurrences.detection.reconcile import Plan, Stored, reconcile
from telemetria.occurrences.detection.trackcache import TrackCache
from telemetria.occurrences.detection.yielding import Gate
from telemetria.occurrences.model import Candidate
from telemetria.occurrences.notify import outbox as notify
from telemetria.occurrences.params import DEFAULT, DetectParams
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.schedule import EARLY_S, LATE_S
from telemetria.reports.knobs import DEFAULT as REPORT_DEFAULT

log = logging.getLogger(__name__)

# How far before the first changed fix a window is recomputed at least: the longest occurrence a fix can still
# change by continuing it (a leg on board, over 2 h, is the longest; stops, episodes and gaps are shorter). Windows
# also reach back to the start of the fix's local day (window_start): a leg to school exists only once the school
# is reached, however long after the first boarding. What is still open before that (a long silence) is reached
# through store.open_since.
CONTEXT = timedelta(hours=2, minutes=30)
AHEAD = timedelta(minutes=10)  # past `now`: ingest takes fixes up to max_future_s (300 s) ahead
MAX_VEHICLES = 20_000  # windows per round at most (oldest marks first); the rest wait for the next round
SILENT_RECHECK_S = 30.0  # a silent vehicle is looked at again this often, however short the rounds
RESCANS_PER_ROUND = 200  # complete vehicle-days rescanned per round after a day closes
RUN_DAYS_BACK = 35  # how far back a change makes a round judge the runs of every day up to today (and
# migrations/0034: a registry change hands the days from its effective day, at most these: runs that became due
# late are judged)
CHUNK = 250  # windows whose registry is read together and whose marks are cleared together
MIN_PAUSE_S = 1.0  # between two rounds at least
AUTOGROUP_TRIES = 20  # setting the autogroup's nice, 0.15 s apart
WORKERS = 2  # windows in flight, each on its own connection (the round's own is one of them)


# What this process last read of each vehicle's day: a window reads only the fixes stored since (trackcache.py).
_KEPT = TrackCache()


@dataclass(slots=True)
class RoundStats:
    """What one round did. lag_s: from the arrival of the oldest change it took to its occurrences stored (None:
    nothing was dirty)."""

    skipped: bool = False  # another process held the lock
    windows: int = 0
    days: int = 0
    rescans: int = 0
    inserted: int = 0
    updated: int = 0
    withdrawn: int = 0
    noted: int = 0
    failed: int = 0
    paused_s: float = 0.0  # given way to a busy service (yielding.Gate)
    lag_s: float | None = None
    elapsed_s: float = 0.0

    def add(self, applied: store.Applied) -> None:
        self.inserted += len(applied.inserted)
        self.updated += applied.updated
        self.withdrawn += applied.withdrawn
        self.noted += applied.noted


def _day(t: datetime) -> date:
    return t.astimezone(LOCAL_TZ).date()


def window_start(changed: datetime) -> datetime:
    """Where the window of a change at fix time `changed` starts: CONTEXT before it, or the start of its local day
    if that is earlier. The window analyses that whole day anyway (derive.py); starting there lets it store what
    began earlier in the day and a later fix completed (a leg to school of three hours, completed by the arrival
    at the school), as the day's rescan would."""
    return min(changed - CONTEXT, day_bounds(_day(changed))[0])


async def _write(conn: Conn, plan: Plan, params: DetectParams, stats: RoundStats) -> None:
    if not plan:
        return
    applied = await store.apply(conn, plan, params.late_after_s)
    if applied.inserted:
        await notify.enqueue(conn, applied.inserted)
    stats.add(applied)


async def _window(
    conn: Conn, vehicle_id: int, start: datetime, end: datetime, now: datetime, params: DetectParams,
    stats: RoundStats, shared: chunkread.Shared | None = None, stored: list[Stored] | None = None,
) -> None:  # fmt: skip
    """Recompute one vehicle's window [start, end) and make the stored occurrences starting in it agree.

    Most windows change nothing: their plan, from `stored` (the window's stored occurrences as read for a whole
    chunk; None: read here), is found empty without a transaction. One with writes reads again and writes in a
    transaction, so what it writes answers the occurrences as they are then."""
    candidates = await derive.window_candidates(conn, vehicle_id, start, end, now=now, params=params, shared=shared)
    if stored is None:
        stored = await store.stored_window(conn, vehicle_id, start, end)
    if reconcile(stored, candidates, (start, end)):
        async with conn.transaction():
            stored = await store.stored_window(conn, vehicle_id, start, end)
            await _write(conn, reconcile(stored, candidates, (start, end)), params, stats)
    stats.windows += 1


async def _run_day(
    conn: Conn, day: date, now: datetime, params: DetectParams, stats: RoundStats, vehicle_id: int | None = None
) -> None:
    """The run kinds of one local day (of one vehicle, or all)."""
    candidates: list[Candidate] = await derive.run_candidates(conn, day, now=now, params=params)
    d0, d1 = day_bounds(day)
    async with conn.transaction():
        stored: list[Stored] = await store.stored_day(conn, day)
        if vehicle_id is not None:
            candidates = [c for c in candidates if c.vehicle_id == vehicle_id]
            stored = [s for s in stored if s.vehicle_id == vehicle_id]
        # The day's whole span: a run candidate's start is its window, inside its day.
        await _write(
            conn, reconcile(stored, candidates, (d0 - timedelta(days=1), d1 + timedelta(days=1))), params, stats
        )
    stats.days += 1


_FIRST_FIX_DAY: dict[str, date] = {}  # first chunk → the local day of the first fix ever stored (per database)


async def _first_fix_day(conn: Conn) -> date | None:
    """The local day of the first fix the service ever stored (None: none yet); one catalog read a round, the
    minimum itself once per first chunk (a chunk's name is never reused: a new first chunk is looked at anew)."""
    chunk = await store.first_chunk(conn)
    if chunk is None:
        return None
    key, end = chunk
    if key not in _FIRST_FIX_DAY:
        first = await store.first_fix(conn, end)
        if first is None:
            return None
        _FIRST_FIX_DAY[key] = _day(first)
    return _FIRST_FIX_DAY[key]


def _judged(first: date, today: date) -> list[date]:
    """The days whose runs a change from `first` on may decide: every day from it to today (a week's
    store-and-forward batch arriving at once judges each of its days, as live rounds would have), at most
    RUN_DAYS_BACK of them (older days are judged by their complete rescan)."""
    first = max(first, today - timedelta(days=RUN_DAYS_BACK))
    return [first + timedelta(days=k) for k in range((today - first).days + 1)]


async def _queue_closed_days(conn: Conn, now: datetime) -> None:
    """Queue each day that closed since the last round for one complete rescan (the same closing as the rollups')."""
    closable = _day(now - timedelta(seconds=REPORT_DEFAULT.max_link_s)) - timedelta(days=1)
    done = await store.closed_through(conn)
    day = closable if done is None else done + timedelta(days=1)
    while day <= closable:
        await store.queue_rescans(conn, day, day_bounds(day)[0])
        day += timedelta(days=1)


async def _rescan(
    conn: Conn, vehicle_id: int, day: date, now: datetime, params: DetectParams, stats: RoundStats
) -> None:
    """The complete local day of one vehicle again (its window kinds)."""
    d0, d1 = day_bounds(day)
    await _window(conn, vehicle_id, d0, d1, now, params, stats)
    stats.rescans += 1


@dataclass(frozen=True, slots=True)
class Part:
    """The vehicles a detector process works: those of the slices s (vehicle_id % SLICES) with s % n == k, each
    slice under its own lock. Process k == 0 also does what concerns all vehicles at once, under DETECTOR_LOCK:
    queueing the days that closed and judging the run kinds. Part() is everything, in one process."""

    k: int = 0
    n: int = 1

    @property
    def slices(self) -> list[int]:
        return [s for s in range(queries.SLICES) if s % self.n == self.k]


async def _locked_round(
    pool: Pool, conn: Conn, now: datetime, params: DetectParams, slices: list[int], lead: bool, gate: Gate | None
) -> RoundStats:
    """One round over the vehicles of `slices` (locked by the caller); `lead`: also the work of all vehicles."""
    stats = RoundStats()
    began = time.monotonic()
    if lead:
        await _queue_closed_days(conn, now)
    marks = await store.dirty(conn, MAX_VEHICLES, slices) if slices else []  # oldest change first
    starts: dict[int, datetime] = {m.vehicle_id: window_start(m.dirty_from) for m in marks}
    margin = EARLY_S + LATE_S  # the prefilter's widening: a run's window reaches this far past its schedule
    if slices:
        for vehicle_id in await store.silent(conn, now, params.silent_s, margin, SILENT_RECHECK_S, slices):
            starts.setdefault(vehicle_id, window_start(now))
    batch = await store.rescans(conn, RESCANS_PER_ROUND, slices) if slices else []
    # The days whose runs these changes may decide go to the process judging the run kinds before the marks are
    # cleared (detector_run_days): a late batch's days are judged even when another process took its vehicle.
    await store.mark_run_days(
        conn, [d for m in marks for d in _judged(_day(m.dirty_from), _day(now))] + [d for _, d in batch]
    )
    if lead:
        await _run_days(conn, now, params, stats)
    by_vehicle = {m.vehicle_id: m for m in marks}
    order = list(starts)
    for k in range(0, len(order), CHUNK):
        chunk = {v: starts[v] for v in order[k : k + CHUNK]}
        await _chunk(pool, conn, chunk, now, began, params, stats, by_vehicle, gate)
    if marks:  # the oldest change it took, from its arrival to its occurrences stored
        stats.lag_s = max(0.0, (datetime.now(UTC) - min(m.dirty_since for m in marks)).total_seconds())
    for vehicle_id, day in batch:
        if gate is not None:
            stats.paused_s += await gate.wait()
        if await _guard(stats, _rescan(conn, vehicle_id, day, now, params, stats), vehicle_id, day):
            await store.rescanned(conn, vehicle_id, day)
    return stats


async def _run_days(conn: Conn, now: datetime, params: DetectParams, stats: RoundStats) -> None:
    """The run kinds of today and of every day handed over; a day whose judging failed stays handed over."""
    handed = await store.run_days(conn)
    # A run is judged not made from the absence of fixes: only on days the service was receiving them, so that its
    # first start does not find every run of the days before it not made.
    first = await _first_fix_day(conn)
    for day in sorted({_day(now)} | set(handed)):
        if first is not None and day >= first:
            if not await _guard(stats, _run_day(conn, day, now, params, stats), None, day):
                continue
        if day in handed:
            await store.run_day_judged(conn, day, handed[day])


async def _chunk(
    pool: Pool, conn: Conn, starts: dict[int, datetime], now: datetime, began: float, params: DetectParams,
    stats: RoundStats, marks: dict[int, store.Mark], gate: Gate | None = None,
) -> None:  # fmt: skip
    """The windows of a chunk of vehicles (vehicle → where its window starts), with their registry read once and
    WORKERS of them in flight (each on its own connection: one's queries overlap another's analysis); then the
    marks of those that went through are cleared, so the detector's lag falls chunk by chunk.

    The chunk reads its vehicles' marks again first: what arrived since the round read them (a vehicle reporting
    every 30 s has, in a long round) is in its windows, so its mark is cleared here rather than left for the next
    round, and a change waits at most about one round. The windows reach AHEAD past `now` plus the round's time
    so far (`began`: its monotonic start), so that every fix a cleared mark stood for lies inside them."""
    end = now + AHEAD + timedelta(seconds=time.monotonic() - began)
    fresh, stamps = await store.dirty_of(conn, list(starts))
    marks = {**{v: m for v, m in marks.items() if v in starts}, **fresh}
    starts = {v: min(s, window_start(fresh[v].dirty_from)) if v in fresh else s for v, s in starts.items()}
    opened = await store.open_since(conn, starts)
    wins = {v: min(s, opened.get(v, s)) for v, s in starts.items()}
    shared = chunkread.Shared()
    await shared.load(conn, list(wins), min(wins.values()), end)
    await shared.prefetch(conn, {v: (s, end) for v, s in wins.items()}, now, chunkread.Kept(_KEPT, fresh, stamps))
    stored = await store.stored_windows(conn, wins, end)
    queue = list(wins.items())
    failed: set[int] = set()

    async def worker(c: Conn) -> None:
        while queue:
            if gate is not None:  # the service is busy: give it the CPU first
                paused = await gate.wait()  # (not `+= await`: that reads the sum before the other worker adds)
                stats.paused_s += paused
                if not queue:
                    break
            vehicle_id, start = queue.pop()
            work = _window(c, vehicle_id, start, end, now, params, stats, shared, stored[vehicle_id])
            if not await _guard(stats, work, vehicle_id, start):
                failed.add(vehicle_id)

    queue.reverse()  # popped from the end: oldest marks first
    async with contextlib.AsyncExitStack() as stack:
        free = pool.get_max_size() - pool.get_size() + pool.get_idle_size()  # never wait for a busy pool
        conns = [conn] + [await stack.enter_async_context(pool.acquire()) for _ in range(min(WORKERS - 1, free))]
        tasks = [asyncio.create_task(worker(c)) for c in conns]
        try:
            await asyncio.gather(*tasks)
        finally:  # a database error in one stops the others before their connections go back
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    cleared = await store.clear_dirty(conn, [marks[v] for v in wins if v in marks and v not in failed])
    for v, stamp in cleared.items():
        _KEPT.restamp(v, stamp)
    for v in failed:
        _KEPT.drop(v)


async def _guard(stats: RoundStats, work: Coroutine[Any, Any, None], vehicle_id: int | None, at: object) -> bool:
    """Run one piece of a round; a bug in it is logged and counted, never stops the others (database errors do)."""
    try:
        await work
    except DB_ERRORS:
        raise
    except Exception:
        log.exception("occurrences of vehicle %s at %s failed; retried next round", vehicle_id, at)
        stats.failed += 1
        return False
    return True


Work = Callable[[Conn, datetime, list[int], bool], Awaitable[RoundStats]]


async def _round(pool: Pool, now: datetime | None, part: Part, work: Work) -> RoundStats:
    """`work` with the locks of the part's slices it can take now, and (part k == 0) DETECTOR_LOCK; skipped when it
    can take none of them (other processes hold them: they take turns)."""
    t0 = time.perf_counter()
    async with pool.acquire() as conn:
        got: list[int] = []
        lead = False
        try:
            for s in part.slices:
                if await conn.fetchval("SELECT pg_try_advisory_lock($1::int, $2::int)", queries.SLICE_LOCK, s):
                    got.append(s)
            lead = part.k == 0 and bool(await conn.fetchval("SELECT pg_try_advisory_lock($1)", queries.DETECTOR_LOCK))
            if not got and not lead:
                return RoundStats(skipped=True)
            stats = await work(conn, now or datetime.now(UTC), got, lead)
            stats.elapsed_s = time.perf_counter() - t0
            await store.round_done(conn, stats.elapsed_s, stats.windows)
        finally:
            for s in got:
                await conn.execute("SELECT pg_advisory_unlock($1::int, $2::int)", queries.SLICE_LOCK, s)
            if lead:
                await conn.execute("SELECT pg_advisory_unlock($1)", queries.DETECTOR_LOCK)
    return stats


async def run_round(
    pool: Pool, *, now: datetime | None = None, params: DetectParams = DEFAULT, part: Part = Part(),
    gate: Gate | None = None,
) -> RoundStats:  # fmt: skip
    """One round: the changed vehicle-days, live silence and ended runs → stored occurrences. Idempotent; the
    vehicles of `part` (default: all), each slice one process at a time (a round that can take none of its locks
    returns skipped). `now` None: the wall clock. `gate`: paused between windows while it is busy."""
    return await _round(
        pool, now, part, lambda conn, t, slices, lead: _locked_round(pool, conn, t, params, slices, lead, gate)
    )


async def rescan(
    pool: Pool, vehicle_id: int, day: date, *, now: datetime | None = None, params: DetectParams = DEFAULT
) -> RoundStats:
    """The complete local day of one vehicle again: its window kinds and its run kinds."""

    async def work(conn: Conn, t: datetime, slices: list[int], lead: bool) -> RoundStats:
        stats = RoundStats(skipped=True)
        if lead and vehicle_id % queries.SLICES in slices:
            stats.skipped = False
            await _rescan(conn, vehicle_id, day, t, params, stats)
            await _run_day(conn, day, t, params, stats, vehicle_id)
        return stats

    return await _round(pool, now, Part(), work)


async def periodic(
    pool: Pool, interval_s: float, part: Part = Part(), gate: Gate | None = None, params: DetectParams = DEFAULT
) -> None:
    """A round every `interval_s` seconds (counted from the start of the last: one that took longer is followed
    after MIN_PAUSE_S, so a detector behind does not add a pause to its lag), until cancelled; a failed round is
    logged and the next one tries again. Each detector process runs it for its part (supervise starts them)."""
    parent = os.getppid()
    took = 0.0
    while True:
        await asyncio.sleep(max(MIN_PAUSE_S, interval_s - took))
        took = 0.0
        if os.getppid() != parent:  # the service that started this process is gone
            return
        try:
            stats = await run_round(pool, part=part, gate=gate, params=params)
        except DB_ERRORS as e:
            log.warning("occurrence detection failed, will retry: %s: %s", type(e).__name__, e)
        except Exception:
            log.exception("occurrence detection failed unexpectedly")
        else:
            took = stats.elapsed_s
            if stats.elapsed_s > interval_s:
                log.info(
                    "detector round took %.1f s for %d windows (%.1f s of it given way to the busy service)",
                    stats.elapsed_s, stats.windows, stats.paused_s,
                )  # fmt: skip


async def supervise(dsn: str, interval_s: float, nice: int = 10, processes: int = 1) -> None:
    """The service's lifespan task: the rounds run in `processes` child processes of their own (each the vehicles
    of its Part: the fleet's windows on that many cores) at lower CPU priority (`nice`), so that a busy detector
    slows itself, not ingest (docs/architecture.md "How occurrences are found live"); each restarted if it dies,
    all stopped when this task is cancelled. Runs until cancelled."""
    async with asyncio.TaskGroup() as tasks:  # one failing cancels the others
        for k in range(processes):
            tasks.create_task(_keep(dsn, interval_s, nice, Part(k, processes)))


async def _keep(dsn: str, interval_s: float, nice: int, part: Part) -> None:
    """One detector process for `part`, started again whenever it exits, until cancelled."""
    env = {**os.environ, "TELEMETRIA_DATABASE_URL": dsn}
    args = [str(interval_s), str(nice), str(part.k), str(part.n)]
    while True:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "telemetria.occurrences.detection.detector", *args, env=env
        )
        try:
            code = await proc.wait()
        except asyncio.CancelledError:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 10)
            except TimeoutError:
                proc.kill()
                await proc.wait()
            raise
        log.warning("the detector process exited with %s; starting it again in %.0f s", code, interval_s)
        await asyncio.sleep(interval_s)


def _lower_priority(nice: int) -> None:
    """Run at `nice` against the service and the database. With the kernel's autogroups (sched_autogroup_enabled,
    the default of most distributions), a nice value only weighs against the processes of the same session: the
    service's child would still take the CPU the database needs as if it were not niced (measured: ingest lost a
    third of its throughput at nice 19). So the process also starts a session of its own and gives its autogroup
    the same nice value; without autogroups (or /proc) the plain nice is what counts."""
    os.nice(nice)
    try:
        os.setsid()
    except OSError:
        return  # already a session leader: its autogroup is not its own to renice
    group = Path("/proc/self/autogroup")
    for _ in range(AUTOGROUP_TRIES):  # the kernel takes an autogroup's nice once per 100 ms (EAGAIN otherwise)
        try:
            group.write_text(str(nice))
            if group.read_text().split()[-1] == str(nice):  # "/autogroup-N nice K"
                return
        except FileNotFoundError:
            return  # no autogroups: the plain nice is what counts
        except OSError:
            pass
        time.sleep(0.15)
    log.warning("the detector's autogroup could not be given nice %d: it competes with the service as an equal", nice)


def _die_with_parent() -> None:
    """Linux: the kernel sends SIGTERM to this process when the service that started it dies (even by SIGKILL)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


async def _main(interval_s: float, part: Part) -> None:
    from telemetria.db import create_pool
    from telemetria.settings import Settings

    settings = Settings()
    _KEPT.max_fixes = settings.detector_keep_fixes
    pool = await create_pool(settings, min_size=0, max_size=WORKERS + 1)
    try:
        params = replace(DEFAULT, unauthorized_stop_min_s=settings.unauthorized_stop_min_s)
        await periodic(pool, interval_s, part, Gate.of_parent(settings.detector_yield_pct), params)
    finally:
        await pool.close()


def main(argv: list[str]) -> None:
    """`python -m telemetria.occurrences.detection.detector INTERVAL_S NICE [K N]`: a detector process,
    part K of N (started by supervise)."""
    from telemetria.logs import log_config
    from telemetria.malloc import give_back_large_blocks

    give_back_large_blocks()  # a chunk's fixes freed leave the process's memory (telemetria/malloc.py)
    _die_with_parent()
    _lower_priority(int(argv[1]))
    logging.config.dictConfig(log_config())
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main(float(argv[0]), Part(int(argv[2]), int(argv[3])) if len(argv) > 3 else Part()))


if __name__ == "__main__":
    main(sys.argv[1:])
