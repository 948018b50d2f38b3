"""Plausibility checks: each reason, and that request positions survive."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from telemetria.ingest.model import Fix, Rejected
from telemetria.ingest.validate import Limits, validate

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
GOOD = Fix(ts=NOW - timedelta(minutes=1), lat=-10.43, lon=-62.47, speed_kmh=40.0)
LIMITS = Limits()


@pytest.mark.parametrize(
    ("changes", "words"),
    [
        ({"lat": -90.0001}, "out of range"),
        ({"lon": 180.5}, "out of range"),
        ({"lat": float("nan")}, "out of range"),
        ({"lon": float("inf")}, "out of range"),
        ({"lat": 0.0, "lon": 0.0}, "(0, 0)"),
        ({"ts": NOW + timedelta(minutes=5, seconds=1)}, "future"),
        ({"ts": NOW - timedelta(days=732)}, "retention"),
        ({"speed_kmh": -0.1}, "speed_kmh"),
        ({"speed_kmh": 300.1}, "speed_kmh"),
        ({"speed_kmh": float("nan")}, "speed_kmh"),
        ({"accuracy_m": -1.0}, "accuracy_m"),
        ({"hdop": float("nan")}, "hdop"),
        ({"satellites": 300}, "satellites"),
        ({"altitude_m": 1e6}, "altitude_m"),
        ({"heading_deg": float("inf")}, "heading_deg"),
    ],
)
def test_each_check(changes: dict[str, Any], words: str) -> None:
    idx, ok, bad = validate([replace(GOOD, **changes)], NOW, LIMITS)
    assert (idx, ok) == ([], [])
    assert bad[0].index == 0 and words in bad[0].error


def test_boundaries_are_accepted() -> None:
    edge = [
        replace(GOOD, ts=NOW + timedelta(minutes=5)),
        replace(GOOD, ts=NOW - timedelta(days=731) + timedelta(seconds=1)),
        replace(GOOD, lat=-90.0, lon=180.0, speed_kmh=300.0),
        replace(GOOD, lat=0.0, lon=-62.0),
    ]
    idx, _, bad = validate(edge, NOW, LIMITS)
    assert bad == [] and idx == [0, 1, 2, 3]


def test_positions_survive_mixed_input() -> None:
    items: list[Fix | Rejected] = [GOOD, Rejected(1, "lat: expected a number"), replace(GOOD, lat=99.0), GOOD]
    idx, ok, bad = validate(items, NOW, LIMITS)
    assert idx == [0, 3] and len(ok) == 2
    assert [r.index for r in bad] == [1, 2]
