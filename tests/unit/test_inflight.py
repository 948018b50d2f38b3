"""The ingest in-flight budget: claims, each tracker's share, growth of undeclared bodies, release however a
request ends."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from telemetria.http import HttpError
from telemetria.ingest.inflight import InflightBudget
from telemetria.settings import Settings

A, B, C = 1, 2, 3  # tracker ids


def budget(max_bytes: int = 100, max_requests: int = 5, share_bytes: int = 100, share_requests: int = 5):
    return InflightBudget(max_bytes, max_requests, share_bytes=share_bytes, share_requests=share_requests)


def shed(e: pytest.ExceptionInfo[HttpError]) -> bool:
    return e.value.status == 503 and int(e.value.headers["Retry-After"]) > 0 and "overloaded" in e.value.detail


def test_bytes_and_requests_are_claimed_and_given_back() -> None:
    b = budget(max_requests=3)
    with b.hold(A, 60):
        with b.hold(B, 40):
            assert (b.bytes, b.requests) == (100, 2)
            with pytest.raises(HttpError) as e:
                b.hold(C, 1)
            assert shed(e)
            with b.hold(C, 0):  # a request without a body still counts as one
                with pytest.raises(HttpError) as e:
                    b.hold(C, 0)
                assert shed(e) and "3 requests" in e.value.detail
        assert (b.bytes, b.requests) == (60, 1)
    assert (b.bytes, b.requests) == (0, 0)
    assert b.held_by(A) == b.held_by(B) == (0, 0)


def test_a_refused_claim_takes_nothing() -> None:
    b = budget(max_requests=1)
    with b.hold(A, 10), pytest.raises(HttpError):
        b.hold(B, 10)
    assert (b.bytes, b.requests) == (0, 0)
    with pytest.raises(HttpError):
        b.hold(A, 101)
    assert (b.bytes, b.requests) == (0, 0) and b.held_by(A) == (0, 0)


def test_one_tracker_holds_at_most_its_share_and_the_others_still_fit() -> None:
    b = budget(max_bytes=100, max_requests=10, share_bytes=40, share_requests=3)
    with b.hold(A, 30):
        with pytest.raises(HttpError) as e:
            b.hold(A, 11)  # 41 bytes of A's would be in flight
        assert shed(e) and "this tracker" in e.value.detail and "at most 40" in e.value.detail
        with b.hold(A, 10), b.hold(A, 0):
            assert b.held_by(A) == (40, 3)
            with pytest.raises(HttpError) as e:
                b.hold(A, 0)  # a fourth request of A's
            assert shed(e) and "3 requests" in e.value.detail
            with b.hold(B, 40), b.hold(C, 20):  # the others are not affected by A's uploads
                assert (b.bytes, b.requests) == (100, 5)
        assert b.held_by(A) == (30, 1)
    assert (b.bytes, b.requests) == (0, 0) and b.held_by(A) == (0, 0)


def test_undeclared_bodies_grow_their_claim_as_they_arrive() -> None:
    b = budget(share_bytes=80)
    with b.hold(A, 30):
        with b.hold(B, 0) as hold:
            hold.cover(50)
            hold.cover(40)  # never shrinks: the bytes already read are still held
            assert b.bytes == 80 and b.held_by(B) == (50, 1)
            with pytest.raises(HttpError) as e:
                hold.cover(71)  # 101 in all
            assert shed(e) and b.bytes == 80
            with pytest.raises(HttpError) as e:
                hold.cover(81)  # past B's share
            assert shed(e) and "this tracker" in e.value.detail and b.bytes == 80
        assert b.bytes == 30
    assert (b.bytes, b.requests) == (0, 0)


def test_failures_release_and_release_is_idempotent() -> None:
    b = budget()
    with pytest.raises(ZeroDivisionError), b.hold(A, 70) as hold:
        hold.cover(90)
        _ = 1 / 0
    assert (b.bytes, b.requests) == (0, 0) and b.held_by(A) == (0, 0)
    hold.release()
    hold.cover(99)  # a released claim takes nothing more
    assert (b.bytes, b.requests) == (0, 0) and b.held_by(A) == (0, 0)


def test_the_budget_and_each_share_must_hold_at_least_one_largest_body() -> None:
    s = Settings()
    assert s.ingest_max_inflight_bytes >= s.tracker_share_bytes == s.max_body_bytes
    assert s.ingest_max_inflight_requests >= s.tracker_share_requests == s.ingest_max_inflight_requests_per_tracker
    mib = 1024 * 1024
    with pytest.raises(ValidationError, match="TELEMETRIA_MAX_BODY_BYTES"):
        Settings(max_body_bytes=2 * mib, ingest_max_inflight_bytes=mib)
    with pytest.raises(ValidationError, match="TELEMETRIA_MAX_BODY_BYTES"):
        Settings(max_body_bytes=2 * mib, ingest_max_inflight_bytes_per_tracker=mib)
    # A share is never more than the whole, and an OsmAnd body never more than any body.
    s = Settings(ingest_max_inflight_bytes=32 * mib, ingest_max_inflight_bytes_per_tracker=33 * mib)
    assert s.tracker_share_bytes == 32 * mib
    assert Settings(ingest_max_inflight_requests=4).tracker_share_requests == 4
    assert Settings(max_body_bytes=4096).osmand_body_limit == 4096
