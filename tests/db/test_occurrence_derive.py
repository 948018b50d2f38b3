"""Occurrence candidates from real fixes in the real database: a day whole equals the union of its hours, the
same fixes in another arrival order give the same candidates, a live silence keeps its start when data resumes,
and a contract's day gives its runs not made and its unauthorized vehicle once their windows have ended."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise

import asyncpg
import numpy as np
import pytest

from telemetria.contracts.calendar import SchoolYear, school_days
from telemetria.geo.geodesic import GEOD
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement.plans import plan_runs
from telemetria.occurrences.detection.derive import run_candidates, run_windows, window_candidates
from telemetria.occurrences.model import Candidate, Kind
from telemetria.occurrences.params import DEFAULT
from telemetria.registry import fleet
from telemetria.reports.analysis import engine
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.store import asof

LON0, LAT0 = -62.47, -10.43
SCHOOL_M = 6000.0
Row = tuple[datetime, float, float, float]  # ts, lat, lon, speed km/h


def school_day_back(before: date) -> date:
    """The last weekday before `before` that is a school day in a whole-year calendar (no national holiday)."""
    day = before - timedelta(days=1)
    while day not in set(school_days(SchoolYear(day.year, date(day.year, 1, 1), date(day.year, 12, 31)))):
        day -= timedelta(days=1)
    return day


def days() -> tuple[date, date]:
    """Two school days some days back (closed, so every window has ended); the second before the first."""
    first = school_day_back(datetime.now(LOCAL_TZ).date() - timedelta(days=7))
    return first, school_day_back(first)


def at(east_m: float, north_m: float = 3.0) -> tuple[float, float]:
    lon, lat, _ = GEOD.fwd(LON0, LAT0, 90.0, east_m)
    lon, lat, _ = GEOD.fwd(lon, lat, 0.0, north_m)
    return float(lat), float(lon)


def local(day: date, hhmm: str) -> datetime:
    return datetime.combine(day, time.fromisoformat(hhmm), LOCAL_TZ).astimezone(UTC)


class Script:
    """Fixes every 30 s: parked, driving along the road (east metres), or nothing at all."""

    def __init__(self, start: datetime, east: float = 0.0) -> None:
        self.t, self.x = start, east
        self.rows: list[Row] = [(start, *at(east), 0.0)]

    def park(self, seconds: float) -> Script:
        for _ in range(round(seconds / 30)):
            self.t += timedelta(seconds=30)
            self.rows.append((self.t, *at(self.x), 0.0))
        return self

    def drive(self, east: float, kmh: float = 48.0) -> Script:
        n = max(1, int(np.ceil(abs(east - self.x) / (kmh / 3.6 * 30))))
        x0 = self.x
        for k in range(1, n + 1):
            self.t += timedelta(seconds=30)
            self.x = x0 + (east - x0) * k / n
            self.rows.append((self.t, *at(self.x), kmh))
        return self

    def silent(self, seconds: float) -> Script:
        self.t += timedelta(seconds=seconds)
        return self


def morning(day: date) -> tuple[list[Row], datetime]:
    """Leaves 13 min late, speeds, stops 5 min away from every point, falls silent 8 min, reaches the school;
    back to the garage at 08:00. Also returns the last fix before the silence."""
    s = Script(local(day, "06:30")).park(21 * 60).drive(1500.0).park(60).drive(3000.0)
    s.drive(4500.0, kmh=80.0).drive(5000.0).park(300)
    quiet = s.t
    s.silent(8 * 60).drive(SCHOOL_M).park(600)
    s.park((local(day, "08:00") - s.t).total_seconds()).drive(0.0).park(600)
    return s.rows, quiet


async def add_route(conn: asyncpg.Connection, code: str, contract_id: int | None) -> int:
    """Garage → school 6 km east and back on one road: Ponto 1 at 06:40, school at 07:00, Ponto 1 again at 12:00.

    The garage has no scheduled time: Ponto 1's is an arrival, and the runs start there."""
    ends = [at(0.0, 0.0), at(SCHOOL_M, 0.0), at(0.0, 0.0)]
    geometry = {"type": "LineString", "coordinates": [[lon, lat] for lat, lon in ends]}
    rid: int = await conn.fetchval(
        "INSERT INTO routes (code, name, school_year, geometry, length_m, contract_id, declared_km)"
        " VALUES ($1, $2, $3, $4, $5, $6, 12.0) RETURNING id",
        code, f"Linha {code}", 2026, geometry, 2 * SCHOOL_M, contract_id,
    )  # fmt: skip
    stops = [("Garagem", "garage", 0.0, None), ("Ponto 1", "boarding", 1500.0, time(6, 40)),
             ("Escola", "school", SCHOOL_M, time(7, 0)),
             ("Ponto 1 (volta)", "boarding", 1500.0, time(12, 0))]  # fmt: skip
    for seq, (name, kind, x, when) in enumerate(stops, 1):
        lat, lon = at(x, 4.0)
        await conn.execute(
            "INSERT INTO route_stops (route_id, seq, name, lat, lon, kind, scheduled_time)"
            " VALUES ($1, $2, $3, $4, $5, $6, $7)",
            rid, seq, name, lat, lon, kind, when,
        )  # fmt: skip
    return rid


