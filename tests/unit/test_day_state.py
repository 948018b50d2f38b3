"""The day panel's state of a run so far (occurrences/day.py `run_state`): pure, on the boletim's status."""

from __future__ import annotations

import pytest

from telemetria.occurrences.day import run_state

START, END = 1_000.0, 2_000.0


@pytest.mark.parametrize(
    ("status", "first", "now", "state"),
    [
        ("made", 1_100.0, 1_500.0, "made"),  # made before its window is over: made
        ("justified", None, 2_500.0, "justified"),
        ("not_made", None, 900.0, "upcoming"),  # its window has not begun
        ("not_made", None, 1_500.0, "not_started"),  # past its start with no fix on the route
        ("not_made", 1_100.0, 1_500.0, "in_progress"),  # on the route, not yet enough for made
        ("partial", 1_100.0, 1_500.0, "in_progress"),
        ("partial", 1_100.0, 2_000.1, "partial"),  # over: the rule's status stands
        ("not_made", None, 2_000.1, "not_made"),
        ("not_made", None, END, "not_started"),  # the window's last second is still inside it
    ],
)
def test_a_run_state_by_its_window_and_status(status: str, first: float | None, now: float, state: str) -> None:
    assert run_state(status, START, END, first, now) == state
