"""The simulator's tracker-side HTTP logic, without HTTP: buffering, retry policy, clock, wire format."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import orjson
import pytest

from telemetria.fix import Fix
from telemetria.ingest.decode import decode_items, parse_body
from telemetria.ingest.validate import Limits, validate
from telemetria.sim import Backoff, FleetStats, Outbox, Outcome, SimClock, TrackerBuffer, classify, simulate_vehicle
from telemetria.sim.outbox import KeyLedger, fix_key, parse_retry_after
from telemetria.sim.runner import HORIZON_S, _count_answer, default_start
from telemetria.sim.wire import body, fix_json, rfc3339

T0 = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def fixes(n: int, first: int = 0) -> list[Fix]:
    return [Fix(ts=T0 + timedelta(seconds=30 * i), lat=-10.43, lon=-62.47) for i in range(first, first + n)]


def outbox(max_batch: int = 500) -> Outbox:
    return Outbox(Backoff(np.random.default_rng(0), base_s=1.0, cap_s=60.0, jitter=0.0), max_batch=max_batch)


def test_tracker_buffer_keeps_order_until_acknowledged() -> None:
    buf = TrackerBuffer(capacity=5)
    assert buf.push(fixes(3)) == 0
    assert buf.pending(2) == fixes(2) and len(buf) == 3  # looking does not remove
    buf.ack(2)
    assert buf.pending() == fixes(1, first=2)
    # Full, it forgets the oldest.
    assert buf.push(fixes(6, first=3)) == 2
    assert buf.pending() == fixes(5, first=4)
    buf.ack(99)
    assert len(buf) == 0 and buf.pending() == []


@pytest.mark.parametrize(
    ("status", "retry_after", "want"),
    [
        (200, None, Outcome("ack")),
        (204, None, Outcome("ack")),
        (None, None, Outcome("retry")),
        (503, "7", Outcome("retry", 7.0)),
        (429, "2", Outcome("retry", 2.0)),
        (500, None, Outcome("retry")),
        (502, "junk", Outcome("retry")),
        (408, None, Outcome("retry")),
        (413, None, Outcome("split")),
        (400, None, Outcome("drop")),
        (401, "5", Outcome("drop")),
        (422, None, Outcome("drop")),
        (415, None, Outcome("drop")),
    ],
)
def test_classify_answers(status: int | None, retry_after: str | None, want: Outcome) -> None:
    assert classify(status, retry_after) == want


def test_retry_after_as_http_date() -> None:
    now = datetime(2026, 11, 30, 10, 0, 0, tzinfo=UTC)
    assert parse_retry_after("Mon, 30 Nov 2026 10:00:30 GMT", now) == 30.0
    assert parse_retry_after("Mon, 30 Nov 2026 09:00:00 GMT", now) == 0.0
    assert parse_retry_after(" 12 ", now) == 12.0
    assert parse_retry_after("", now) is None and parse_retry_after("soon", now) is None


def test_backoff_doubles_to_a_cap_and_honours_retry_after() -> None:
    b = Backoff(np.random.default_rng(1), base_s=1.0, cap_s=8.0, jitter=0.2)
    delays = [b.failed() for _ in range(6)]
    for got, want in zip(delays, [1, 2, 4, 8, 8, 8], strict=True):
        assert want * 0.8 <= got <= want * 1.2
    # The server's wait is a minimum; jitter only adds to it.
    assert 30.0 <= b.failed(30.0) <= 36.0
    b.succeeded()
    assert b.failures == 0 and b.failed() <= 1.2


def test_outbox_keeps_fixes_until_a_2xx() -> None:
    box = outbox()
    box.add(fixes(3))
    first = box.batch(now=0.0)
    assert first == fixes(3)
    box.settle(len(first), classify(503, "10"), now=0.0)
    assert box.batch(now=5.0) == [] and len(box) == 3  # backing off, nothing lost
    box.add(fixes(2, first=3))  # new fixes queue behind the unacknowledged ones
    again = box.batch(now=10.5)
    assert again == fixes(5)
    box.settle(len(again), classify(None), now=10.5)  # connection refused: second failure, 2 s (no jitter)
    assert box.batch(now=12.4) == [] and box.batch(now=12.5) == fixes(5)
    box.settle(5, classify(200), now=12.5)
    assert len(box) == 0 and box.backoff.failures == 0 and box.batch(now=12.5) == []


def test_outbox_drops_what_can_never_succeed_and_splits_what_is_too_big() -> None:
    box = outbox(max_batch=4)
    box.add(fixes(6))
    batch = box.batch(0.0)
    assert len(batch) == 4
    box.settle(4, classify(413), 0.0)
    assert box.max_batch == 2 and len(box) == 6
    box.settle(len(box.batch(0.0)), classify(422), 0.0)  # refused for good: logged and dropped
    assert box.batch(0.0) == fixes(2, first=2)


def test_replayed_uploads_through_a_flaky_link_arrive_once_each() -> None:
    """Every fix of a simulated run is acknowledged despite failures; nothing leaves the buffer without a 2xx."""
    sim = simulate_vehicle(5, T0, 30)
    answers = iter([503, None, 200, 200, 500, 429, 200, 408] * 1000)
    box = outbox(max_batch=8)
    stored: dict[datetime, Fix] = {}
    now = 0.0
    for up in sim.uploads:
        now = max(now, (up.sent_at - T0).total_seconds())
        box.add(up.fixes)
        while batch := box.batch(now):
            status = next(answers)
            if status == 200:
                for f in batch:
                    stored.setdefault(f.ts, f)
            box.settle(len(batch), classify(status, "3"), now)
    while len(box):  # drain what is left once the run is over
        now = max(now, box.retry_at)
        batch = box.batch(now)
        status = next(answers)
        if status == 200:
            stored.update({f.ts: f for f in batch})
        box.settle(len(batch), classify(status), now)
    assert sorted(stored) == [T0 + timedelta(seconds=float(t)) for t in sim.log.t_s]


def test_sim_clock_and_default_start() -> None:
    clock = SimClock(T0, speedup=10.0, wall0=100.0)
    assert clock.wall(T0 + timedelta(minutes=10)) == pytest.approx(160.0)
    assert clock.sim(160.0) == T0 + timedelta(minutes=10)
    now = datetime(2026, 11, 30, 12, 0, 0, 123456, tzinfo=UTC)
    assert default_start(now, 1.0, None) == now.replace(microsecond=0)
    # Sped up, the fleet replays the past and reaches the present only when it ends.
    assert default_start(now, 10.0, 60.0) == now.replace(microsecond=0) - timedelta(seconds=540)
    assert default_start(now, 2.0, None) == now.replace(microsecond=0) - timedelta(seconds=HORIZON_S)


def test_wire_format_is_what_the_service_decodes() -> None:
    sim = simulate_vehicle(5, T0, 30)
    sent = sim.uploads[0].fixes + sim.uploads[1].fixes
    assert rfc3339(T0) == "2026-11-30T10:00:00.000Z"
    one = orjson.loads(body(sent[:1]))
    assert set(one) == {
        "ts", "lat", "lon", "speed_kmh", "heading_deg", "altitude_m", "accuracy_m", "hdop", "satellites",
        "ignition", "odometer_m", "valid",
    }  # fmt: skip
    assert "driver_id" not in fix_json(Fix(ts=T0, lat=1.0, lon=2.0))
    items, batch = parse_body(body(sent), max_items=10_000)
    assert batch and not parse_body(body(sent[:1]), max_items=10_000)[1]
    _, ok, bad = validate(decode_items(items), now=T0 + timedelta(days=1), limits=Limits())
    assert bad == [] and ok == sent


def test_fleet_stats_count_answers() -> None:
    stats = FleetStats(vehicles=2)
    answer = b'{"accepted": 3, "duplicates": 2, "rejected": [{"index": 4, "error": "x"}]}'
    assert _count_answer(stats, answer, fixes(6)) == (2, [4])
    assert _count_answer(stats, b"", fixes(2)) == (0, [])  # a 2xx without counts: all taken
    assert (stats.accepted, stats.duplicates, stats.rejected, stats.acknowledged) == (5, 2, 1, 7)
    line = stats.summary()
    assert "accepted=5" in line and "dup=2" in line and "\n" not in line


def test_fix_key_is_the_wire_precision() -> None:
    late = T0.replace(microsecond=123_987)
    assert fix_key("a", late) == ("a", T0.replace(microsecond=123_000)) == fix_key("a", late.astimezone())


def test_key_ledger_tells_stored_without_an_answer_from_known_duplicates() -> None:
    ledger = KeyLedger()
    first = ledger.sending("t1", fixes(3))
    ledger.failed(first)  # the process died: maybe committed, maybe not
    again = ledger.sending("t1", fixes(5))  # the retry carries the same 3 and 2 new ones
    ledger.answered(again, duplicates=3)  # the 3 had been committed before the crash
    assert ledger.stored_unanswered == 3
    assert ledger.sent == ledger.acked == set(again) and ledger.unanswered == set(first)
    # A re-sent copy of an acknowledged fix, a repeat within the batch and a rejected item explain
    # their duplicates themselves.
    batch = ledger.sending("t1", [*fixes(1), *fixes(1, first=5), *fixes(2, first=5)])  # keys 0, 5, 5, 6
    ledger.answered(batch, duplicates=2, rejected=[3])
    assert ledger.stored_unanswered == 3
    assert batch[1] in ledger.acked and batch[3] in ledger.sent and batch[3] not in ledger.acked
