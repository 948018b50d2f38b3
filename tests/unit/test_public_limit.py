"""The public area's limit per client address (publication/limit.py): a token bucket each, bounded memory."""

from __future__ import annotations

import asyncio

from starlette.types import Message, Receive, Scope, Send

from telemetria.publication.limit import PerClient, PublicLimitMiddleware


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


class Asgi:
    """The application behind the limit (answers 200) and what was sent back, per call."""

    def __init__(self) -> None:
        self.calls = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls += 1
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})


async def _status(limit: PublicLimitMiddleware) -> int:
    return (await _answer(limit))[0]


async def _answer(limit: PublicLimitMiddleware) -> tuple[int, dict[bytes, bytes]]:
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def receive() -> Message:
        return {"type": "http.request", "body": b"", "more_body": False}

    scope = {"type": "http", "path": "/public/itineraries", "client": ("192.0.2.7", 4000)}
    await limit(scope, receive, send)
    return int(sent[0]["status"]), dict(sent[0]["headers"])


async def test_a_refusal_is_held_before_it_is_sent_at_most_the_wait_it_names() -> None:
    """A client that does not honour Retry-After gets one refusal per hold instead of hundreds a second (fails
    when the refusal is sent at once: nothing is held)."""
    held: list[float] = []

    async def sleep(s: float) -> None:
        held.append(s)

    app = Asgi()
    limit = PublicLimitMiddleware(app, enabled=True, rate=0.5, burst=1, hold_s=5.0, sleep=sleep)
    limit.limit.clock = lambda: 0.0  # the buckets' time stands still: the waits named do not depend on the machine
    assert [await _status(limit) for _ in range(3)] == [200, 429, 429]
    assert app.calls == 1 and held == [2.0, 2.0]  # the wait named (2 s) is shorter than the hold
    limit.hold_s = 1.0
    status, headers = await _answer(limit)
    assert status == 429 and held[-1] == 1.0
    assert headers[b"retry-after"] == b"1"  # the 2 s named less the 1 s held (fails when the hold is not deducted)


async def test_no_more_than_max_held_refusals_wait_at_once() -> None:
    """Holding is bounded: with MAX_HELD refusals paused, the next one is sent at once (fails without the bound)."""
    release = asyncio.Event()
    held: list[float] = []

    async def sleep(s: float) -> None:
        held.append(s)
        await release.wait()

    limit = PublicLimitMiddleware(Asgi(), enabled=True, rate=0.001, burst=1, hold_s=1.0, sleep=sleep)
    limit.MAX_HELD = 2
    assert await _status(limit) == 200
    paused = [asyncio.create_task(_status(limit)) for _ in range(2)]
    await asyncio.sleep(0)
    assert limit.held == 2 and not any(t.done() for t in paused)
    assert await asyncio.wait_for(_status(limit), 5) == 429 and len(held) == 2  # sent at once, not held
    release.set()
    assert [await t for t in paused] == [429, 429] and limit.held == 0
