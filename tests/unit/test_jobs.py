"""The job queue for expensive work (telemetria/jobs.py): bounded turns, a per-caller share, 429 with a wait."""

from __future__ import annotations

import asyncio
import operator

import pytest

from telemetria.jobs import Busy, Jobs


async def test_a_caller_holds_at_most_its_share_and_is_told_when_to_try_again() -> None:
    jobs = Jobs(workers=2, queue=4, per_user=1)
    mine = await jobs.enter("user:1")
    with pytest.raises(Busy) as e:
        await jobs.enter("user:1")
    assert e.value.status == 429 and "tente novamente em" in e.value.detail
    assert int(e.value.headers["Retry-After"]) >= 1
    other = await jobs.enter("user:2")  # another caller still has a turn
    jobs.leave(mine)
    again = await jobs.enter("user:1")  # and the first one, once its job is over
    for t in (other, again):
        jobs.leave(t)


async def test_at_most_workers_run_and_at_most_queue_wait() -> None:
    jobs = Jobs(workers=1, queue=1, per_user=5)
    first = await jobs.enter("a")
    waiting = asyncio.create_task(jobs.enter("b"))
    await asyncio.sleep(0)
    assert not waiting.done()  # one turn only: the second waits
    with pytest.raises(Busy):
        await jobs.enter("c")  # the queue holds one: a third is refused at once, not queued
    jobs.leave(first)
    second = await asyncio.wait_for(waiting, 1)
    jobs.leave(second)


async def test_a_cancelled_wait_gives_its_share_back() -> None:
    jobs = Jobs(workers=1, queue=2, per_user=1)
    held = await jobs.enter("a")
    waiting = asyncio.create_task(jobs.enter("b"))
    await asyncio.sleep(0)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    jobs.leave(held)
    jobs.leave(await asyncio.wait_for(jobs.enter("b"), 1))  # "b" was not left holding a share


async def test_work_runs_in_the_process_pool_and_threads_in_a_turn() -> None:
    jobs = Jobs(workers=1, queue=0, per_user=1)
    try:
        assert await jobs.run_process("a", operator.mul, 6, 7) == 42
        assert await jobs.run_thread("a", operator.add, 2, 3) == 5
    finally:
        jobs.close()


async def test_the_wait_grows_with_the_jobs_ahead() -> None:
    jobs = Jobs(workers=1, queue=10, per_user=10)
    jobs._durations.extend([4.0, 4.0])
    running = await jobs.enter("a")
    waiting = [asyncio.create_task(jobs.enter("a")) for _ in range(3)]
    await asyncio.sleep(0)
    assert jobs.retry_after_s() == 16  # one running and three waiting, 4 s each, one worker
    jobs.leave(running)
    for t in waiting:
        jobs.leave(await t)
