"""The public area's limit per client address (publication/limit.py): a token bucket each, bounded memory."""

from __future__ import annotations

from telemetria.publication.limit import PerClient


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_a_burst_then_the_rate_and_the_wait_named() -> None:
    clock = Clock()
    limit = PerClient(rate=2.0, burst=3, clock=clock)
    assert [limit.take("a") for _ in range(3)] == [None, None, None]
    assert limit.take("a") == 1  # empty: one token comes in 0.5 s, said as whole seconds
    assert limit.take("b") is None  # another address has its own bucket
    clock.t = 0.5
    assert limit.take("a") is None
    assert limit.take("a") == 1
    clock.t = 100.0  # refilled, never beyond the burst
    assert [limit.take("a") for _ in range(4)] == [None, None, None, 1]


def test_a_slow_rate_names_a_longer_wait() -> None:
    limit = PerClient(rate=0.1, burst=1, clock=Clock())
    assert (limit.take("a"), limit.take("a")) == (None, 10)


def test_memory_is_bounded_by_forgetting_the_least_recent_address() -> None:
    clock = Clock()
    limit = PerClient(rate=1.0, burst=1, max_clients=2, clock=clock)
    assert (limit.take("a"), limit.take("b"), limit.take("c")) == (None, None, None)
    assert limit.take("b") == 1  # still known: empty
    assert limit.take("a") is None  # forgotten: a full bucket again
