"""A registry that remembers (issue 17): routes, stops, limits, zones and assignments are effective-dated.

Two simulated runs of the same route, on day D and on D + 1, give reports whose figures depend on the
registry; editing it must change only the days the edit is dated for, and leave past days' reports and
rollups exactly as they were.
"""

from __future__ import annotations

import os
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.db import init_connection, migrate
from telemetria.localtime import LOCAL_TZ
from telemetria.registry import versions
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.model import Selection, Window
from telemetria.reports.store import asof, context, rollup
from telemetria.sim import TrackerParams, simulate_vehicle
from telemetria.sim.wire import body
from tests.conftest import ScratchDb, _with_dbname
from tests.db.conftest import People, make_people
from tests.db.test_reports_accuracy import MOTION, START, _register, _run
from tests.db.test_token_expiry import migrations_before
from tests.db.world import ZONE

D = START.date()  # 2026-11-23, a Monday
D1 = D + timedelta(days=1)
REGISTERED = date(2026, 1, 2)  # the day the world below was registered (its versions' first day)
FAR = {"type": "LineString", "coordinates": [[-60.0, -12.0], [-60.0, -12.1]]}
KINDS = ("km", "summary", "schedule", "stops", "speeding", "trips", "route-deviation", "track")


@pytest.fixture
async def people(conn: asyncpg.Connection, clean: None) -> People:
    return await make_people(conn)


