"""The login limits' arithmetic (auth/limits.py) and the per-key lock, without a database."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

from telemetria.auth.limits import LoginLimits
from telemetria.auth.throttle import KeyedLocks

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def ago(*seconds: float) -> tuple[datetime, ...]:
    return tuple(NOW - timedelta(seconds=s) for s in seconds)


def test_an_address_waits_until_its_oldest_counted_attempt_is_a_minute_old() -> None:
    limits = LoginLimits(attempts=ago(50, 40, 30), failures=(), now=NOW)
    assert limits.address_wait_s(4) == 0
    assert limits.address_wait_s(3) == 10  # the attempt 50 s ago leaves the window in 10 s
    assert limits.address_wait_s(2) == 20  # two must leave: the second oldest, 40 s ago, in 20 s


def test_the_lockout_counts_the_newest_failures_and_ends_when_the_oldest_of_them_is_old_enough() -> None:
    failures = ago(10, 100, 200, 300)  # newest first, as the query gives them
    limits = LoginLimits(attempts=(), failures=failures, now=NOW)
    assert limits.lockout_wait_s(5, 900) == 0
    assert limits.lockout_wait_s(5, 900, failing_now=True) == 600  # this failure is the fifth: 900 - 300
    assert limits.lockout_wait_s(4, 900) == 600
    assert limits.lockout_wait_s(2, 900) == 800  # the two newest: the older of them, 100 s ago
    assert limits.lockout_wait_s(1, 0.5, failing_now=True) == 1  # never 0 while locked
    assert limits.lockout_wait_s(1, 0) == 0  # a lockout of 0 s is no lockout


async def test_keyed_locks_serialize_one_key_only_and_forget_it() -> None:
    locks = KeyedLocks()
    order: list[str] = []

    async def task(key: str, name: str) -> None:
        async with locks.hold(key):
            order.append(f"{name} in")
            await asyncio.sleep(0.01)
            order.append(f"{name} out")

    await asyncio.gather(task("a", "a1"), task("a", "a2"), task("b", "b1"))
    assert order.index("a1 out") < order.index("a2 in")
    assert order.index("b1 in") < order.index("a1 out")  # another key does not wait
    assert locks._locks == {}