async def add_vehicle(
    conn: asyncpg.Connection, plate: str, contractor_id: int, route_id: int | None, since: date
) -> tuple[int, int]:
    v = await fleet.add_vehicle(conn, plate)
    t = await fleet.add_tracker(conn, f"occ-{plate}", plate)
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", contractor_id, v["id"])
    if route_id is not None:
        await conn.execute(
            "INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, $3)",
            route_id, v["id"], since,
        )  # fmt: skip
    return v["id"], t["id"]


async def store(conn: asyncpg.Connection, vehicle_id: int, tracker_id: int, rows: list[Row]) -> None:
    await conn.executemany(
        "INSERT INTO fixes (vehicle_id, tracker_id, ts, lat, lon, speed_kmh) VALUES ($1, $2, $3, $4, $5, $6)",
        [(vehicle_id, tracker_id, *r) for r in rows],
    )


async def world(conn: asyncpg.Connection, first: date, last: date) -> dict[str, int]:
    """A contractor and its contract over both days, a school year, route L9 in the contract and L10 outside it."""
    cid = await conn.fetchval("INSERT INTO contractors (name, cnpj) VALUES ('Transportes Jaru', '11222333000181')"
                              " RETURNING id")  # fmt: skip
    k = await conn.fetchval(
        "INSERT INTO contracts (contractor_id, number, valid_from, valid_to) VALUES ($1, '18/2026', $2, $3)"
        " RETURNING id",
        cid, first - timedelta(days=60), last + timedelta(days=60),
    )  # fmt: skip
    await conn.execute("INSERT INTO contract_terms (contract_id, valid_from, price_per_km) VALUES ($1, $2, 4.5)", k,
                       first - timedelta(days=60))  # fmt: skip
    for year in sorted({first.year, last.year}):
        await conn.execute(
            "INSERT INTO school_years (year, start_date, end_date) VALUES ($1, $2, $3)",
            year, date(year, 1, 1), date(year, 12, 31),
        )  # fmt: skip
    l9 = await add_route(conn, "L9", k)
    l10 = await add_route(conn, "L10", None)
    return {"contractor": cid, "contract": k, "l9": l9, "l10": l10}


def same(c: Candidate, vehicle_id: int, route_id: int, as_route: int) -> Candidate:
    """The candidate as if of `vehicle_id` on `as_route` (the other vehicle runs a copy of the route)."""
    key = c.key.replace(f"{route_id}:", f"{as_route}:", 1) if c.key else None
    place = c.place.replace("L10", "L9") if c.place else None
    route = as_route if c.route_id == route_id else c.route_id
    return replace(c, vehicle_id=vehicle_id, route_id=route, key=key, place=place)


