"""bench.chaos fails a scenario unless every fix the fleet made ended up acknowledged and stored once."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bench.chaos import Row
from telemetria.sim.outbox import KeyLedger, fix_key
from telemetria.sim.runner import FleetStats

KEY = fix_key("T1", datetime(2026, 11, 30, 12, tzinfo=UTC))


def row(**stats: int) -> Row:
    ledger = KeyLedger(sent={KEY}, acked={KEY})
    fleet = FleetStats(**stats)  # type: ignore[arg-type]
    return Row("service SIGKILL", 2, fleet, ledger, {KEY}, 0, 1.0)


def test_a_scenario_where_everything_was_acknowledged_and_stored_passes() -> None:
    assert row().problems() == [] and not row().failed


@pytest.mark.parametrize(
    ("stats", "problem"),
    [
        ({"pending": 40}, "40 fixes still pending after the drain"),
        ({"dropped": 3}, "3 fixes dropped by trackers"),
        ({"rejected": 1}, "1 fixes rejected by the server"),
    ],
)
def test_fixes_never_acknowledged_fail_the_scenario(stats: dict[str, int], problem: str) -> None:
    # A service that never recovers leaves the trackers' buffers full: nothing acknowledged, nothing
    # lost by key, yet nothing got through either.
    r = row(**stats)
    assert r.failed and r.problems() == [problem]


def test_a_lost_fix_fails_the_scenario() -> None:
    r = row()
    r.stored = set()
    assert r.problems() == ["1 acknowledged but not stored"]
