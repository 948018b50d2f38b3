"""Every Prometheus metric of the service, the helpers that feed them, and the /metrics rendering.

Several worker processes (`serve --workers N`): `serve.run` points PROMETHEUS_MULTIPROC_DIR at a
fresh directory of its own run before any worker starts, so every process writes its counters
and histograms to memory-mapped files there and a scrape answered by any worker adds up all of
them (prometheus-client's multiprocess mode). Facts that live in the database (the age of each
vehicle's last fix) are read from it at scrape time, so they are the same whichever worker answers.

Metrics sit below the packages they observe: ingest and reports import this module, and it imports
none of them (a rejection's reason code is carried by the rejection itself, `telemetria.fix`).
"""

from __future__ import annotations

import bisect
import math
import operator
import os
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from functools import reduce, wraps
from typing import Generic, ParamSpec, Protocol, TypeVar

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    values,
)
from prometheus_client import multiprocess as multiprocess_files
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from telemetria.fix import Rejected

MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"
CONTENT_TYPE = CONTENT_TYPE_LATEST

INGEST_REQUESTS = Counter(
    "telemetria_ingest_requests", "Ingest requests answered, by protocol and HTTP status", ["protocol", "status"]
)
INGEST_FIXES = Counter(
    "telemetria_ingest_fixes",
    "Fixes received, by outcome: accepted (stored now), duplicate (already stored), rejected",
    ["protocol", "outcome"],
)
INGEST_REJECTED = Counter("telemetria_ingest_rejected", "Fixes rejected, by reason", ["protocol", "reason"])
INGEST_BATCH = Histogram(
    "telemetria_ingest_batch_fixes",
    "Fixes (valid or not) per ingest request",
    ["protocol"],
    buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000),
)
FLUSH_ROWS = Histogram(
    "telemetria_writer_flush_rows",
    "Rows per group-commit transaction of the ingest writer",
    buckets=(1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 5000, 10000),
)
COMMIT_SECONDS = Histogram(
    "telemetria_writer_commit_seconds",
    "Duration of one group-commit transaction, from its first statement to its commit",
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)
FIX_DELAY = Histogram(
    "telemetria_ingest_fix_delay_seconds",
    "Time from a fix's own time to the commit that stored it (store-and-forward delay), stored fixes only",
    buckets=(1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 10800, 21600, 43200, 86400, 259200, 604800, 2592000),
)
WRITER_PENDING = Gauge(
    "telemetria_writer_pending_fixes",
    "Fixes queued for the database, sampled after each flush (summed over live processes)",
    multiprocess_mode="livesum",
)
REPORT_SECONDS = Histogram(
    "telemetria_report_duration_seconds",
    "Time to compute a report, by report name and outcome (ok, error)",
    ["report", "outcome"],
    buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300),
)


M = TypeVar("M", Counter, Histogram)


class Children(Generic[M]):
    """A labelled metric's children, each looked up once: `labels()` takes a lock, checks and joins the
    values every call, a measurable share of a single-fix request (docs/measurements.md). The label
    values used here come from small fixed sets (protocols, HTTP statuses, telemetria.fix.REASONS), so
    the cache stays small; a child is the object `labels()` returns, so the series are the same."""

    def __init__(self, metric: M) -> None:
        self._metric: M = metric
        self._children: dict[tuple[str, ...], M] = {}

    def __call__(self, *values: str) -> M:
        child = self._children.get(values)
        if child is None:
            child = self._children[values] = self._metric.labels(*values)
        return child


_BATCH = Children(INGEST_BATCH)
_FIXES = Children(INGEST_FIXES)
_REJECTED = Children(INGEST_REJECTED)
_REQUESTS: dict[tuple[str, int], Counter] = {}


class IngestOutcome(Protocol):
    """What became of one request's fixes (ingest.rows.IngestResult): metrics import nothing of ingest."""

    @property
    def accepted(self) -> int: ...
    @property
    def duplicates(self) -> int: ...
    @property
    def rejected(self) -> Sequence[Rejected]: ...


def observe_ingest(protocol: str, received: int, result: IngestOutcome) -> None:
    """Count one request's fixes by outcome and rejection reason, and its size."""
    _BATCH(protocol).observe(received)
    if result.accepted:
        _FIXES(protocol, "accepted").inc(result.accepted)
    if result.duplicates:
        _FIXES(protocol, "duplicate").inc(result.duplicates)
    if result.rejected:
        _FIXES(protocol, "rejected").inc(len(result.rejected))
        for r in result.rejected:
            _REJECTED(protocol, r.reason).inc()  # a code of telemetria.fix.REASONS


