"""The school day as it was (issue 31), through the real API and database: a morning-only day, an early
dismissal recorded in the calendar, and a return run made early without one.

Route L05 runs out to the school in the morning (06:30 → school 07:00) and back in the afternoon (school 12:30
→ 13:00), along a loop of ~5.5 km: east along one street, north to the school's back gate, west along another.
Its two runs are manhã and tarde by their timetables.
- Mon 9 March: school in the morning only (`shifts: ["tarde", "noite"]`): the return run is not due.
- Tue 10 March: the vehicle drives the return at 09:30 with nothing in the calendar: made, flagged early.
- Wed 11 March: an early dismissal recorded (tarde due from 09:30), the return driven at 09:30: made on time.
- Thu 12 March: the return is not driven at all: not made, as before.
The morning run is driven every day.
"""

from __future__ import annotations

import csv
import io
import itertools
from datetime import UTC, date, datetime, timedelta
from typing import Any

import asyncpg
import httpx
import orjson
import pytest

from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.day import today_runs
from tests.db.conftest import People, register
from tests.db.test_measurement_api import _post_fixes

W, E, S, N = -62.47, -62.45, -10.44, -10.43
LOOP = [[W, S], [E, S], [E, N], [W, N]]
DAYS = [date(2026, 3, d) for d in (9, 10, 11, 12)]


def _leg(day: date, hh: int, mm: int, points: list[list[float]]) -> list[dict[str, Any]]:
    """Fixes every 5 s at ~20 km/h along `points`, from hh:mm local (UTC-4)."""
    t0 = datetime(day.year, day.month, day.day, hh + 4, mm, tzinfo=UTC)
    out, t = [], 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        metres = ((x1 - x0) * 109_500) ** 2 + ((y1 - y0) * 110_600) ** 2
        n = max(2, int(metres**0.5 / 5.55 / 5) + 1)
        for i in range(n):
            out.append({"ts": (t0 + timedelta(seconds=t)).isoformat().replace("+00:00", "Z"),
                        "lat": y0 + (y1 - y0) * i / (n - 1), "lon": x0 + (x1 - x0) * i / (n - 1),
                        "speed_kmh": 20.0, "valid": True})  # fmt: skip
            t += 5.0
    return out


@pytest.fixture
async def world(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> dict[str, Any]:
    mon = people.auth("monitor")
    t = await register(conn, "ESC5E55", "861000000000501")
    await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id, t.vehicle_id)
    r = await client.put("/api/v1/school-years/2026", headers=mon, json={
        "start": "2026-02-02", "end": "2026-12-18",
        "no_school_days": [{"date": "2026-03-09", "reason": "Conselho de classe à tarde",
                            "shifts": ["tarde", "noite"]}],
        "schedule_changes": [{"date": "2026-03-11", "shift": "tarde", "runs_due_from": "09:30",
                              "reason": "Saída antecipada: reunião de pais"}]})  # fmt: skip
    assert r.status_code == 200, r.text
    r = await client.post("/api/v1/contracts", headers=mon, json={
        "contractor_id": people.contractor_id, "number": "050/2026", "valid_from": "2026-02-01",
        "valid_to": "2026-12-31", "price_per_km": "4.50"})  # fmt: skip
    assert r.status_code == 201, r.text
    k = r.json()["id"]
    stops = [("Ponto 1", "boarding", W, S, "06:30"), ("Escola", "school", E, S, "07:00"),
             ("Escola (fundos)", "school", E, N, "12:30"), ("Ponto 2", "boarding", W, N, "13:00")]  # fmt: skip
    r = await client.post("/api/v1/routes", headers=mon, json={
        "code": "L05", "name": "Linha 5", "school_year": 2026, "contract_id": k, "declared_km": 5.5,
        "effective_from": "2026-02-02", "geometry": {"type": "LineString", "coordinates": LOOP},
        "stops": [{"name": n, "kind": kind, "lon": x, "lat": y, "scheduled_time": hm}
                  for n, kind, x, y, hm in stops]})  # fmt: skip
    assert r.status_code == 201, r.text
    route = r.json()["id"]
    r = await client.post("/api/v1/route-assignments", headers=mon, json={
        "route_id": route, "vehicle_id": t.vehicle_id, "valid_from": "2026-02-02", "weekdays": [1, 2, 3, 4, 5],
        "effective_from": "2026-02-02"})  # fmt: skip
    assert r.status_code == 201, r.text
    for d in DAYS:
        await _post_fixes(client, t, _leg(d, 6, 30, LOOP[:2]))
    await _post_fixes(client, t, _leg(DAYS[1], 9, 30, LOOP[1:]))  # Tuesday: back early, unannounced
    await _post_fixes(client, t, _leg(DAYS[2], 9, 30, LOOP[1:]))  # Wednesday: the early dismissal
    return {"k": k, "route": route, "vehicle": t.vehicle_id, "tracker": t}


