"""The ingest in-flight budget: claims, growth of undeclared bodies, release however a request ends."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from telemetria.http import HttpError, InflightBudget
from telemetria.settings import Settings


def shed(e: pytest.ExceptionInfo[HttpError]) -> bool:
    return e.value.status == 503 and int(e.value.headers["Retry-After"]) > 0 and "overloaded" in e.value.detail


def test_bytes_and_requests_are_claimed_and_given_back() -> None:
    budget = InflightBudget(max_bytes=100, max_requests=3)
    with budget.hold(60):
        with budget.hold(40):
            assert (budget.bytes, budget.requests) == (100, 2)
            with pytest.raises(HttpError) as e:
                budget.hold(1)
            assert shed(e)
            with budget.hold(0):  # a request without a body still counts as one
                with pytest.raises(HttpError) as e:
                    budget.hold(0)
                assert shed(e) and "3 requests" in e.value.detail
        assert (budget.bytes, budget.requests) == (60, 1)
    assert (budget.bytes, budget.requests) == (0, 0)


def test_a_refused_claim_takes_nothing() -> None:
    budget = InflightBudget(max_bytes=100, max_requests=1)
    with budget.hold(10), pytest.raises(HttpError):
        budget.hold(10)
    assert (budget.bytes, budget.requests) == (0, 0)
    with pytest.raises(HttpError):
        budget.hold(101)
    assert (budget.bytes, budget.requests) == (0, 0)


def test_undeclared_bodies_grow_their_claim_as_they_arrive() -> None:
    budget = InflightBudget(max_bytes=100, max_requests=5)
    with budget.hold(30):
        with budget.hold(0) as hold:
            hold.cover(50)
            hold.cover(40)  # never shrinks: the bytes already read are still held
            assert budget.bytes == 80
            with pytest.raises(HttpError) as e:
                hold.cover(71)
            assert shed(e) and budget.bytes == 80
        assert budget.bytes == 30
    assert (budget.bytes, budget.requests) == (0, 0)


def test_failures_release_and_release_is_idempotent() -> None:
    budget = InflightBudget(max_bytes=100, max_requests=5)
    with pytest.raises(ZeroDivisionError), budget.hold(70) as hold:
        hold.cover(90)
        _ = 1 / 0
    assert (budget.bytes, budget.requests) == (0, 0)
    hold.release()
    hold.cover(99)  # a released claim takes nothing more
    assert (budget.bytes, budget.requests) == (0, 0)


def test_the_budget_must_hold_at_least_one_largest_body() -> None:
    s = Settings()
    assert s.ingest_max_inflight_bytes >= s.max_body_bytes
    with pytest.raises(ValidationError, match="TELEMETRIA_MAX_BODY_BYTES"):
        Settings(max_body_bytes=2 * 1024 * 1024, ingest_max_inflight_bytes=1024 * 1024)
