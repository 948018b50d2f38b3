"""The reports API: rollups that follow late fixes, CSV and GIS exports, scope, and refusals."""

from __future__ import annotations

import asyncio
import csv
import io
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest
from defusedxml import ElementTree

from telemetria.app import create_app
from telemetria.formats import fmt
from telemetria.reports import knobs
from telemetria.reports.store import rollup
from telemetria.sim import TrackerParams
from tests.db.conftest import People, make_people
from tests.db.test_reports_accuracy import DAY, START, _post, _register, _run


@pytest.fixture
async def people(conn: asyncpg.Connection, clean: None) -> People:
    return await make_people(conn)


@pytest.fixture
async def posted(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> tuple[Any, Any]:
    """One simulated run posted live, except the fixes of its last 20 minutes (kept back, to arrive late)."""
    run = _run(2, tracker=TrackerParams(loss_per_hour=0.0))
    t = await _register(conn, people, run, "AAA1A11", "sim-api")
    fixes = [f for u in run.uploads for f in u.fixes]
    cut = START + timedelta(seconds=run.truth.duration_s) - timedelta(minutes=20)
    await _post(client, t, [[f] for f in fixes if f.ts < cut])
    return t, [f for f in fixes if f.ts >= cut]


async def _km(client: httpx.AsyncClient, people: People, vehicle_id: int, role: str = "auditor") -> dict[str, Any]:
    params = {"vehicle_id": str(vehicle_id), "from": DAY, "to": DAY}
    r = await client.get("/api/v1/reports/km", params=params, headers=people.auth(role))
    assert r.status_code == 200, r.text
    return dict(orjson.loads(r.content))


async def test_rollups_follow_late_fixes_and_never_show_a_stale_figure(
    client: httpx.AsyncClient, pool: asyncpg.Pool, people: People, posted: tuple[Any, Any]
) -> None:
    t, late = posted
    live = await _km(client, people, t.vehicle_id)
    assert live["vehicle_days"] == {"from_rollups": 0, "computed_live": 1}
    assert await rollup.refresh(pool) >= 1
    rolled = await _km(client, people, t.vehicle_id)
    assert rolled["vehicle_days"] == {"from_rollups": 1, "computed_live": 0}
    assert rolled["vehicles"] == live["vehicles"]  # the rollup is the same computation

    await _post(client, t, [late])  # six hours late or twenty minutes: the day is marked stale with them
    after = await _km(client, people, t.vehicle_id)
    assert after["vehicle_days"] == {"from_rollups": 0, "computed_live": 1}
    assert after["total_km"] > rolled["total_km"]
    assert await rollup.refresh(pool) >= 1
    again = await _km(client, people, t.vehicle_id)
    assert again["vehicle_days"] == {"from_rollups": 1, "computed_live": 0}
    assert again["vehicles"] == after["vehicles"]

    # A registry change that km depend on outdates every rollup until the refresher recomputes it.
    async with pool.acquire() as conn:
        await conn.execute("UPDATE routes SET deviation_tolerance_m = 120")
    assert (await _km(client, people, t.vehicle_id))["vehicle_days"]["computed_live"] == 1
    assert await rollup.refresh(pool) >= 1
    assert (await _km(client, people, t.vehicle_id))["vehicle_days"]["from_rollups"] == 1


async def test_csv_export_is_pt_br_and_audited(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    params = {"vehicle_id": str(t.vehicle_id), "from": DAY, "to": DAY, "format": "csv"}
    r = await client.get("/api/v1/reports/trips", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/csv")
    assert 'filename="trechos_2026-11-23_2026-11-23.csv"' in r.headers["content-disposition"]
    assert r.content.startswith(b"\xef\xbb\xbf") and b"\r\n" in r.content
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"), newline=""), delimiter=";"))
    assert rows[0][:4] == ["Veículo (id)", "Placa", "Início (America/Porto_Velho)", "Fim (America/Porto_Velho)"]
    assert len(rows) > 2 and all(len(row) == len(rows[0]) for row in rows)
    km = rows[0].index("Km")
    assert "," in rows[1][km] and "." not in rows[1][km]  # decimal comma
    assert rows[1][2][2] == "/" and rows[1][2][5] == "/"  # dd/mm/aaaa
    entry = await conn.fetchrow("SELECT username, action, detail FROM audit_log WHERE action LIKE 'export.%'")
    assert entry["username"] == "auditor" and entry["action"] == "export.trips"
    assert entry["detail"]["format"] == "csv" and entry["detail"]["vehicles"] == [t.vehicle_id]


@pytest.mark.parametrize("fmt", ["geojson", "gpx", "kml"])
async def test_track_as_gis_files(client: httpx.AsyncClient, people: People, posted: tuple[Any, Any], fmt: str) -> None:
    t, _ = posted
    params = {"vehicle_id": str(t.vehicle_id), "from": DAY, "to": DAY, "format": fmt}
    r = await client.get("/api/v1/reports/track", params=params, headers=people.auth("monitor"))
    assert r.status_code == 200, r.text
    if fmt == "geojson":
        doc = orjson.loads(r.content)
        lines = [f for f in doc["features"] if f["geometry"]["type"] == "LineString"]
        assert len(lines) == 1 and len(lines[0]["geometry"]["coordinates"]) > 50
        assert -63 < lines[0]["geometry"]["coordinates"][0][0] < -62  # lon first
    else:
        root = ElementTree.fromstring(r.content)
        assert len([e for e in root.iter() if e.tag.endswith(("trkpt", "coordinates"))]) > 0


async def test_track_json_positions_and_totals(
    client: httpx.AsyncClient, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    params = {"vehicle_id": str(t.vehicle_id), "from": DAY, "to": DAY}
    r = await client.get("/api/v1/reports/track", params=params, headers=people.auth("auditor"))
    doc = orjson.loads(r.content)
    assert doc["tz"] == "America/Porto_Velho" and doc["from"] == "2026-11-23T00:00:00-04:00"
    positions = doc["positions"]
    assert positions[0]["time"].endswith("-04:00") and positions[0]["plate"] == "AAA1A11"
    assert doc["totals"][0]["km"] == pytest.approx(positions[-1]["km"], abs=0.01)
    assert doc["totals"][0]["km"] == pytest.approx((await _km(client, people, t.vehicle_id))["total_km"], abs=0.01)
    assert any(p["kind"] == "school" for p in doc["places"])


async def test_a_contractor_sees_only_its_own_fleet(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    other = await conn.fetchval("INSERT INTO vehicles (plate, contractor_id) VALUES ('ZZZ9Z99', $1) RETURNING id",
                                people.other_contractor_id)  # fmt: skip
    mine = await client.get("/api/v1/reports/km", params={"from": DAY, "to": DAY}, headers=people.auth("contractor"))
    assert [v["vehicle_id"] for v in orjson.loads(mine.content)["vehicles"]] == [t.vehicle_id]
    for params in ({"vehicle_id": str(other)}, {"contractor_id": str(people.other_contractor_id)}):
        r = await client.get(
            "/api/v1/reports/km", params={"from": DAY, "to": DAY, **params}, headers=people.auth("contractor")
        )
        assert r.status_code == 404, r.text
    everyone = await client.get("/api/v1/reports/km", params={"from": DAY, "to": DAY}, headers=people.auth("auditor"))
    assert {v["vehicle_id"] for v in orjson.loads(everyone.content)["vehicles"]} == {t.vehicle_id, other}


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"from": "2026-11-24", "to": "2026-11-23"}, "to"),
        ({"from": "2026-11-23", "to": "2026-11-23", "tz": "Mars/Olympus"}, "tz"),
        ({"from": "23/11/2026", "to": "2026-11-23"}, "from"),
        ({"from": "2024-01-01", "to": "2026-11-23"}, "to"),
        ({"from": "2026-11-23", "to": "2026-11-23", "vehicle_id": "1", "route_id": "1"}, "vehicle_id"),
        ({"from": "2026-11-23", "to": "2026-11-23", "vehicle_id": "999"}, "vehicle_id"),
        ({"from": "2026-11-23", "to": "2026-11-23", "route_id": "999"}, "route_id"),
    ],
)
async def test_bad_parameters_are_refused_naming_them(
    client: httpx.AsyncClient, people: People, params: dict[str, str], field: str
) -> None:
    r = await client.get("/api/v1/reports/km", params=params, headers=people.auth("auditor"))
    assert r.status_code in (400, 404), r.text
    assert orjson.loads(r.content)["field"] == field


@pytest.mark.parametrize("query", ["vehicle_id=0", "vehicle_id=99999999999", "format=docx", "by=week", "stop_min_s=1"])
async def test_out_of_range_parameters_are_422(client: httpx.AsyncClient, people: People, query: str) -> None:
    r = await client.get(f"/api/v1/reports/km?from={DAY}&to={DAY}&{query}", headers=people.auth("auditor"))
    assert r.status_code == 422, r.text


async def test_schedule_finds_the_run_made_and_the_run_not_made(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, posted: tuple[Any, Any]
) -> None:
    t, late = posted
    await _post(client, t, [late])
    params = {"vehicle_id": str(t.vehicle_id), "from": "2026-11-22", "to": DAY}
    r = await client.get("/api/v1/reports/schedule", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    doc = orjson.loads(r.content)
    runs = {x["date"]: x for x in doc["runs"]}
    made = runs[DAY]
    assert made["made"] is True and made["school_arrival"] is not None
    assert made["points_served"] >= made["points_total"] - 2  # the garage may be passed without a stop
    # Assigned every weekday, but Sunday the 22nd is no school day: no run due, none listed (issue 36: the
    # schedule report's runs due are the boletim's).
    assert sorted(runs) == [DAY] and doc["made"] == 1 and doc["not_made"] == 0

    # A school year that makes the 24th (Tuesday) a day without school and has Saturday the 21st as a weekend:
    # the 24th is not due either; Wednesday the 25th, assigned and without a fix, is a run not made (Art. 39 I).
    await conn.execute(
        "INSERT INTO school_years (year, start_date, end_date) VALUES (2026, '2026-02-01', '2026-12-20')"
    )
    await conn.execute(
        "INSERT INTO school_calendar_days (year, day, school, reason) VALUES (2026, '2026-11-24', false, 'Recesso')"
    )
    params = {"vehicle_id": str(t.vehicle_id), "from": "2026-11-21", "to": "2026-11-25"}
    r = await client.get("/api/v1/reports/schedule", params=params, headers=people.auth("auditor"))
    doc = orjson.loads(r.content)
    assert {x["date"]: x["made"] for x in doc["runs"]} == {DAY: True, "2026-11-25": False}
    assert doc["made"] == 1 and doc["not_made"] == 1


async def test_map_files_are_limited_to_a_month(client: httpx.AsyncClient, people: People) -> None:
    params = {"from": "2026-09-01", "to": "2026-11-23", "format": "kml"}
    r = await client.get("/api/v1/reports/track", params=params, headers=people.auth("auditor"))
    assert r.status_code == 400 and orjson.loads(r.content)["field"] == "to"


async def test_fixes_landing_while_the_refresher_computes_keep_their_day_stale(
    client: httpx.AsyncClient, pool: asyncpg.Pool, people: People, posted: tuple[Any, Any]
) -> None:
    t, late = posted
    async with pool.acquire() as conn:
        assert await rollup.close_days(conn, datetime.now(UTC)) is not None  # the 23rd is closed: late fixes mark it
    async with pool.acquire() as blocker, pool.acquire() as refresher:
        # Hold the refresher after it has taken its snapshot and computed the day: its upsert
        # waits for this lock while the late fixes (and their stale marks) commit.
        tx = blocker.transaction()
        await tx.start()
        await blocker.execute("LOCK TABLE report_rollups IN SHARE MODE")
        task = asyncio.create_task(rollup.refresh_one(refresher, t.vehicle_id, date(2026, 11, 23)))
        while not await blocker.fetchval(  # noqa: ASYNC110  # polling the server's lock table
            "SELECT count(*) FROM pg_locks WHERE relation = 'report_rollups'::regclass AND NOT granted"
        ):
            await asyncio.sleep(0.01)
        await _post(client, t, [late])
        await tx.rollback()
        await task
    # The rollup written lacks the late fixes, but their mark survived it: the report computes live.
    report = await _km(client, people, t.vehicle_id)
    assert report["vehicle_days"] == {"from_rollups": 0, "computed_live": 1}
    assert await rollup.refresh(pool) == 1
    assert (await _km(client, people, t.vehicle_id))["vehicles"] == report["vehicles"]


async def test_days_of_another_zone_and_several_days(
    client: httpx.AsyncClient, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    local = (await _km(client, people, t.vehicle_id))["total_km"]
    params = {"vehicle_id": str(t.vehicle_id), "from": "2026-11-22", "to": "2026-11-24", "by": "day"}
    for tz in ("America/Porto_Velho", "America/Sao_Paulo"):
        r = await client.get("/api/v1/reports/km", params={**params, "tz": tz}, headers=people.auth("auditor"))
        doc = orjson.loads(r.content)
        assert [row["date"] for row in doc["vehicles"]] == ["2026-11-22", "2026-11-23", "2026-11-24"]
        assert [row["km"] > 0 for row in doc["vehicles"]] == [False, True, False]
        assert doc["total_km"] == pytest.approx(local, abs=0.001)  # the run lies inside both zones' 23rd
        assert doc["vehicles"][1]["first_fix"].endswith("-03:00" if tz.endswith("Paulo") else "-04:00")
        r = await client.get("/api/v1/reports/reporting", params={**params, "tz": tz}, headers=people.auth("auditor"))
        days = orjson.loads(r.content)["days"]
        assert [d["date"] for d in days] == ["2026-11-22", "2026-11-23", "2026-11-24"]
        assert [d["fixes"] > 0 for d in days] == [False, True, False]


async def test_a_route_selects_the_vehicles_assigned_to_it(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    await conn.execute("INSERT INTO vehicles (plate) VALUES ('NOT0R00')")
    route_id = await conn.fetchval("SELECT route_id FROM route_assignments WHERE vehicle_id = $1", t.vehicle_id)
    r = await client.get(
        "/api/v1/reports/summary", params={"route_id": str(route_id), "from": DAY, "to": DAY},
        headers=people.auth("monitor"),
    )  # fmt: skip
    rows = orjson.loads(r.content)["vehicles"]
    assert [row["vehicle_id"] for row in rows] == [t.vehicle_id]
    assert rows[0]["trips"] >= 1 and rows[0]["km"] > 10 and rows[0]["active"] is True


async def test_a_release_with_other_rules_outdates_every_rollup(
    client: httpx.AsyncClient,
    pool: asyncpg.Pool,
    people: People,
    posted: tuple[Any, Any],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A release whose derivation yields other figures (knobs.ANALYSIS_VERSION) with no registry change: no report
    # shows a rollup of the old rules, and the refresher recomputes them by itself.
    t, _ = posted
    assert await rollup.refresh(pool) >= 1
    rolled = await _km(client, people, t.vehicle_id)
    assert rolled["vehicle_days"] == {"from_rollups": 1, "computed_live": 0}
    monkeypatch.setattr(knobs, "ANALYSIS_VERSION", knobs.ANALYSIS_VERSION + 1)
    knobs._fingerprint.cache_clear()
    try:
        after = await _km(client, people, t.vehicle_id)
        assert after["vehicle_days"] == {"from_rollups": 0, "computed_live": 1}
        assert after["vehicles"] == rolled["vehicles"]
        assert await rollup.refresh(pool) == 1
        assert (await _km(client, people, t.vehicle_id))["vehicle_days"] == {"from_rollups": 1, "computed_live": 0}
        assert await rollup.refresh(pool) == 0  # checked once per release, not every round
    finally:
        monkeypatch.undo()
        knobs._fingerprint.cache_clear()


async def test_the_service_refreshes_rollups_by_itself(
    test_db: Any, conn: asyncpg.Connection, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    app = create_app(test_db.settings(rollup_interval_s=0.2))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as c:
            for _ in range(100):
                if (await _km(c, people, t.vehicle_id))["vehicle_days"]["from_rollups"] == 1:
                    break
                await asyncio.sleep(0.1)
            else:
                raise AssertionError("the service never rolled the day up")
    assert await conn.fetchval("SELECT count(*) FROM rollup_stale") == 0


async def test_the_km_csv_closes_with_the_group_total(
    client: httpx.AsyncClient, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    total = (await _km(client, people, t.vehicle_id))["total_km"]
    params = {"from": DAY, "to": DAY, "format": "csv"}
    r = await client.get("/api/v1/reports/km", params=params, headers=people.auth("auditor"))
    rows = list(csv.reader(io.StringIO(r.content.decode("utf-8-sig"), newline=""), delimiter=";"))
    head, last = rows[0], rows[-1]
    assert len(rows) == 3  # header, the one vehicle, the total
    assert last[head.index("Placa")] == "TOTAL" and last[head.index("Veículo (id)")] == ""
    assert last[head.index("Km")] == fmt("km", total)  # the number rules pages follow too (telemetria/formats.py)
    assert rows[1][head.index("Método")] == "rota"  # JSON's code "route", in Portuguese for people


async def test_an_edited_route_is_used_at_once(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    assert (await _km(client, people, t.vehicle_id))["vehicles"][0]["route_km"] > 10  # decoded and cached
    far = {"type": "LineString", "coordinates": [[-60.0, -12.0], [-60.0, -12.1]]}
    await conn.execute("UPDATE routes SET geometry = $1", far)
    row = (await _km(client, people, t.vehicle_id))["vehicles"][0]
    assert row["route_km"] == 0 and row["method"] == "chord"


async def test_live_fixes_mark_nothing_late_ones_mark_their_closed_day(
    client: httpx.AsyncClient, pool: asyncpg.Pool, people: People, posted: tuple[Any, Any]
) -> None:
    t, late = posted
    async with pool.acquire() as conn:
        closed = await rollup.close_days(conn, datetime.now(UTC))
        assert closed is not None and closed >= date(2026, 11, 23)
        swept = await conn.fetch("SELECT DISTINCT vehicle_id, day FROM rollup_stale")
        assert [(r["vehicle_id"], r["day"]) for r in swept] == [(t.vehicle_id, date(2026, 11, 23))]
        await conn.execute("DELETE FROM rollup_stale")
        live = replace(late[0], ts=datetime.now(UTC).replace(microsecond=0))
        await _post(client, t, [[live]])  # today is open: the hot path writes no mark
        assert await conn.fetchval("SELECT count(*) FROM rollup_stale") == 0
        await _post(client, t, [late])  # the 23rd is closed: its late fixes mark it
        marks = await conn.fetch("SELECT DISTINCT vehicle_id, day FROM rollup_stale")
        assert [(r["vehicle_id"], r["day"]) for r in marks] == [(t.vehicle_id, date(2026, 11, 23))]


async def test_closing_days_waits_for_ingest_in_flight(pool: asyncpg.Pool, clean: None) -> None:
    async with pool.acquire() as ingest, pool.acquire() as closer:
        tx = ingest.transaction()
        await tx.start()
        await ingest.execute("LOCK TABLE tracker_installations IN SHARE MODE")  # what every ingest write holds
        task = asyncio.create_task(rollup.close_days(closer, datetime.now(UTC)))
        while not await ingest.fetchval(  # noqa: ASYNC110  # polling the server's lock table
            "SELECT count(*) FROM pg_locks WHERE relation = 'tracker_installations'::regclass AND NOT granted"
        ):
            await asyncio.sleep(0.01)
        assert await ingest.fetchval("SELECT closed_through FROM rollup_horizon") is None
        await tx.commit()
        assert await task is not None


async def test_large_late_batches_mark_their_closed_day_too(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    """Flushes over 64 fixes take the COPY path (all new) or the staged one (some re-sent): both mark."""
    run = _run(6, tracker=TrackerParams(loss_per_hour=0.0))
    t = await _register(conn, people, run, "FFF6F66", "sim-copy")
    assert await rollup.close_days(conn, datetime.now(UTC)) is not None
    fixes = [f for u in run.uploads for f in u.fixes]
    assert len(fixes) > 130

    async def marks_after(batch: list[Any]) -> list[tuple[int, date]]:
        await conn.execute("DELETE FROM rollup_stale")
        await _post(client, t, [batch])
        return [
            (r["vehicle_id"], r["day"]) for r in await conn.fetch("SELECT DISTINCT vehicle_id, day FROM rollup_stale")
        ]

    day = [(t.vehicle_id, date(2026, 11, 23))]
    assert await marks_after(fixes[:100]) == day  # COPY straight into fixes
    assert await marks_after(fixes) == day  # 100 re-sent: staged, the new ones mark
    assert await marks_after(fixes) == []  # all re-sent: nothing changed, nothing marked


async def test_event_reports_read_from_rollups_what_they_would_compute(
    client: httpx.AsyncClient, pool: asyncpg.Pool, people: People, posted: tuple[Any, Any]
) -> None:
    t, late = posted
    await _post(client, t, [late])
    params = {"vehicle_id": str(t.vehicle_id), "from": "2026-11-22", "to": DAY}

    async def reports() -> dict[str, dict[str, Any]]:
        out = {}
        for kind in ("speeding", "trips", "stops", "route-deviation"):
            r = await client.get(f"/api/v1/reports/{kind}", params=params, headers=people.auth("auditor"))
            assert r.status_code == 200, r.text
            out[kind] = dict(orjson.loads(r.content))
        return out

    live = await reports()
    assert all(doc.pop("vehicle_days") == {"from_rollups": 0, "computed_live": 2} for doc in live.values())
    assert await rollup.refresh(pool) >= 1
    rolled = await reports()
    # The 22nd is older than the vehicle's registration and has no fixes: no rollup, nothing to read.
    assert all(doc.pop("vehicle_days") == {"from_rollups": 1, "computed_live": 1} for doc in rolled.values())
    assert rolled == live
    assert live["trips"]["trips"] and all(trip["driver"] is None for trip in live["trips"]["trips"])


async def test_idle_days_of_a_registered_vehicle_are_rolled_up_too(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    await conn.execute("UPDATE vehicles SET created_at = '2026-11-20T12:00:00Z' WHERE id = $1", t.vehicle_id)
    while await rollup.refresh(pool):
        pass
    days = await conn.fetch("SELECT day, fixes FROM report_rollups WHERE vehicle_id = $1 ORDER BY day", t.vehicle_id)
    assert [d["day"] for d in days] == [date(2026, 11, 20) + timedelta(days=i) for i in range(len(days))]
    assert [d["fixes"] > 0 for d in days[:5]] == [False, False, False, True, False]
    params = {"vehicle_id": str(t.vehicle_id), "from": "2026-11-20", "to": "2026-11-26"}
    r = await client.get("/api/v1/reports/km", params=params, headers=people.auth("auditor"))
    assert orjson.loads(r.content)["vehicle_days"] == {"from_rollups": 7, "computed_live": 0}


async def test_a_registry_edit_outdates_only_the_vehicle_days_it_can_change(
    client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People, posted: tuple[Any, Any]
) -> None:
    t, _ = posted
    other = await _register(conn, people, _run(7, tracker=TrackerParams(loss_per_hour=0.0)), "GGG7G77", "sim-other")
    while await rollup.refresh(pool):
        pass
    route_id = await conn.fetchval("SELECT route_id FROM route_assignments WHERE vehicle_id = $1", t.vehicle_id)
    # Next school year's assignment changes no past day; the other vehicle's route changes not ours.
    await conn.execute(
        "INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, '2027-02-01')",
        route_id, t.vehicle_id,
    )  # fmt: skip
    await conn.execute(
        "UPDATE routes SET deviation_tolerance_m = 150 WHERE id = (SELECT route_id FROM route_assignments"
        " WHERE vehicle_id = $1)",
        other.vehicle_id,
    )
    assert (await _km(client, people, t.vehicle_id))["vehicle_days"] == {"from_rollups": 1, "computed_live": 0}
    assert await rollup.refresh(pool) == 0  # the other vehicle had no fixes, so no rollup to redo either
    # Our route's speed limit is an input of our day: that rollup is outdated, computed live, then redone.
    await conn.execute("UPDATE routes SET speed_limit_kmh = 50 WHERE id = $1", route_id)
    assert (await _km(client, people, t.vehicle_id))["vehicle_days"] == {"from_rollups": 0, "computed_live": 1}
    assert await rollup.refresh(pool) == 1
    assert (await _km(client, people, t.vehicle_id))["vehicle_days"] == {"from_rollups": 1, "computed_live": 0}
