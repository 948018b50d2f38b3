"""A simulated fleet posting real HTTP fixes to a running service, in simulated time (async)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta

import httpx
import numpy as np
import orjson

from telemetria.fix import Fix
from telemetria.sim import wire
from telemetria.sim.motion import MotionParams
from telemetria.sim.outbox import Backoff, Key, KeyLedger, Outbox, Outcome, classify
from telemetria.sim.roads import Grid, make_grid
from telemetria.sim.tracker import TrackerParams
from telemetria.sim.vehicle import DEFAULT_MOTION, simulate_vehicle, vehicle_route

log = logging.getLogger("telemetria.sim")

LOG_EVERY_S = 10.0
HORIZON_S = 12 * 3600.0  # wall seconds a sped-up fleet with no duration runs before reaching the present
PHASE_S = 1800.0  # vehicles start up to half an hour into a run, so the map is not a synchronised parade

# How run number `run` of fleet vehicle `index` is driven and tracked (None: the fleet's tracker), e.g. the demo's
# planted events; without one every run is DEFAULT_MOTION with the fleet's tracker.
RunSetup = Callable[[int, int], tuple[MotionParams, TrackerParams | None]]


@dataclass
class FleetStats:
    """Running counts for a simulated fleet; fixes unless named otherwise."""

    vehicles: int = 0
    generated: int = 0  # new fixes made by the trackers
    resent: int = 0  # copies of already-acknowledged fixes that trackers put in batches again
    sent: int = 0  # fixes in requests, every attempt counted
    requests: int = 0
    acknowledged: int = 0  # accepted + duplicates in 2xx answers
    accepted: int = 0
    duplicates: int = 0
    rejected: int = 0  # items the server refused in a 2xx answer
    dropped: int = 0  # given up: 4xx answers, or pushed out of a full tracker buffer
    http_errors: int = 0  # non-2xx answers and failed connections (requests)
    retries: int = 0  # requests re-sending a batch after a failure
    pending: int = 0  # fixes waiting in tracker buffers now
    by_status: Counter[str] = field(default_factory=Counter)
    last_error: str = ""
    started: float = field(default_factory=time.monotonic)

    def summary(self) -> str:
        """One log line: counts, rate of acknowledged fixes per wall second, answers by status."""
        rate = self.acknowledged / max(1e-9, time.monotonic() - self.started)
        statuses = " ".join(f"{k}:{v}" for k, v in sorted(self.by_status.items()))
        line = (
            f"{self.vehicles} vehicles | fixes generated={self.generated} resent={self.resent} sent={self.sent} "
            f"ack={self.acknowledged} ({rate:.1f}/s) accepted={self.accepted} dup={self.duplicates} "
            f"rejected={self.rejected} dropped={self.dropped} pending={self.pending} | "
            f"requests={self.requests} errors={self.http_errors} retries={self.retries} [{statuses}]"
        )
        return f"{line} last error: {self.last_error}" if self.last_error else line


@dataclass(frozen=True, slots=True)
class SimClock:
    """Simulated time running `speedup` times faster than the wall clock; wall times are loop.time() values."""

    start: datetime
    speedup: float
    wall0: float

    def wall(self, when: datetime) -> float:
        """The wall time at which simulated time reaches `when`."""
        return self.wall0 + (when - self.start).total_seconds() / self.speedup

    def sim(self, wall: float) -> datetime:
        """The simulated time at wall time `wall`."""
        return self.start + timedelta(seconds=(wall - self.wall0) * self.speedup)


def default_start(now: datetime, speedup: float, duration_s: float | None) -> datetime:
    """Where simulated time starts: `now`, or when sped up, early enough to reach `now` only at the end.

    The service refuses fixes from the future, so a sped-up fleet must replay the past: it catches up with
    the clock after duration_s wall seconds, or after HORIZON_S when it runs until stopped.
    """
    if speedup > 1:
        now -= timedelta(seconds=(speedup - 1) * (duration_s or HORIZON_S))
    return now.astimezone(UTC).replace(microsecond=0)


@dataclass
class _Fleet:
    client: httpx.AsyncClient
    endpoint: str
    clock: SimClock
    done: asyncio.Event
    stats: FleetStats
    interval_s: int
    seed: int
    grid: Grid
    tracker: TrackerParams = field(default_factory=TrackerParams)
    ledger: KeyLedger | None = None
    drain_s: float = 0.0
    plan: RunSetup | None = None

    def run_plan(self, index: int, run: int) -> tuple[MotionParams, TrackerParams]:
        motion, tracker = self.plan(index, run) if self.plan else (DEFAULT_MOTION, None)
        return motion, tracker or self.tracker

    async def sleep_until(self, wall: float) -> bool:
        """Sleep until loop time `wall`; False if the fleet was told to stop meanwhile."""
        delay = wall - asyncio.get_running_loop().time()
        if delay > 0 and not self.done.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.done.wait(), delay)
        return not self.done.is_set()


async def run_fleet(
    url: str,
    credentials: list[tuple[str, str]],
    *,
    interval_s: float = 30,
    seed: int = 0,
    speedup: float = 1.0,
    duration_s: float | None = None,
    start: datetime | None = None,
    stats: FleetStats | None = None,
    stop: asyncio.Event | None = None,
    drain_s: float = 0.0,
    ledger: KeyLedger | None = None,
    plan: RunSetup | None = None,
    tracker: TrackerParams | None = None,
) -> FleetStats:
    """Drive one simulated vehicle per (unique_id, token) and post its fixes to {url}/api/v1/fixes.

    Runs until `stop` is set or `duration_s` wall seconds pass. Simulated time starts at `start` (default:
    now, or early enough that a sped-up run of known duration ends now) and runs `speedup` times faster.
    Once stopped, each tracker keeps posting what it has buffered for up to `drain_s` wall seconds (retrying
    as usual); `ledger`, if given, records every fix key sent and what became of it; `plan`, if given, says how
    each run is driven and tracked (RunSetup); `tracker` is how the runs the plan leaves alone are tracked.
    """
    if speedup <= 0:
        raise ValueError("speedup must be positive")
    stats = stats if stats is not None else FleetStats()
    stats.vehicles = len(credentials)
    loop = asyncio.get_running_loop()
    begin = default_start(datetime.now(UTC), speedup, duration_s) if start is None else start
    log.info("simulating %d vehicles from %s at %gx", len(credentials), begin.isoformat(), speedup)
    quiet = logging.getLogger("httpx")
    if quiet.level == logging.NOTSET:
        quiet.setLevel(logging.WARNING)  # httpx logs every request at INFO; our summary replaces that
    done = asyncio.Event()
    watchers = [loop.call_later(duration_s, done.set)] if duration_s else []
    waiter = asyncio.create_task(_relay(stop, done)) if stop is not None else None
    n = max(1, len(credentials))
    limits = httpx.Limits(max_connections=min(100, n), max_keepalive_connections=min(100, n))
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(15.0, connect=5.0)) as client:
        fleet = _Fleet(
            client=client,
            endpoint=url.rstrip("/") + "/api/v1/fixes",
            clock=SimClock(begin.astimezone(UTC).replace(microsecond=0), speedup, loop.time()),
            done=done,
            stats=stats,
            interval_s=max(1, round(interval_s)),
            seed=seed,
            grid=make_grid(seed),
            ledger=ledger,
            drain_s=drain_s,
            plan=plan,
            tracker=tracker or TrackerParams(),
        )
        reporter = asyncio.create_task(_report(fleet))
        try:
            async with asyncio.TaskGroup() as tg:
                for i, (unique_id, token) in enumerate(credentials):
                    tg.create_task(_vehicle(fleet, i, unique_id, token), name=f"sim-{unique_id}")
        finally:
            done.set()
            for h in watchers:
                h.cancel()
            for task in (reporter, waiter):
                if task is not None:
                    task.cancel()
            log.info("simulation ended: %s", stats.summary())
    return stats


async def _relay(stop: asyncio.Event, done: asyncio.Event) -> None:
    await stop.wait()
    done.set()


async def _report(fleet: _Fleet) -> None:
    """Log the counts every LOG_EVERY_S wall seconds, never per request."""
    loop = asyncio.get_running_loop()
    while await fleet.sleep_until(loop.time() + LOG_EVERY_S):
        ahead = fleet.clock.sim(loop.time()) - datetime.now(UTC)
        note = f" (simulated time {ahead} ahead of the clock)" if ahead > timedelta(minutes=1) else ""
        log.info("simulating: %s%s", fleet.stats.summary(), note)


async def _vehicle(fleet: _Fleet, index: int, unique_id: str, token: str) -> None:
    """One tracker: its runs back to back, each upload posted when simulated time reaches its send time."""
    rng = np.random.default_rng([fleet.seed, index, 7])
    outbox = Outbox(Backoff(rng))
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    route = await asyncio.to_thread(vehicle_route, fleet.seed, index, fleet.grid)
    odometer = float(rng.uniform(20_000_000, 300_000_000))  # a bus arrives with some km on it already
    run_start = fleet.clock.start - timedelta(seconds=round(float(rng.uniform(0, PHASE_S))))
    run = 0
    while not fleet.done.is_set():
        motion, tracker = fleet.run_plan(index, run)
        tracker = replace(tracker, odometer_start_m=odometer)
        sim = await asyncio.to_thread(
            simulate_vehicle,
            fleet.seed,
            run_start,
            fleet.interval_s,
            vehicle=index,
            run=run,
            route=route,
            motion=motion,
            tracker=tracker,
        )
        for up in sim.uploads:
            if up.sent_at < fleet.clock.start:
                continue  # before the simulation began: this tracker was not reporting yet
            if not await _wait_sending(fleet, outbox, headers, fleet.clock.wall(up.sent_at), unique_id):
                break
            fleet.stats.generated += len(up.fixes) - up.resent
            fleet.stats.resent += up.resent
            fleet.stats.pending += len(up.fixes)
            lost = outbox.add(up.fixes)
            fleet.stats.dropped += lost
            fleet.stats.pending -= lost
            await _flush(fleet, outbox, headers, unique_id)
        odometer += sim.truth.distance_m
        run_start = sim.truth.time(sim.truth.duration_s + 1.0)
        run += 1
    await _drain(fleet, outbox, headers, unique_id)
    if len(outbox):
        log.debug("%s: %d fixes still buffered at stop", unique_id, len(outbox))


async def _wait_sending(fleet: _Fleet, outbox: Outbox, headers: dict[str, str], until: float, unique_id: str) -> bool:
    """Wait until wall time `until`, retrying buffered fixes when their backoff ends; False on stop."""
    while len(outbox) and outbox.retry_at < until:
        if not await fleet.sleep_until(outbox.retry_at):
            return False
        await _flush(fleet, outbox, headers, unique_id)
    return await fleet.sleep_until(until)


async def _drain(fleet: _Fleet, outbox: Outbox, headers: dict[str, str], unique_id: str) -> None:
    """After the stop: post what is still buffered, honouring backoffs, for up to fleet.drain_s wall seconds."""
    loop = asyncio.get_running_loop()
    until = loop.time() + fleet.drain_s
    while len(outbox) and loop.time() < until:
        if (wait := min(outbox.retry_at, until) - loop.time()) > 0:
            await asyncio.sleep(wait)
        if loop.time() >= outbox.retry_at:
            await _flush(fleet, outbox, headers, unique_id)


async def _flush(fleet: _Fleet, outbox: Outbox, headers: dict[str, str], unique_id: str) -> None:
    """Post buffered fixes in batches until the buffer is empty or a failure starts a backoff."""
    loop = asyncio.get_running_loop()
    stats = fleet.stats
    ledger = fleet.ledger
    while batch := outbox.batch(loop.time()):
        keys: list[Key] = ledger.sending(unique_id, batch) if ledger is not None else []
        stats.requests += 1
        stats.sent += len(batch)
        stats.retries += outbox.backoff.failures > 0
        try:
            r = await fleet.client.post(fleet.endpoint, content=wire.body(batch), headers=headers)
        except httpx.TransportError as e:
            outcome, key, detail = Outcome("retry"), type(e).__name__, str(e) or type(e).__name__
        else:
            outcome, key, detail = classify(r.status_code, r.headers.get("retry-after")), str(r.status_code), r.text
            if outcome.action == "ack":
                duplicates, rejected = _count_answer(stats, r.content, batch)
                if ledger is not None:
                    ledger.answered(keys, duplicates, rejected)
        if ledger is not None and outcome.action != "ack":
            ledger.failed(keys)
        stats.by_status[key] += 1
        if outcome.action != "ack":
            stats.http_errors += 1
            stats.last_error = f"{key} {detail[:200]}".strip()
        before = len(outbox)
        outbox.settle(len(batch), outcome, loop.time())
        stats.pending -= before - len(outbox)
        if outcome.action != "ack":
            stats.dropped += before - len(outbox)


def _count_answer(stats: FleetStats, content: bytes, batch: list[Fix]) -> tuple[int, list[int]]:
    """Add a 2xx answer's counts; a body without them counts the whole batch as accepted.

    Returns the answer's duplicates and the request positions it rejected.
    """
    try:
        answer = orjson.loads(content) if content else {}
    except orjson.JSONDecodeError:
        answer = {}
    if not isinstance(answer, dict):
        answer = {}
    rejected = answer.get("rejected") or []
    accepted = int(answer.get("accepted", len(batch) - len(rejected)))
    duplicates = int(answer.get("duplicates", 0))
    stats.accepted += accepted
    stats.duplicates += duplicates
    stats.acknowledged += accepted + duplicates
    stats.rejected += len(rejected)
    positions = [int(r["index"]) for r in rejected if isinstance(r, dict) and isinstance(r.get("index"), int)]
    return duplicates, positions
