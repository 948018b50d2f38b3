"""Plausibility checks: each reason, and that request positions survive."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from telemetria.fix import Fix, Rejected
from telemetria.ingest.validate import CHECKS, REAL_MAX, Limits, passes_all, validate

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


# Values on and beyond every boundary of every check, NaN and infinities included.
_EDGES = [0.0, -0.0, 90.0, -90.0, 180.0, -180.0, 300.0, -1000.0, 20000.0, REAL_MAX, 3.5e38, -1e-9, 1e-9]
_floats = st.sampled_from(_EDGES) | st.floats(allow_nan=True, allow_infinity=True)


def _field(draw: st.DrawFn, usual: Any, odd: st.SearchStrategy[Any]) -> Any:
    """Mostly a plainly valid value, so that one odd field at a time decides the outcome."""
    return usual if draw(st.integers(0, 9)) < 8 else draw(st.none() | odd)


@st.composite
def fixes(draw: st.DrawFn) -> Fix:
    seconds = _field(draw, -60, st.sampled_from([-(731 * 86400), 300, 301]) | st.integers(-(732 * 86400), 400))
    return Fix(
        ts=NOW + timedelta(seconds=seconds or 0, microseconds=draw(st.sampled_from([0, 1, -1]))),
        lat=_field(draw, -10.43, _floats) or 0.0,
        lon=_field(draw, -62.47, _floats) or 0.0,
        speed_kmh=_field(draw, 40.0, _floats),
        heading_deg=_field(draw, 90.0, _floats),
        altitude_m=_field(draw, 152.0, _floats),
        accuracy_m=_field(draw, 5.0, _floats),
        hdop=_field(draw, 0.9, _floats),
        satellites=_field(draw, 9, st.sampled_from([-1, 0, 255, 256]) | st.integers(-5, 300)),
        odometer_m=_field(draw, 1000.0, _floats),
        # The free fields too: a driver id over its limit, attributes over their bound or not storable exactly.
        driver_id=_field(draw, None, st.sampled_from(["D-1", "x" * 64, "x" * 65])),
        attributes=_field(
            draw, None, st.sampled_from([{"ign": True}, {"n": 2**53 + 1}, {"big": "x" * 5000}, {"f": float("nan")}])
        ),
    )


@settings(max_examples=1500, deadline=None)
@given(fixes())
def test_the_one_expression_form_passes_exactly_what_every_check_passes(fix: Fix) -> None:
    by_checks = all(check(fix, NOW, LIMITS) is None for check in CHECKS)
    fast = passes_all(
        fix, NOW - LIMITS.retention, NOW + LIMITS.max_future, LIMITS.max_speed_kmh, LIMITS.max_attributes_bytes
    )
    assert fast == by_checks
    # And validate() gives the same answer as it does with the checks alone.
    assert validate([fix], NOW, LIMITS) == validate([fix], NOW, LIMITS, checks=list(CHECKS))