async def test_a_day_whole_in_hours_and_in_any_arrival_order(conn: asyncpg.Connection, clean: None) -> None:
    day, _ = days()
    w = await world(conn, day, day)
    a, ta = await add_vehicle(conn, "OCC1A11", w["contractor"], w["l9"], day - timedelta(days=30))
    b, tb = await add_vehicle(conn, "OCC2B22", w["contractor"], w["l10"], day - timedelta(days=30))
    rows, quiet = morning(day)
    now = datetime.now(UTC)

    # Live: the fixes up to the silence have arrived; 6 min later the tracker is silent, mid-run.
    upto = [r for r in rows if r[0] <= quiet]
    await store(conn, a, ta, upto)
    d0, d1 = day_bounds(day)
    live = [c for c in await window_candidates(conn, a, d0, d1, now=quiet + timedelta(minutes=6))
            if c.kind is Kind.TRACKER_SILENT]  # fmt: skip
    # Issue 34: silent from half an interval (15 s at its 30 s fixes) after the last fix, bounded by it and the next
    # fix it would have sent.
    start = quiet + timedelta(seconds=15)
    assert len(live) == 1 and live[0].start == start and live[0].end is None and live[0].route_id == w["l9"]
    assert live[0].facts == {"since": quiet.isoformat(), "start_min": quiet.isoformat(),
                             "start_max": (quiet + timedelta(seconds=30)).isoformat()}  # fmt: skip

    # Then the rest arrives, in time order for one vehicle and shuffled, one fix at a time, for the other.
    await store(conn, a, ta, [r for r in rows if r[0] > quiet])
    shuffled = list(rows)
    random.Random(18).shuffle(shuffled)
    for r in shuffled:
        await store(conn, b, tb, [r])

    whole = await window_candidates(conn, a, d0, d1, now=now)
    found = {c.kind for c in whole}
    assert found == {Kind.SCHEDULE_DELAY, Kind.SPEEDING, Kind.UNAUTHORIZED_STOP, Kind.TRACKER_SILENT}, whole
    (silent,) = [c for c in whole if c.kind is Kind.TRACKER_SILENT]
    # The same row, ended: half an interval after the last fix to half an interval before the first after it.
    assert silent.start == start and silent.end == quiet + timedelta(minutes=8, seconds=15)
    (late,) = [c for c in whole if c.kind is Kind.SCHEDULE_DELAY]
    assert late.key == f"{w['l9']}:{day.isoformat()}:1" and late.facts["stop"] == "Ponto 1"
    assert late.facts["late_min"] == pytest.approx(14.0, abs=0.6)  # left Ponto 1, the run's first point, at 06:54
    (stop,) = [c for c in whole if c.kind is Kind.UNAUTHORIZED_STOP]
    # Parked 300 s, then silent: it began between the last moving fix and the first standing one (the midpoint,
    # 15 s before the first), and ends at its last standing fix: nothing bounds it after, no time is invented.
    assert stop.facts["duration_s"] == 285 and stop.place is not None and "rota L9, km 5,0" in stop.place
    (fast,) = [c for c in whole if c.kind is Kind.SPEEDING]
    assert fast.facts["max_kmh"] == 80.0 and fast.facts["limit_kmh"] == 60.0

    # Hour by hour (the local day's 24 pieces), and from a start inside the day: the same candidates.
    hours = [d0 + timedelta(hours=h) for h in range(25)]
    pieces = [c for h0, h1 in pairwise(hours) for c in await window_candidates(conn, a, h0, h1, now=now)]
    assert pieces == whole
    assert await window_candidates(conn, a, quiet, d1, now=now) == [c for c in whole if c.start >= quiet]

    # The other vehicle, its fixes arrived in another order: the same candidates.
    other = await window_candidates(conn, b, d0, d1, now=now)
    assert [same(c, a, w["l10"], w["l9"]) for c in other] == whole

    # Unknown vehicles and empty windows give nothing.
    assert await window_candidates(conn, 999_999, d0, d1, now=now) == []
    assert await window_candidates(conn, a, d1, d0, now=now) == []


