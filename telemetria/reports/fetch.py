"""Fixes out of the database into a Track: one vehicle, one window, with context on both sides."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from telemetria.db import Conn
from telemetria.reports import queries as q
from telemetria.reports.track import IGN_OFF, IGN_ON, IGN_UNKNOWN, FloatArray, Track

# Derivations at a window's edges look at fixes beyond it: distances and cleaning at a few fixes,
# stops and trips crossing the edge at up to this much. The same context is used whether a day is
# rolled up or computed live, so both give the same figures.
CONTEXT = timedelta(hours=2)
CONTEXT_FIXES = 1000


def _floats(rows: Sequence[Mapping[str, Any]], key: str) -> FloatArray:
    return np.array([np.nan if r[key] is None else r[key] for r in rows], dtype=float)


def to_track(records: Sequence[Mapping[str, Any]]) -> Track:
    """Rows of queries.TRACK (any order) → a Track sorted by fix time."""
    rows = sorted(records, key=lambda r: float(r["t"]))
    ign = [IGN_UNKNOWN if r["ignition"] is None else IGN_ON if r["ignition"] else IGN_OFF for r in rows]
    return Track(
        t=_floats(rows, "t"),
        lat=_floats(rows, "lat"),
        lon=_floats(rows, "lon"),
        speed_kmh=_floats(rows, "speed_kmh"),
        heading_deg=_floats(rows, "heading_deg"),
        accuracy_m=_floats(rows, "accuracy_m"),
        ignition=np.array(ign, dtype=np.int8),
        odometer_m=_floats(rows, "odometer_m"),
        valid=np.array([r["valid"] for r in rows], dtype=np.bool_),
        received=_floats(rows, "received"),
    )


async def track(conn: Conn, vehicle_id: int, start: datetime, end: datetime) -> Track:
    """The vehicle's fixes in [start, end) plus context fixes within CONTEXT on each side."""
    rows = await conn.fetch(q.TRACK, vehicle_id, start, end, CONTEXT, CONTEXT_FIXES)
    return to_track(rows)