async def test_the_school_day_as_it_was(client: httpx.AsyncClient, people: People, world: dict[str, Any]) -> None:
    r = await client.get("/api/v1/reports/measurement", headers=people.auth("auditor"),
                         params={"contract_id": world["k"], "from": "2026-03-09", "to": "2026-03-12"})  # fmt: skip
    assert r.status_code == 200, r.text
    got = orjson.loads(r.content)
    runs = {(x["date"], x["run_no"]): x for x in got["runs"]}
    assert sorted(runs) == [("2026-03-09", 1), ("2026-03-10", 1), ("2026-03-10", 2), ("2026-03-11", 1),
                            ("2026-03-11", 2), ("2026-03-12", 1), ("2026-03-12", 2)]  # fmt: skip
    assert all(runs[(d, 1)]["status"] == "made" for d, _ in runs)
    early, dismissal, missed = runs[("2026-03-10", 2)], runs[("2026-03-11", 2)], runs[("2026-03-12", 2)]
    assert (early["status"], early["off_schedule"]) == ("made", "early")
    assert (dismissal["status"], dismissal["off_schedule"]) == ("made", None)
    assert (missed["status"], missed["off_schedule"]) == ("not_made", None)
    assert early["payable_km"] == early["contracted_km"] > 0
    (c,) = got["contracts"]
    assert (c["runs_due"], c["runs_made"], c["runs_not_made"]) == (7, 6, 1)
    body = {"route_id": world["route"], "date": "2026-03-10", "run_no": 2, "reason": "realizada à tarde"}
    r = await client.post("/api/v1/run-justifications", headers=people.auth("monitor"), json=body)
    assert (r.status_code, r.json()["field"]) == (400, "run_no")  # made: a justification agrees with the boletim


async def test_the_calendar_keeps_shifts_and_schedule_changes(
    client: httpx.AsyncClient, people: People, world: dict[str, Any]
) -> None:
    got = (await client.get("/api/v1/school-years/2026", headers=people.auth("auditor"))).json()
    assert got["no_school_days"] == [{"date": "2026-03-09", "reason": "Conselho de classe à tarde",
                                      "shifts": ["tarde", "noite"]}]  # fmt: skip
    assert "2026-03-09" in got["school_days"] and got["shifts_off"][0]["date"] == "2026-03-09"
    # sent without a kind (the contract before it had one): an early dismissal
    assert got["schedule_changes"] == [{"date": "2026-03-11", "shift": "tarde", "runs_due_from": "09:30",
                                        "reason": "Saída antecipada: reunião de pais",
                                        "kind": "saida_antecipada"}]  # fmt: skip
    bad: list[tuple[dict[str, Any], str | None]] = [
        ({"no_school_days": [{"date": "2026-03-09", "reason": "x", "shifts": ["tarde", "tarde"]}]},
         "no_school_days[0].shifts"),
        ({"no_school_days": [{"date": "2026-03-09", "reason": "x", "shifts": ["madrugada"]}]}, None),
        ({"schedule_changes": [{"date": "2026-03-14", "shift": "manha", "runs_due_from": "09:00", "reason": "x"}]},
         "schedule_changes[0].date"),  # a Saturday
        ({"no_school_days": [{"date": "2026-03-09", "reason": "x", "shifts": ["tarde"]}],
          "schedule_changes": [{"date": "2026-03-09", "shift": "tarde", "runs_due_from": "09:00", "reason": "x"}]},
         "schedule_changes[0].shift"),
        ({"schedule_changes": [{"date": "2026-03-09", "shift": "manha", "runs_due_from": "09:00", "reason": "x",
                                "kind": "atrasada"}]}, None),
    ]  # fmt: skip
    for body, field in bad:
        r = await client.put("/api/v1/school-years/2026", headers=people.auth("monitor"),
                             json={"start": "2026-02-02", "end": "2026-12-18", **body})  # fmt: skip
        assert r.status_code in (400, 422), r.text
        if field:
            assert r.json()["field"] == field, r.text