async def test_runs_not_made_and_an_unauthorized_vehicle(conn: asyncpg.Connection, clean: None) -> None:
    day, before = days()
    w = await world(conn, before, day)
    a, ta = await add_vehicle(conn, "OCC3C33", w["contractor"], w["l9"], before - timedelta(days=30))
    spare, ts = await add_vehicle(conn, "OCC4D44", w["contractor"], None, before)
    await conn.execute("UPDATE vehicles SET active = false WHERE id = $1", spare)  # not authorized to serve
    rows, _ = morning(day)
    await store(conn, a, ta, rows)
    back = Script(local(day, "11:30"), SCHOOL_M).park(10 * 60).drive(0.0).park(600)
    await store(conn, spare, ts, back.rows)  # the midday run, by the inactive spare
    await conn.execute(
        "INSERT INTO run_justifications (route_id, day, run_no, reason, created_by) VALUES ($1, $2, 2, $3, 'adm')",
        w["l9"], before, "Ônibus quebrado, alunos dispensados",
    )  # fmt: skip
    now = datetime.now(UTC)

    found = await run_candidates(conn, day, now=now)
    (c,) = found
    assert c.kind is Kind.UNAUTHORIZED_VEHICLE and c.vehicle_id == spare and c.run_no == 2
    assert c.key == f"{w['l9']}:{day.isoformat()}:2" and c.facts["reason"] == "inactive"
    assert c.facts["assigned_vehicle_ids"] == [a] and c.facts["status"] in ("made", "partial")
    route = (await asof.routes_on(conn, [w["l9"]], day))[w["l9"]]
    midday = plan_runs(route, engine.line(route), day)[1]
    assert (c.start.timestamp(), c.end and c.end.timestamp()) == (midday.start, midday.end)  # the run's window
    assert local(day, "11:30") <= datetime.fromisoformat(c.facts["first_fix"]) < back.t

    # The day before nothing moved: the morning run was not made; the midday one is justified.
    (nm,) = await run_candidates(conn, before, now=now)
    route = (await asof.routes_on(conn, [w["l9"]], before))[w["l9"]]
    plan = plan_runs(route, engine.line(route), before)[0]
    assert nm.kind is Kind.RUN_NOT_MADE and nm.vehicle_id == a and nm.key == f"{w['l9']}:{before.isoformat()}:1"
    assert (nm.start.timestamp(), nm.end and nm.end.timestamp()) == (plan.start, plan.end)
    assert set(nm.facts) == {"coverage_pct", "made_pct", "declared_km", "contracted_km"}
    assert (nm.facts["coverage_pct"], nm.facts["made_pct"], nm.facts["declared_km"]) == (0.0, 95.0, 12.0)
    # The run's contracted km: the route's declared km × the run's share of the day (docs/contracts.md), to the metre.
    assert 0 < plan.share < 1 and nm.facts["contracted_km"] == pytest.approx(12.0 * float(plan.share), abs=5e-4)

    # The same day seen from the vehicle: not a fix all day while due. The run is judged as a run (run_not_made):
    # no tracker_silent beside it, the same event is not charged twice (issue 32).
    b0, b1 = day_bounds(before)
    assert [c.kind for c in await window_candidates(conn, a, b0, b1, now=now)] == []

    # Judged only once the run's window has ended, plus the grace; run_windows says when that is.
    end = datetime.fromtimestamp(plan.end, UTC)
    windows = await run_windows(conn, before)
    assert sorted(windows) == [(w["l9"], 1), (w["l9"], 2)] and windows[(w["l9"], 1)][1] == end
    assert await run_candidates(conn, before, now=now, routes=[w["l10"]]) == []
    assert await run_candidates(conn, before, now=now, routes=[w["l9"]]) == [nm]
    assert await run_candidates(conn, before, now=end + timedelta(seconds=DEFAULT.run_grace_s - 1)) == []
    assert await run_candidates(conn, before, now=end + timedelta(seconds=DEFAULT.run_grace_s)) == [nm]
    # A day without a school year registered has no boletim to judge by.
    await conn.execute("DELETE FROM school_years")
    assert await run_candidates(conn, before, now=now) == []


async def test_a_vehicle_that_sent_nothing_has_its_due_runs_not_made_even_when_assigned_late(
    pool: asyncpg.Pool, conn: asyncpg.Connection, clean: None
) -> None:
    """Absence is a fact (issue 36): a vehicle that never sent a fix has its due runs of a past school day judged
    not made, in the boletim (N) and as run_not_made occurrences, also when its assignment was entered after the
    day (no fix changes then: the registry's change hands the past days to the detector)."""
    from telemetria.measurement import store as mstore
    from telemetria.occurrences.detection import detector

    await conn.execute(
        "TRUNCATE detector_rescans, detector_run_days; UPDATE detector_state SET rescanned_through = NULL"
    )
    day, before = days()
    w = await world(conn, before, day)
    # Another vehicle of the fleet reported weeks ago (the service was receiving fixes then), nothing since.
    other, to = await add_vehicle(conn, "OCC5E55", w["contractor"], w["l10"], before - timedelta(days=30))
    await store(conn, other, to, Script(local(before - timedelta(days=3), "06:30")).park(600).rows)
    now = datetime.now(UTC)
    await detector.run_round(pool, now=now)
    assert await conn.fetchval("SELECT count(*) FROM occurrences WHERE kind = 'run_not_made'") == 0

    # The vehicle of L9 is registered and assigned now, from a month back; it never sent a fix.
    silent, _ = await add_vehicle(conn, "OCC6F66", w["contractor"], w["l9"], before - timedelta(days=30))
    head = next(h for h in await mstore.contracts(conn, None, None) if h.id == w["contract"])
    computed = await mstore.compute(conn, head, before, before, route_ids=[w["l9"]], where="day")
    assert [(ln.run_no, ln.status, ln.vehicle_id) for ln in computed.lines] == [
        (1, "not_made", silent), (2, "not_made", silent)]  # fmt: skip
    await detector.run_round(pool, now=now)
    found = await conn.fetch(
        "SELECT vehicle_id, route_id, run_no, day FROM occurrences WHERE kind = 'run_not_made' AND day = $1"
        " ORDER BY run_no", before,
    )  # fmt: skip
    assert [(r["vehicle_id"], r["route_id"], r["run_no"]) for r in found] == [
        (silent, w["l9"], 1),
        (silent, w["l9"], 2),
    ]
