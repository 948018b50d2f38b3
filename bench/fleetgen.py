"""Synthetic school-bus days near Jaru, vectorized: two 5 h runs a day at 30 s, ~40 km/h with stops."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

import asyncpg
import numpy as np

from bench.benchdb import Vehicle
from telemetria.ingest.queries import FIX_COLUMNS
from telemetria.localtime import LOCAL_TZ

JARU_LAT, JARU_LON = -10.43, -62.47
INTERVAL_S = 30
RUN_FIXES = 600  # 5 h at 30 s
RUN_STARTS = (time(5, 30), time(12, 30))  # local: the morning and the afternoon run
LOOP_S = 3600.0  # the heading turns once an hour: loops of ~40 km near the vehicle's own starting point
STOP_EVERY, STOP_FIXES = 40, 4  # a 2-min stop (4 × 30 s standing) every 20 min
M_PER_DEG = 111_320.0
COLUMNS = tuple(FIX_COLUMNS)


@dataclass(frozen=True, slots=True)
class Days:
    first: date
    n: int

    @property
    def last(self) -> date:
        return self.first + timedelta(days=self.n - 1)


def fixes_per_day() -> int:
    return len(RUN_STARTS) * RUN_FIXES


def _run_epochs(days: Days) -> np.ndarray:
    """(days, runs) epoch seconds of each run's first fix."""
    return np.array(
        [
            [datetime.combine(days.first + timedelta(days=d), s, LOCAL_TZ).timestamp() for s in RUN_STARTS]
            for d in range(days.n)
        ]
    )


def vehicle_columns(index: int, days: Days, seed: int = 7) -> dict[str, np.ndarray]:
    """One vehicle's fixes over `days` as flat arrays in time order (t in epoch s, lat/lon in degrees)."""
    rng = np.random.default_rng(seed * 100_003 + index)
    shape = (days.n, len(RUN_STARTS), RUN_FIXES)
    k = np.arange(RUN_FIXES)
    # Standing at the garage for the first and last 2 min of a run, and at stops (phase varies by run).
    phase = rng.integers(0, STOP_EVERY, size=(*shape[:2], 1))
    standing = ((k + phase) % STOP_EVERY < STOP_FIXES) | (k < 4) | (k >= RUN_FIXES - 4)
    speed = 40 + 8 * np.sin(2 * np.pi * k / 97) + rng.normal(0, 3, shape)
    speed = np.where(standing, 0.0, np.clip(speed, 8, 75))
    # Position follows the speed: each 30 s step covers the distance the previous fix's speed implies.
    step_m = np.concatenate([np.zeros((*shape[:2], 1)), speed[..., :-1] / 3.6 * INTERVAL_S], axis=-1)
    base_heading = rng.uniform(0, 2 * np.pi)
    heading = base_heading + 2 * np.pi * (k * INTERVAL_S) / LOOP_S
    heading = np.broadcast_to(heading, shape)
    # Each day leaves from home; the afternoon run starts where the morning one ended (parked between).
    day = (days.n, len(RUN_STARTS) * RUN_FIXES)
    north = np.cumsum((step_m * np.cos(heading)).reshape(day), axis=-1).reshape(shape)
    east = np.cumsum((step_m * np.sin(heading)).reshape(day), axis=-1).reshape(shape)
    centre_lat = JARU_LAT + rng.uniform(-0.05, 0.05)
    centre_lon = JARU_LON + rng.uniform(-0.05, 0.05)
    jitter = rng.normal(0, 3.0, (2, *shape))  # metres of GPS noise
    lat = centre_lat + (north + jitter[0]) / M_PER_DEG
    lon = centre_lon + (east + jitter[1]) / (M_PER_DEG * math.cos(math.radians(centre_lat)))
    t = _run_epochs(days)[..., None] + k * INTERVAL_S
    odometer = 50_000_000.0 + index * 1000 + np.cumsum(step_m.ravel())
    return {
        "t": t.ravel(),
        "lat": lat.ravel(),
        "lon": lon.ravel(),
        "speed_kmh": np.round(speed, 1).ravel(),
        "heading_deg": np.degrees(heading % (2 * np.pi)).ravel(),
        "odometer_m": odometer,
    }


def records(v: Vehicle, cols: dict[str, np.ndarray]) -> list[tuple[Any, ...]]:
    """Rows in FIX_COLUMNS order for binary COPY (altitude 152 m, hdop 0.9, 9 satellites, ignition on)."""
    ts = [datetime.fromtimestamp(x, UTC) for x in cols["t"].tolist()]
    lat, lon = cols["lat"].tolist(), cols["lon"].tolist()
    speed, heading, odo = cols["speed_kmh"].tolist(), cols["heading_deg"].tolist(), cols["odometer_m"].tolist()
    vid, tid = v.vehicle_id, v.tracker_id
    return [
        (vid, tid, ts[i], lat[i], lon[i], speed[i], heading[i], 152.0, 5.0, 0.9, 9, True, odo[i], None, True, None)
        for i in range(len(ts))
    ]


async def load(conn: asyncpg.Connection, fleet: list[Vehicle], days: Days) -> int:
    """COPY every vehicle's days into fixes, one statement per vehicle; rows stored."""
    n = 0
    for i, v in enumerate(fleet):
        rows = records(v, vehicle_columns(i, days))
        await conn.copy_records_to_table("fixes", records=rows, columns=COLUMNS)
        n += len(rows)
    return n