def observe_request(protocol: str, status: int) -> None:
    child = _REQUESTS.get((protocol, status))
    if child is None:
        child = _REQUESTS[protocol, status] = INGEST_REQUESTS.labels(protocol, str(status))
    child.inc()


def observe_flush(rows: int, seconds: float, stored_ts: Sequence[datetime]) -> None:
    """One committed flush: its size, its duration (s) and, per stored fix, now minus the fix time (s)."""
    FLUSH_ROWS.observe(rows)
    COMMIT_SECONDS.observe(seconds)
    now = time.time()
    observe_many(FIX_DELAY, [now - t.timestamp() for t in stored_ts])


def observe_many(hist: Histogram, amounts: Iterable[float]) -> None:
    """hist.observe(a) for every a, bucketed here and written once per bucket.

    A flush stores up to thousands of fixes; one observe() per fix costs about 1.6 µs in
    multiprocess mode (a lock and a write to the mapped file each), several % of the writer's
    time per fix. This fills the same buckets (prometheus-client keeps per-bucket counts, made
    cumulative when collected) with one write per bucket; tests/unit/test_ops_units.py checks
    that the result equals calling observe() for each amount.
    """
    values = amounts if isinstance(amounts, list) else list(amounts)
    if not values:
        return
    # The count of values at or below each bound, read off the values sorted once (C code, no Python
    # step per value): a value goes in the first bucket whose bound is >= it, as observe() picks.
    ordered = sorted(values)
    bounds: list[float] = hist._upper_bounds
    counts = []
    below = 0
    for bound in bounds:
        upto = bisect.bisect_right(ordered, bound)
        counts.append(upto - below)
        below = upto
    total = reduce(operator.add, values, 0.0)  # added in order, as one observe() each adds them
    hist._sum.inc(total)
    for i, n in enumerate(counts):
        if n:
            hist._buckets[i].inc(n)


P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def report_timer(report: str) -> Iterator[None]:
    """Time a block as the report `report` (seconds), labelled ok, or error if it raises."""
    start = time.perf_counter()
    outcome = "error"
    try:
        yield
        outcome = "ok"
    finally:
        REPORT_SECONDS.labels(report, outcome).observe(time.perf_counter() - start)


def timed_report(report: str) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Decorator for the async function that computes a report: `@timed_report("km_per_vehicle")`."""

    def decorate(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @wraps(fn)
        async def timed(*args: P.args, **kwargs: P.kwargs) -> R:
            with report_timer(report):
                return await fn(*args, **kwargs)

        return timed

    return decorate


# --- scrape time ------------------------------------------------------------------------------


def multiprocess() -> bool:
    """True when values live in PROMETHEUS_MULTIPROC_DIR (set before prometheus-client was imported)."""
    return bool(getattr(values.ValueClass, "_multiprocess", False)) and MULTIPROC_ENV in os.environ


def database_families(up: bool, last_fixes: Sequence[tuple[str, float | None]]) -> list[Metric]:
    """Gauges read from the database at scrape time: whether it answered, each vehicle's last-fix age (s)."""
    db_up = GaugeMetricFamily("telemetria_database_up", "1 if the database answered this scrape's query, else 0")
    db_up.add_metric([], 1.0 if up else 0.0)
    age = GaugeMetricFamily(
        "telemetria_vehicle_last_fix_age_seconds",
        "Seconds since the newest stored fix of each active vehicle (+Inf: no fix ever)",
        labels=["vehicle"],
    )
    for plate, seconds in last_fixes:
        age.add_metric([plate], math.inf if seconds is None else seconds)
    return [db_up, age] if up else [db_up]


class _Fixed(Collector):
    def __init__(self, families: list[Metric]):
        self._families = families

    def collect(self) -> Iterable[Metric]:
        return self._families


def render(extra: list[Metric]) -> bytes:
    """The text exposition: this process's (or every worker's) metrics, then `extra`."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(_Fixed(extra))
    if multiprocess():
        MultiProcessCollector(registry)  # type: ignore[no-untyped-call]  # every worker's files, dead ones' counters too
        return generate_latest(registry)
    return generate_latest(REGISTRY) + generate_latest(registry)


def mark_process_dead(pid: int) -> None:
    """A worker died: drop its live gauges (its counters stay, they are history)."""
    if MULTIPROC_ENV in os.environ:
        multiprocess_files.mark_process_dead(pid)  # type: ignore[no-untyped-call]