async def test_the_day_panel_shows_a_run_window_moved_by_the_schedule_change(
    conn: asyncpg.Connection, world: dict[str, Any]
) -> None:
    """Wed 11 March's early dismissal (tarde due from 09:30): the day panel gives the return run's window as moved,
    from 09:30 local, not the timetable's 12:30, and judges it made there, as the boletim does."""

    def local(run: Any) -> tuple[str, str]:
        def hm(t: float) -> str:
            return datetime.fromtimestamp(t, UTC).astimezone(LOCAL_TZ).strftime("%H:%M")

        return hm(run.start), hm(run.end)

    wed, _ = await today_runs(conn, None, date(2026, 3, 11), datetime(2026, 3, 12, tzinfo=UTC).timestamp())
    thu, _ = await today_runs(conn, None, date(2026, 3, 12), datetime(2026, 3, 13, tzinfo=UTC).timestamp())
    [moved] = [r for r in wed if r.line.route_id == world["route"] and r.line.run_no == 2]
    [kept] = [r for r in thu if r.line.route_id == world["route"] and r.line.run_no == 2]
    assert local(kept) == ("11:30", "15:00")  # the timetable's window around 12:30
    # moved 3 h earlier with its timetable (12:30 → 09:30), never opening before the morning run's window closed
    assert local(moved) == ("09:00", "12:00"), moved
    assert moved.state == "made" and moved.line.status == "made"


async def test_a_late_start_moves_the_morning_run_and_keeps_the_return(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, world: dict[str, Any]
) -> None:
    """Fri 13 March: classes start at 10:00 (entrada atrasada, manhã). The ida, due 06:30, is driven at 10:00 and
    the return at its 12:30: both made on time; the ida is not `late` (the calendar moved it) and the return kept
    its window. Before the `kind`, the calendar could only record an early dismissal (a kind was refused, 422)."""
    mon = people.auth("monitor")
    got = (await client.get("/api/v1/school-years/2026", headers=mon)).json()
    body = {k: got[k] for k in ("start", "end", "no_school_days", "extra_school_days", "schedule_changes")}
    body["schedule_changes"].append(
        {
            "date": "2026-03-13",
            "shift": "manha",
            "runs_due_from": "10:00",
            "reason": "Entrada atrasada: estrada interditada",
            "kind": "entrada_atrasada",
        }
    )
    r = await client.put("/api/v1/school-years/2026", headers=mon, json=body)
    assert r.status_code == 200, r.text
    assert r.json()["schedule_changes"][-1]["kind"] == "entrada_atrasada"
    fri = date(2026, 3, 13)
    await _post_fixes(client, world["tracker"], _leg(fri, 10, 0, LOOP[:2]))
    await _post_fixes(client, world["tracker"], _leg(fri, 12, 30, LOOP[1:]))
    r = await client.get("/api/v1/reports/measurement", headers=people.auth("auditor"),
                         params={"contract_id": world["k"], "from": "2026-03-13", "to": "2026-03-13"})  # fmt: skip
    assert r.status_code == 200, r.text
    runs = {x["run_no"]: x for x in orjson.loads(r.content)["runs"]}
    assert (runs[1]["status"], runs[1]["off_schedule"]) == ("made", None)
    assert (runs[2]["status"], runs[2]["off_schedule"]) == ("made", None)
    fri_runs, _ = await today_runs(conn, None, fri, datetime(2026, 3, 14, tzinfo=UTC).timestamp())
    [ida] = [x for x in fri_runs if x.line.route_id == world["route"] and x.line.run_no == 1]
    assert datetime.fromtimestamp(ida.start, LOCAL_TZ).strftime("%H:%M") == "09:00"  # due 10:00, window with it


