"""Observations of planned runs on the real database: the rollup's answer equals the live one, fixes in any
arrival order give the same answer, and a vehicle not assigned the route is observed from its fixes."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta

import asyncpg
import numpy as np
import pytest

from telemetria.geo.geodesic import GEOD
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement.model import Observation, RunPlan
from telemetria.measurement.observe import observations
from telemetria.measurement.plans import plan_runs
from telemetria.registry import fleet
from telemetria.reports.analysis import engine
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import NotFound
from telemetria.reports.store import asof, rollup

LON0, LAT0 = -62.47, -10.43
SCHOOL_M = 6000.0  # the school, 6 km east of the garage; the line goes there and back on one road
Row = tuple[datetime, float, float, float, float]  # ts, lat, lon, speed km/h, heading


def the_day() -> date:
    """A closed weekday (assignments default to Monday–Friday) some days back."""
    day = datetime.now(LOCAL_TZ).date() - timedelta(days=8)
    while day.isoweekday() > 5:
        day -= timedelta(days=1)
    return day


def at(along_m: list[float], north_m: float = 0.0) -> tuple[list[float], list[float]]:
    d = np.asarray(along_m, dtype=float)
    lon, lat, _ = GEOD.fwd(np.full(d.shape, LON0), np.full(d.shape, LAT0), np.full(d.shape, 90.0), d)
    lon, lat, _ = GEOD.fwd(lon, lat, np.zeros(d.shape), np.full(d.shape, north_m))
    return [float(x) for x in lon], [float(y) for y in lat]


def drive(a: float, b: float, start: datetime, north_m: float = 3.0) -> list[Row]:
    """Fixes every 30 s at 48 km/h from a to b metres east of the garage."""
    n = round(abs(b - a) / 400.0)
    xs = [a + (b - a) * k / n for k in range(n + 1)]
    lon, lat = at(xs, north_m)
    heading = 90.0 if b > a else 270.0
    return [(start + timedelta(seconds=30 * k), lat[k], lon[k], 48.0, heading) for k in range(n + 1)]


def local(day: date, hhmm: str) -> datetime:
    return datetime.combine(day, time.fromisoformat(hhmm), LOCAL_TZ).astimezone(UTC)


async def add_route(conn: asyncpg.Connection) -> int:
    lon, lat = at([0.0, SCHOOL_M, 0.0])
    geometry = {"type": "LineString", "coordinates": [[x, y] for x, y in zip(lon, lat, strict=True)]}
    rid: int = await conn.fetchval(
        "INSERT INTO routes (code, name, school_year, geometry, length_m) VALUES ('L9', 'Linha 9', 2026, $1, $2)"
        " RETURNING id",
        geometry, 2 * SCHOOL_M,
    )  # fmt: skip
    slon, slat = at([1500.0, SCHOOL_M, 1500.0], 4.0)
    stops = [("Ponto 1", "boarding", time(6, 40)), ("Escola", "school", time(7, 0)),
             ("Ponto 1 (volta)", "boarding", time(12, 0))]  # fmt: skip
    for seq, ((name, kind, at_), x, y) in enumerate(zip(stops, slon, slat, strict=True), 1):
        await conn.execute(
            "INSERT INTO route_stops (route_id, seq, name, lat, lon, kind, scheduled_time)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7)",
            rid, seq, name, y, x, kind, at_,
        )  # fmt: skip
    return rid


async def add_vehicle(conn: asyncpg.Connection, plate: str, route_id: int | None, day: date) -> tuple[int, int]:
    v = await fleet.add_vehicle(conn, plate)
    t = await fleet.add_tracker(conn, f"obs-{plate}", plate)
    if route_id is not None:
        await conn.execute(
            "INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, $3)",
            route_id, v["id"], day - timedelta(days=30),
        )  # fmt: skip
    return v["id"], t["id"]


async def store(conn: asyncpg.Connection, vehicle_id: int, tracker_id: int, rows: list[Row]) -> None:
    """Store fixes as a batch arriving now, marking the closed days they can change (as the ingest does)."""
    await conn.executemany(
        "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon, speed_kmh, heading_deg)"
        " VALUES ($1, $2, $3, $4, $5, $6, $7)",
        [(vehicle_id, tracker_id, *r) for r in rows],
    )
    await conn.execute(
        "SELECT mark_rollups_stale($1::int[], $2::timestamptz[], $3, $4::interval)",
        [vehicle_id] * len(rows), [r[0] for r in rows], LOCAL_TZ.key, timedelta(seconds=DEFAULT.max_link_s),
    )  # fmt: skip


async def plans_of(conn: asyncpg.Connection, route_id: int, day: date) -> list[RunPlan]:
    route = (await asof.routes_on(conn, [route_id], day))[route_id]
    return plan_runs(route, engine.line(route), day)


async def close_and_refresh(conn: asyncpg.Connection, pool: asyncpg.Pool) -> None:
    assert await rollup.close_days(conn, datetime.now(UTC)) is not None
    await rollup.refresh(pool, limit=10_000)


async def stored_runs(conn: asyncpg.Connection, vehicle_id: int, day: date) -> list[dict[str, object]] | None:
    rows: list[dict[str, object]] | None = await conn.fetchval(
        "SELECT events -> 'runs' FROM report_rollups WHERE vehicle_id = $1 AND day = $2", vehicle_id, day
    )
    return rows


def full_day(day: date) -> list[Row]:
    return drive(0.0, SCHOOL_M, local(day, "06:30")) + drive(SCHOOL_M, 0.0, local(day, "11:45"))


def without_vehicle(obs: list[Observation]) -> list[Observation]:
    return [replace(o, vehicle_id=0) for o in obs]


async def test_the_rollup_answers_as_the_fixes_do(conn: asyncpg.Connection, pool: asyncpg.Pool, clean: None) -> None:
    day = the_day()
    rid = await add_route(conn)
    vid, tid = await add_vehicle(conn, "OBS1A11", rid, day)
    idle, _ = await add_vehicle(conn, "OBS1B22", rid, day)  # assigned, never moved
    await store(conn, vid, tid, full_day(day))
    plans = await plans_of(conn, rid, day)
    assert [p.run_no for p in plans] == [1, 2]

    live = await observations(conn, plans, [vid, idle])  # no rollup yet: from the fixes
    morning, _, midday, _ = live
    assert [o.vehicle_id for o in live] == [vid, idle, vid, idle]
    assert morning.coverage == pytest.approx(1.0, abs=0.002) and midday.coverage == pytest.approx(1.0, abs=0.002)
    assert morning.route_km == pytest.approx(6.0, abs=0.01) and morning.off_route_km == pytest.approx(0.0, abs=1e-6)
    assert (live[1].coverage, live[1].first, live[3].coverage) == (0.0, None, 0.0)

    await close_and_refresh(conn, pool)
    kept = await stored_runs(conn, vid, day)
    assert kept is not None and [(r["route_id"], r["run_no"]) for r in kept] == [(rid, 1), (rid, 2)]
    assert await observations(conn, plans, [vid, idle]) == live  # from the rollup, the same

    # It really is the rollup that answers: a changed stored figure shows, until a mark makes the day stale.
    await conn.execute(
        "UPDATE report_rollups SET events = jsonb_set(events, '{runs,0,coverage}', '0.123') WHERE vehicle_id = $1",
        vid,
    )
    assert (await observations(conn, plans, [vid]))[0].coverage == 0.123
    await conn.execute("INSERT INTO rollup_stale (vehicle_id, day) VALUES ($1, $2)", vid, day)
    assert await observations(conn, plans, [vid, idle]) == live


async def test_fixes_arriving_in_any_order_give_the_same_runs(
    conn: asyncpg.Connection, pool: asyncpg.Pool, clean: None
) -> None:
    day = the_day()
    rid = await add_route(conn)
    a, ta = await add_vehicle(conn, "OBS2A11", rid, day)
    b, tb = await add_vehicle(conn, "OBS2B22", rid, day)
    rows = drive(0.0, SCHOOL_M, local(day, "06:30")) + drive(SCHOOL_M, 2500.0, local(day, "11:45"))  # midday: part
    await store(conn, a, ta, rows)
    # B's fixes: shuffled, the morning in a late batch after its day was closed and rolled up without it.
    late, early = rows[: len(rows) // 2], rows[len(rows) // 2 :]  # the morning arrives late
    random.Random(7).shuffle(early)
    random.Random(8).shuffle(late)
    await store(conn, b, tb, early)
    await close_and_refresh(conn, pool)
    plans = await plans_of(conn, rid, day)
    partial = await observations(conn, plans, [b])
    await store(conn, b, tb, late)  # the late batch marks the day: answered from the fixes until refreshed

    live = await observations(conn, plans, [a, b])
    assert without_vehicle(live[0::2]) == without_vehicle(live[1::2])
    assert live[2].coverage == pytest.approx(3500.0 / SCHOOL_M, abs=0.005)  # back from the school to 2.5 km
    assert partial[0].coverage < 0.6  # the rollup before the late batch did not have the morning
    await rollup.refresh(pool, limit=10_000)
    assert await observations(conn, plans, [a, b]) == live


async def test_a_vehicle_not_assigned_the_route_is_observed_from_its_fixes(
    conn: asyncpg.Connection, pool: asyncpg.Pool, clean: None
) -> None:
    day = the_day()
    rid = await add_route(conn)
    other = await add_route_elsewhere(conn)
    sub, tid = await add_vehicle(conn, "OBS3A11", other, day)  # assigned another route, drove this one's morning
    await store(conn, sub, tid, drive(0.0, SCHOOL_M, local(day, "06:30")))
    await close_and_refresh(conn, pool)
    assert await stored_runs(conn, sub, day) is not None  # its day is rolled up, with its own route's runs only
    assert {r["route_id"] for r in await stored_runs(conn, sub, day) or []} == {other}

    plans = await plans_of(conn, rid, day)
    morning, midday = await observations(conn, plans, [sub])
    assert morning.coverage == pytest.approx(1.0, abs=0.002) and midday.coverage == 0.0
    assert morning.route_km == pytest.approx(6.0, abs=0.01)
    assert morning.first == local(day, "06:30").timestamp()
    # The same vehicle's own route, from its rollup: all of it off that route.
    (own,) = await observations(conn, await plans_of(conn, other, day), [sub])
    assert own.coverage == 0.0 and own.off_route_km == pytest.approx(6.0, abs=0.01)

    with pytest.raises(NotFound):
        await observations(conn, plans, [sub + 1000])


async def add_route_elsewhere(conn: asyncpg.Connection) -> int:
    lon, lat = at([0.0, 5000.0], 2000.0)  # a road 2 km north
    geometry = {"type": "LineString", "coordinates": [[x, y] for x, y in zip(lon, lat, strict=True)]}
    rid: int = await conn.fetchval(
        "INSERT INTO routes (code, name, school_year, geometry, length_m) VALUES ('L10', 'Linha 10', 2026, $1, 5000)"
        " RETURNING id",
        geometry,
    )
    return rid
