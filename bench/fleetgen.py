"""Synthetic school-bus days near Jaru, vectorized: two 5 h runs a day at 30 s, ~40 km/h with stops, on a route.

Every vehicle has its own route, a closed loop of ~180 km from its garage and back (a vertex every ~100 m),
registered with a handful of its stops and assigned on every day; both runs of a day drive the loop once,
standing at the same stops every time, with a few metres of GPS noise around the line.
"""

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
from telemetria.registry import queries as rq
from telemetria.registry import routes, schemas
from telemetria.registry.geocheck import RouteGeometry, StopIn, finish

JARU_LAT, JARU_LON = -10.43, -62.47
INTERVAL_S = 30
RUN_FIXES = 600  # 5 h at 30 s
RUN_STARTS = (time(5, 30), time(12, 30))  # local: the morning and the afternoon run
STOP_EVERY, STOP_FIXES = 40, 4  # a 2-min stop (4 × 30 s standing) every 20 min, and at the garage at both ends
CRUISE_KMH = 40.0
VERTEX_M = 100.0  # spacing of the route line's vertices (~1,800 on a loop of ~180 km)
# Registered stops, by standing window (0: the garage; the last window is the garage again, at the line's end).
SCHOOL, BOARDING = 7, (2, 4, 10, 12)
GPS_NOISE_M, HEADING_NOISE_DEG = 3.0, 3.0
M_PER_DEG = 111_320.0
COLUMNS = tuple(FIX_COLUMNS)
REFRESH_LATEST = "SELECT refresh_latest_fixes(NULL)"  # migrations/0009_latest_fix.sql


@dataclass(frozen=True, slots=True)
class Days:
    first: date
    n: int

    @property
    def last(self) -> date:
        return self.first + timedelta(days=self.n - 1)


def fixes_per_day() -> int:
    return len(RUN_STARTS) * RUN_FIXES


def _standing() -> np.ndarray:
    k = np.arange(RUN_FIXES)
    return (k % STOP_EVERY < STOP_FIXES) | (k >= RUN_FIXES - STOP_FIXES)


def _windows() -> np.ndarray:
    """Index of the first fix of each standing window of a run (the first and the last are the garage)."""
    s = _standing()
    return np.flatnonzero(np.concatenate([[True], s[1:] & ~s[:-1]]))