@pytest.fixture
async def world(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> dict[str, Any]:
    """A vehicle registered (with its route, stops and assignment) on REGISTERED, and its runs of D and D + 1."""
    quiet = TrackerParams(loss_per_hour=0.0)
    run = _run(2, tracker=quiet)
    async with versions.dated(conn, "cadastro", REGISTERED):
        t = await _register(conn, people, run, "AAA1A11", "sim-versions")
    next_day = _run_on(2, D1, quiet)
    assert next_day.truth.route.line.lon.tolist() == run.truth.route.line.lon.tolist()  # the same route
    for r in (run, next_day):
        fixes = [f for u in r.uploads for f in u.fixes]
        for i in range(0, len(fixes), 200):
            resp = await client.post("/api/v1/fixes", content=body(fixes[i : i + 200]), headers=t.auth)
            assert resp.status_code == 200, resp.text
    rid = await conn.fetchval("SELECT id FROM routes")
    aid = await conn.fetchval("SELECT id FROM route_assignments")
    return {"tracker": t, "vehicle_id": t.vehicle_id, "route_id": rid, "assignment_id": aid}


def _run_on(seed: int, day: date, tracker: TrackerParams) -> Any:
    return simulate_vehicle(seed, START + (day - D), 30, motion=MOTION, tracker=tracker)


async def _report(client: httpx.AsyncClient, people: People, kind: str, vid: int, day: date) -> dict[str, Any]:
    params = {"vehicle_id": str(vid), "from": day.isoformat(), "to": day.isoformat()}
    r = await client.get(f"/api/v1/reports/{kind}", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    return dict(orjson.loads(r.content))


async def _reports(client: httpx.AsyncClient, people: People, vid: int, day: date) -> dict[str, Any]:
    """Every report of the day, without the line saying how it was computed (rollups or live)."""
    out = {}
    for kind in KINDS:
        rep = await _report(client, people, kind, vid, day)
        rep.pop("vehicle_days", None)
        out[kind] = rep
    return out


async def _rollup_of(conn: asyncpg.Connection, vid: int, day: date) -> Any:
    return await conn.fetchrow(
        "SELECT basis, computed_at FROM report_rollups WHERE vehicle_id = $1 AND day = $2", vid, day
    )


async def test_a_later_edit_leaves_past_days_and_their_rollups_as_they_were(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People, world: dict[str, Any]
) -> None:
    vid, rid = world["vehicle_id"], world["route_id"]
    await rollup.refresh_all(pool)
    before = await _reports(client, people, vid, D)
    assert before["km"]["vehicles"][0]["route_km"] > 10
    rolled = await _rollup_of(conn, vid, D)
    admin = people.auth("admin")

    # Edited today (no effective_from): the line moved, the stops' times, the limit.
    async with versions.dated(conn, "importador", None):  # the CLI's route import writes the tables directly
        await conn.execute("UPDATE routes SET geometry = $2 WHERE id = $1", rid, FAR)
    stops = (await client.get(f"/api/v1/routes/{rid}", headers=admin)).json()["stops"]
    timed = [{k: s[k] for k in ("name", "lat", "lon", "kind")} | {"scheduled_time": "06:30"} for s in stops]
    r = await client.put(f"/api/v1/routes/{rid}/stops", json={"stops": timed}, headers=admin)
    assert r.status_code == 200, r.text
    r = await client.patch(f"/api/v1/routes/{rid}", json={"speed_limit_kmh": 40, "declared_km": 12.345}, headers=admin)
    assert r.status_code == 200 and r.json()["declared_km"] == 12.345, r.text
    assert b'"declared_km":12.345' in r.content

    assert await _reports(client, people, vid, D) == before  # exactly the same JSON
    await rollup.refresh(pool)
    assert await _rollup_of(conn, vid, D) == rolled  # still current: neither marked nor recomputed
    assert (await _report(client, people, "km", vid, D))["vehicle_days"] == {"from_rollups": 1, "computed_live": 0}

    today = versions.local_today()
    old, new = await asof.routes_on(conn, [rid], D), await asof.routes_on(conn, [rid], today)
    assert old[rid].lon != new[rid].lon and new[rid].lon == [-60.0, -60.0]
    assert (old[rid].limit_kmh, new[rid].limit_kmh) == (60, 40)
    assert {p.scheduled for p in new[rid].points} == {"06:30:00"} and old[rid].points != new[rid].points
    assert (old[rid].declared_km, str(new[rid].declared_km)) == (None, "12.345")
    assert new[rid].version > old[rid].version and new[rid].contract_id is None and new[rid].length_m > 0

    h = (await client.get(f"/api/v1/routes/{rid}/history", headers=people.auth("auditor"))).json()
    in_force = [v for v in h["versions"] if v["in_force"]]
    assert [(v["valid_from"], v["created_by"]) for v in in_force] == [(REGISTERED.isoformat(), "cadastro"),
                                                                       (today.isoformat(), "admin")]  # fmt: skip
    assert in_force[0]["valid_to"] == (today - timedelta(days=1)).isoformat() and in_force[1]["valid_to"] is None
    # Three edits the same day: each superseded the one before (the history keeps them all).
    superseded = [v for v in h["versions"] if not v["in_force"]]
    assert [v["created_by"] for v in superseded] == ["importador", "admin"]
    assert all(v["superseded_at"] and v["valid_to"] is None for v in superseded)
    # Each says what it changed from the version it was made from (as the contract's prices do).
    assert [v["changed"] for v in (*superseded, in_force[1])] == [
        ["geometry"],
        ["stops"],
        ["declared_km", "speed_limit_kmh"],
    ]
    assert in_force[1]["data"]["declared_km"] == 12.345 and in_force[1]["data"]["geometry"] == FAR


async def test_a_back_dated_correction_changes_its_days_only(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People, world: dict[str, Any]
) -> None:
    vid, rid = world["vehicle_id"], world["route_id"]
    await rollup.refresh_all(pool)
    day0, day1 = await _reports(client, people, vid, D), await _reports(client, people, vid, D1)
    assert day1["km"]["vehicles"][0]["route_km"] > 10
    rolled0, rolled1 = await _rollup_of(conn, vid, D), await _rollup_of(conn, vid, D1)

    async with versions.dated(conn, "correção", D1):  # the line was wrong from D + 1 on
        await conn.execute("UPDATE routes SET geometry = $2 WHERE id = $1", rid, FAR)

    assert await _reports(client, people, vid, D) == day0
    moved = (await _report(client, people, "km", vid, D1))["vehicles"][0]
    assert moved["route_km"] == 0 and moved["method"] == "chord"
    await rollup.refresh(pool)
    assert await _rollup_of(conn, vid, D) == rolled0
    assert (await _rollup_of(conn, vid, D1))["basis"] != rolled1["basis"]  # recomputed with the correction
    assert (await _report(client, people, "km", vid, D1))["vehicles"][0] == moved

    # Before the newest version's first day: refused, naming the field, nothing stored.
    count = await conn.fetchval("SELECT count(*) FROM registry_versions")
    r = await client.patch(
        f"/api/v1/routes/{rid}",
        json={"speed_limit_kmh": 30, "effective_from": D.isoformat()},
        headers=people.auth("admin"),
    )
    assert r.status_code == 409 and r.json()["field"] == "effective_from", r.text
    assert await conn.fetchval("SELECT count(*) FROM registry_versions") == count
    assert await conn.fetchval("SELECT speed_limit_kmh FROM routes WHERE id = $1", rid) == 60
    with pytest.raises(asyncpg.PostgresError, match="effective_from"):  # any write path: the trigger refuses it
        async with conn.transaction():
            await conn.execute("SELECT set_config('telemetria.effective_from', $1, true)", D.isoformat())
            await conn.execute("UPDATE routes SET speed_limit_kmh = 30 WHERE id = $1", rid)
    # From the newest version's first day on: a correction of that version (it supersedes it).
    r = await client.patch(
        f"/api/v1/routes/{rid}",
        json={"speed_limit_kmh": 30, "effective_from": D1.isoformat()},
        headers=people.auth("admin"),
    )
    assert r.status_code == 200, r.text
    assert (await asof.routes_on(conn, [rid], D1))[rid].limit_kmh == 30
    assert (await asof.routes_on(conn, [rid], D))[rid].limit_kmh == 60


async def test_a_deleted_assignment_ends_on_its_date_and_past_days_keep_it(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People, world: dict[str, Any]
) -> None:
    vid, rid, aid = world["vehicle_id"], world["route_id"], world["assignment_id"]
    day0 = await _reports(client, people, vid, D)
    admin = people.auth("admin")
    r = await client.delete(
        f"/api/v1/route-assignments/{aid}", params={"effective_from": D1.isoformat()}, headers=admin
    )
    assert r.status_code == 200, r.text

    rows = await asof.assignments(conn, [rid], D, D1)
    assert [(a.id, a.on(D), a.on(D1)) for a in rows] == [(aid, True, False)]
    assert rows[0].valid_to == D
    assert await _reports(client, people, vid, D) == day0
    alone = (await _report(client, people, "km", vid, D1))["vehicles"][0]
    assert alone["route_km"] == 0 and alone["planned_km"] is None
    # The route selects the vehicle on D, not on D + 1.
    params = {"route_id": str(rid), "from": D.isoformat(), "to": D.isoformat()}
    assert (await client.get("/api/v1/reports/km", params=params, headers=admin)).status_code == 200
    params |= {"from": D1.isoformat(), "to": D1.isoformat()}
    assert (await client.get("/api/v1/reports/km", params=params, headers=admin)).status_code == 404

    h = await client.get(f"/api/v1/route-assignments/{aid}/history", headers=people.auth("contractor"))
    assert h.status_code == 200, h.text
    vs = h.json()["versions"]
    assert [(v["valid_from"], v["valid_to"], v["deleted"], v["changed"]) for v in vs] == [
        (
            REGISTERED.isoformat(),
            D.isoformat(),
            False,
            ["route_id", "valid_from", "valid_to", "vehicle_id", "weekdays"],
        ),
        (D1.isoformat(), None, True, ["deleted"]),
    ]
    assert vs[1]["created_by"] == "admin" and vs[1]["data"] is None
    other = await client.get(f"/api/v1/route-assignments/{aid + 99}/history", headers=admin)
    assert other.status_code == 404


async def test_zones_and_vehicle_limits_are_read_as_of_each_day(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, world: dict[str, Any]
) -> None:
    vid = world["vehicle_id"]
    admin = people.auth("admin")
    r = await client.post(
        "/api/v1/speed-zones",
        json={"name": "Escola", "limit_kmh": 30, "geometry": ZONE, "effective_from": REGISTERED.isoformat()},
        headers=admin,
    )
    assert r.status_code == 201, r.text
    zid = r.json()["id"]
    r = await client.patch(
        f"/api/v1/speed-zones/{zid}", json={"limit_kmh": 20, "effective_from": D1.isoformat()}, headers=admin
    )
    assert r.status_code == 200, r.text
    r = await client.patch(
        f"/api/v1/vehicles/{vid}", json={"speed_limit_kmh": 50, "effective_from": D1.isoformat()}, headers=admin
    )
    assert r.status_code == 200, r.text
    r = await client.patch(
        f"/api/v1/vehicles/{vid}", json={"capacity": 40, "effective_from": D1.isoformat()}, headers=admin
    )
    assert r.status_code == 400 and r.json()["field"] == "effective_from"

    window = Window(day_bounds(D)[0], day_bounds(D1)[1], LOCAL_TZ)
    ctx = await context.load(conn, None, Selection([vid], None, None), window)
    v = ctx.vehicles[0]
    assert (v.limit_on(D), v.limit_on(D1)) == (None, 50)
    assert [z.limit_kmh for z in ctx.zones_on(D)] == [30] and [z.limit_kmh for z in ctx.zones_on(D1)] == [20]
    assert ctx.basis(v, D) != ctx.basis(v, D1)
    # The bases of D are what they were before these edits: a context read of D alone agrees.
    alone = await context.load(conn, None, Selection([vid], None, None), Window(*day_bounds(D), LOCAL_TZ))
    assert alone.basis(alone.vehicles[0], D) == ctx.basis(v, D)

    hv = (await client.get(f"/api/v1/vehicles/{vid}/history", headers=people.auth("contractor"))).json()["versions"]
    assert [(x["valid_from"], x["data"]) for x in hv] == [
        (REGISTERED.isoformat(), {"speed_limit_kmh": None}), (D1.isoformat(), {"speed_limit_kmh": 50})
    ]  # fmt: skip
    hz = (await client.get(f"/api/v1/speed-zones/{zid}/history", headers=admin)).json()["versions"]
    assert [(x["valid_from"], x["changed"], x["data"]["limit_kmh"]) for x in hz] == [
        (REGISTERED.isoformat(), ["active", "geometry", "limit_kmh", "name"], 30), (D1.isoformat(), ["limit_kmh"], 20)
    ]  # fmt: skip


@pytest.mark.parametrize(
    ("method", "path", "payload"),
    [
        ("PATCH", "/api/v1/routes/{rid}", {"speed_limit_kmh": 50, "effective_from": "amanhã"}),
        ("PATCH", "/api/v1/routes/{rid}", {"speed_limit_kmh": 50, "effective_from": "2026-02-30"}),
        ("PUT", "/api/v1/routes/{rid}/stops", {"stops": [], "effective_from": 20260101}),
        ("DELETE", "/api/v1/route-assignments/{aid}?effective_from=ontem", None),
    ],
)
async def test_an_effective_from_that_is_not_a_date_is_refused_naming_it(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, world: dict[str, Any],
    method: str, path: str, payload: Any,
) -> None:  # fmt: skip
    count = await conn.fetchval("SELECT count(*) FROM registry_versions")
    url = path.format(rid=world["route_id"], aid=world["assignment_id"])
    r = await client.request(method, url, json=payload, headers=people.auth("admin"))
    assert r.status_code == 422 and "effective_from" in r.text, r.text
    assert await conn.fetchval("SELECT count(*) FROM registry_versions") == count


async def test_an_edit_that_changes_nothing_makes_no_version(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, world: dict[str, Any]
) -> None:
    rid = world["route_id"]
    admin = people.auth("admin")
    stops = (await client.get(f"/api/v1/routes/{rid}", headers=admin)).json()["stops"]
    same = [{k: s[k] for k in ("name", "lat", "lon", "kind", "scheduled_time")} for s in stops]
    r = await client.put(f"/api/v1/routes/{rid}/stops", json={"stops": same}, headers=admin)
    assert r.status_code == 200, r.text
    h = (await client.get(f"/api/v1/routes/{rid}/history", headers=admin)).json()["versions"]
    assert [(v["valid_from"], v["in_force"]) for v in h] == [(REGISTERED.isoformat(), True)]


async def test_the_migration_makes_existing_data_one_version_open_from_the_beginning(
    test_db: ScratchDb, tmp_path: Path
) -> None:
    name = f"telemetria_vermig_{os.getpid()}"
    admin = await asyncpg.connect(test_db.admin_dsn)
    await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await admin.execute(f'CREATE DATABASE "{name}"')
    conn = await asyncpg.connect(_with_dbname(test_db.dsn, name))
    try:
        await init_connection(conn)
        await migrate(conn, migrations_before(11, tmp_path))
        line = {"type": "LineString", "coordinates": [[-62.47, -10.44], [-62.46, -10.44]]}
        vid = await conn.fetchval("INSERT INTO vehicles (plate, speed_limit_kmh) VALUES ('AAA1A11', 55) RETURNING id")
        rid = await conn.fetchval(
            "INSERT INTO routes (code, name, school_year, geometry, length_m, declared_km, created_at)"
            " VALUES ('R1', 'Linha 1', 2025, $1, 1100, 12.3456, '2025-03-01 12:00Z') RETURNING id",
            line,
        )
        await conn.execute(
            "INSERT INTO route_stops (route_id, seq, name, lat, lon, kind, scheduled_time)"
            " VALUES ($1, 1, 'Escola', -10.44, -62.46, 'school', '06:45')",
            rid,
        )
        aid = await conn.fetchval(
            "INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, '2025-03-01')"
            " RETURNING id",
            rid, vid,
        )  # fmt: skip
        zid = await conn.fetchval(
            "INSERT INTO speed_zones (name, limit_kmh, geometry) VALUES ('Escola', 30, $1) RETURNING id",
            {
                "type": "Polygon",
                "coordinates": [[[-62.47, -10.44], [-62.46, -10.44], [-62.46, -10.43], [-62.47, -10.44]]],
            },
        )
        await migrate(conn)
        rows = await conn.fetch(
            "SELECT kind, item_id, valid_from, lower_inf(during) AS open_start, upper_inf(during) AS open_end, data"
            " FROM registry_versions_in_force ORDER BY kind"
        )
        total = await conn.fetchval("SELECT count(*) FROM registry_versions")
        declared = await conn.fetchval("SELECT declared_km FROM routes")
        routes_then = await asof.routes_on(conn, [rid], date(2000, 1, 1))
        assigned_then = await asof.assignments(conn, [rid], date(2025, 3, 3), date(2025, 3, 3))
    finally:
        await conn.close()
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
    assert total == 4
    by_kind = {r["kind"]: r for r in rows}
    assert {k: r["item_id"] for k, r in by_kind.items()} == {
        "route": rid, "route_assignment": aid, "speed_zone": zid, "vehicle": vid
    }  # fmt: skip
    assert all(r["open_start"] and r["open_end"] for r in rows)
    assert by_kind["route"]["valid_from"] == date(2025, 3, 1)
    assert by_kind["route"]["data"]["stops"] == [
        {"seq": 1, "name": "Escola", "lat": -10.44, "lon": -62.46, "kind": "school", "scheduled_time": "06:45:00"}
    ]
    assert by_kind["vehicle"]["data"] == {"speed_limit_kmh": 55}
    assert str(declared) == "12.346"  # numeric(9, 3): exact, to the metre
    assert str(routes_then[rid].declared_km) == "12.346" and routes_then[rid].points[0].scheduled == "06:45:00"
    assert [(a.id, a.valid_from) for a in assigned_then] == [(aid, date(2025, 3, 1))]