async def test_a_run_made_out_of_its_window_where_the_data_cannot_place_it_is_justified_as_made(
    client: httpx.AsyncClient, people: People, world: dict[str, Any]
) -> None:
    """Mon 16 March: the vehicle drives the ida at 06:30 and, the school closing early without notice, the return
    at 08:00, inside the ida's own window (05:30-09:00). The boletim cannot place it (the return's day outside its
    window starts where the ida's window ends): not made. The servidor records "feito fora do horário" from
    08:00: the GPS shows it there, so it is made (flagged early), paid as made, and the justification shown. A
    time the GPS does not bear out is refused naming made_at, with nothing stored."""
    mon, aud = people.auth("monitor"), people.auth("auditor")
    mon16 = date(2026, 3, 16)
    await _post_fixes(client, world["tracker"], _leg(mon16, 6, 30, LOOP[:2]))
    await _post_fixes(client, world["tracker"], _leg(mon16, 8, 0, LOOP[1:]))
    params = {"contract_id": world["k"], "from": "2026-03-16", "to": "2026-03-16"}

    async def runs() -> dict[int, dict[str, Any]]:
        r = await client.get("/api/v1/reports/measurement", headers=aud, params=params)
        assert r.status_code == 200, r.text
        return {x["run_no"]: x for x in orjson.loads(r.content)["runs"]}

    before = await runs()
    assert (before[1]["status"], before[2]["status"]) == ("made", "not_made")
    claim = {"route_id": world["route"], "date": "2026-03-16", "run_no": 2, "reason": "Saída antecipada sem aviso",
             "kind": "feito_fora_do_horario"}  # fmt: skip
    for body, field in (({**claim}, "made_at"), ({**claim, "run_no": None, "made_at": "08:00"}, "run_no"),
                        ({**claim, "kind": "nao_realizada", "made_at": "08:00"}, "made_at")):  # fmt: skip
        r = await client.post("/api/v1/run-justifications", headers=mon, json=body)
        assert (r.status_code, r.json()["field"]) == (400, field), r.text
    r = await client.post("/api/v1/run-justifications", headers=mon, json={**claim, "made_at": "14:00"})
    assert (r.status_code, r.json()["field"]) == (400, "made_at"), r.text  # nothing driven then
    assert (await runs())[2]["justification"] is None  # refused: nothing stored
    r = await client.post("/api/v1/run-justifications", headers=mon, json={**claim, "made_at": "08:00"})
    assert r.status_code == 201, r.text
    assert (r.json()["kind"], r.json()["made_at"]) == ("feito_fora_do_horario", "08:00")
    after = (await runs())[2]
    assert (after["status"], after["off_schedule"], after["justification_kind"]) == (
        "made",
        "early",
        "feito_fora_do_horario",
    )
    assert after["justification"] == "Saída antecipada sem aviso"
    assert after["payable_km"] == after["contracted_km"] > 0
    # the boletim's CSV says it too, in words: made outside its window, and the kind of the justification
    r = await client.get("/api/v1/reports/measurement", headers=aud, params={**params, "format": "csv"})
    lines = list(csv.DictReader(io.StringIO(r.content.decode("utf-8")[1:]), delimiter=";"))
    second = next(x for x in lines if x["Corrida"] == "2" and x["Data"] == "16/03/2026")
    assert (second["Fora do horário"], second["Tipo de justificativa"]) == (
        "antes da janela",
        "realizada fora do horário",
    )
    # the same status from the single-route question: a run made needs no other justification
    body = {"route_id": world["route"], "date": "2026-03-16", "run_no": 2, "reason": "realizada à tarde"}
    r = await client.post("/api/v1/run-justifications", headers=mon, json=body)
    assert (r.status_code, r.json()["field"]) == (400, "run_no"), r.text