@dataclass(frozen=True, slots=True, eq=False)
class Path:
    """A vehicle's route: a closed loop in metres north/east of its garage, and where each standing window is."""

    lat0: float  # the garage, degrees
    lon0: float
    north: np.ndarray  # vertices, metres
    east: np.ndarray
    cum_m: np.ndarray  # planar metres from the garage at each vertex
    stop_m: np.ndarray  # measure of each standing window: 0 (garage) ... length (garage)

    def degrees(self, north: np.ndarray, east: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(lat, lon) of points in metres north/east of the garage."""
        lat = self.lat0 + north / M_PER_DEG
        return lat, self.lon0 + east / (M_PER_DEG * math.cos(math.radians(self.lat0)))

    def at(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(north, east, bearing in degrees from north) of measures along the line, metres."""
        seg = np.clip(np.searchsorted(self.cum_m, s, side="right") - 1, 0, len(self.cum_m) - 2)
        bearing = np.degrees(np.arctan2(np.diff(self.east)[seg], np.diff(self.north)[seg])) % 360
        return np.interp(s, self.cum_m, self.north), np.interp(s, self.cum_m, self.east), bearing


def vehicle_path(index: int, seed: int = 7) -> Path:
    """The route vehicle `index` drives: legs of ~12 km between stops, traced as a wobbly loop."""
    rng = np.random.default_rng([seed, index])
    ws = _windows()
    moving = np.diff(ws) - STOP_FIXES  # steps that move in each leg
    leg_m = moving * CRUISE_KMH / 3.6 * INTERVAL_S * rng.uniform(0.9, 1.1, len(moving))
    stop_m = np.concatenate([[0.0], np.cumsum(leg_m)])
    length = float(stop_m[-1])
    theta = np.linspace(0, 2 * np.pi, math.ceil(length / VERTEX_M) + 1)
    ph = rng.uniform(0, 2 * np.pi, 3)
    r = 1 + 0.2 * np.sin(2 * theta + ph[0]) + 0.08 * np.sin(5 * theta + ph[1]) + 0.01 * np.sin(60 * theta + ph[2])
    turn = rng.uniform(0, 2 * np.pi)
    north, east = r * np.sin(theta + turn), r * np.cos(theta + turn)
    north, east = north - north[0], east - east[0]  # the garage is where the loop starts and ends
    cum = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(north), np.diff(east)))])
    scale = length / cum[-1]
    lat0, lon0 = JARU_LAT + rng.uniform(-0.05, 0.05), JARU_LON + rng.uniform(-0.05, 0.05)
    return Path(lat0, lon0, north * scale, east * scale, cum * scale, stop_m)


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
    path = vehicle_path(index, seed)
    rng = np.random.default_rng(seed * 100_003 + index)
    shape = (days.n, len(RUN_STARTS), RUN_FIXES)
    k = np.arange(RUN_FIXES)
    standing = _standing()
    speed = 40 + 8 * np.sin(2 * np.pi * k / 97) + rng.normal(0, 3, shape)
    speed = np.where(standing, 0.0, np.clip(speed, 8, 75))
    # Each 30 s step covers the distance the previous fix's speed implies, then every leg is stretched to
    # end exactly at its stop: the same places every run, the speeds scaled by the same factor (±10 %).
    step_m = np.concatenate([np.zeros((*shape[:2], 1)), speed[..., :-1] / 3.6 * INTERVAL_S], axis=-1)
    d = np.cumsum(step_m, axis=-1)
    ws = _windows()
    leg = np.clip(np.searchsorted(ws, k, side="left") - 1, 0, len(ws) - 2)
    d_ws = d[..., ws]
    scale = np.diff(path.stop_m) / np.diff(d_ws, axis=-1)
    s = path.stop_m[leg] + (d - d_ws[..., leg]) * scale[..., leg]
    step_m = np.diff(s, axis=-1, prepend=s[..., :1])
    speed = np.concatenate([step_m[..., 1:], np.zeros((*shape[:2], 1))], axis=-1) * 3.6 / INTERVAL_S
    north, east, bearing = path.at(s)
    jitter = rng.normal(0, GPS_NOISE_M, (2, *shape))
    lat, lon = path.degrees(north + jitter[0], east + jitter[1])
    heading = (bearing + rng.normal(0, HEADING_NOISE_DEG, shape)) % 360
    t = _run_epochs(days)[..., None] + k * INTERVAL_S
    odometer = 50_000_000.0 + index * 1000 + np.cumsum(step_m.ravel())
    return {
        "t": t.ravel(),
        "lat": lat.ravel(),
        "lon": lon.ravel(),
        "speed_kmh": np.round(speed, 1).ravel(),
        "heading_deg": heading.ravel(),
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
    """COPY every vehicle's days into fixes, one statement per vehicle; rows stored.

    COPY goes around the ingest writer, which keeps each vehicle's newest fix (latest_fixes) in the
    service: it is derived afterwards, as the migration that created the table does.
    """
    n = 0
    for i, v in enumerate(fleet):
        rows = records(v, vehicle_columns(i, days))
        await conn.copy_records_to_table("fixes", records=rows, columns=COLUMNS)
        n += len(rows)
    await conn.execute(REFRESH_LATEST)
    return n


def route_stops(path: Path) -> list[StopIn]:
    """The garage, the school and four boarding points, at the morning run's times (other stops are not points)."""
    ws = _windows()

    def stop(name: str, j: int, kind: str) -> StopIn:
        lat, lon = path.degrees(*path.at(path.stop_m[j : j + 1])[:2])
        at = datetime.combine(date.min, RUN_STARTS[0]) + timedelta(seconds=int(ws[j]) * INTERVAL_S)
        return StopIn(name, float(lat[0]), float(lon[0]), kind, at.time())

    kinds = {0: ("Garagem", "garage"), SCHOOL: ("Escola", "school")}
    kinds |= {j: (f"Ponto {j}", "boarding") for j in BOARDING}
    return [stop(name, j, kind) for j, (name, kind) in sorted(kinds.items())]


async def register_routes(conn: asyncpg.Connection, fleet: list[Vehicle], days: Days) -> list[int]:
    """Per vehicle, its path as a route with stops, assigned on every weekday from the first day on; vertices."""
    vertices = []
    for i, v in enumerate(fleet):
        path = vehicle_path(i)
        lat, lon = path.degrees(path.north, path.east)
        coords, length_m = finish(list(zip(lon.tolist(), lat.tolist(), strict=True)))  # an uploaded line's checks
        fields = schemas.RouteFields(code=f"BENCH-{i:03d}", name=f"Linha bench {i}", school_year=days.first.year)
        rid = await routes.create_route(conn, fields.model_dump(), RouteGeometry(coords, length_m, route_stops(path)))
        await conn.fetchval(rq.INSERT_ROUTE_ASSIGNMENT, rid, v.vehicle_id, days.first, None, [1, 2, 3, 4, 5, 6, 7])
        vertices.append(len(coords))
    return vertices
