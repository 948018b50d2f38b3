"""PUT and GET of a school year: stored exactly as sent, school days computed, bad input refused with nothing stored."""

from __future__ import annotations

from typing import Any

import asyncpg
import httpx
import pytest

from tests.db.conftest import People

YEAR: dict[str, Any] = {
    "start": "2026-02-02",
    "end": "2026-12-18",
    "no_school_days": [
        {"date": "2026-03-10", "reason": "chuva fechou as estradas da linha 4"},
        {"date": "2026-07-20", "reason": "recesso escolar"},
    ],
    "extra_school_days": [{"date": "2026-03-14", "reason": "reposição de 10/03"}],
}


async def test_put_then_get_gives_the_same_fields_and_the_computed_days(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    r = await client.put("/api/v1/school-years/2026", json=YEAR, headers=people.auth("monitor"))
    assert r.status_code == 200, r.text
    got = (await client.get("/api/v1/school-years/2026", headers=people.auth("contractor"))).json()
    assert {k: got[k] for k in YEAR} == YEAR and got["year"] == 2026 and got["updated_by"] == "monitor"
    # 230 weekdays from 2 Feb to 18 Dec 2026, minus 10 holidays and pontos facultativos, minus 2 marked, plus 1.
    assert got["school_days_count"] == len(got["school_days"]) == 230 - 10 - 2 + 1
    assert "2026-03-10" not in got["school_days"] and "2026-03-14" in got["school_days"]
    assert {"date": "2026-02-16", "name": "Carnaval (segunda-feira)", "kind": "ponto_facultativo",
            "basis": "ponto facultativo (não é feriado por lei federal)"} in got["holidays"]  # fmt: skip
    assert {"date": "2026-03-10", "kind": "sem_aula", "reason": YEAR["no_school_days"][0]["reason"]} in got["days_off"]
    audit = await conn.fetchrow(
        "SELECT username, target, detail FROM audit_log WHERE action = 'registry.school_year.update'"
    )
    assert audit["username"] == "monitor" and audit["target"] == "school_year:2026"
    new = audit["detail"]["new"]  # old and new values (issue 31): nothing before the first PUT
    assert [m["date"] for m in new["no_school_days"]] == ["2026-03-10", "2026-07-20"] and new["end"] == "2026-12-18"
    assert audit["detail"]["old"] is None


async def test_put_replaces_the_whole_year(client: httpx.AsyncClient, people: People) -> None:
    auth = people.auth("admin")
    assert (await client.put("/api/v1/school-years/2026", json=YEAR, headers=auth)).status_code == 200
    second = {"start": "2026-02-09", "end": "2026-12-11", "no_school_days": [], "extra_school_days": []}
    assert (await client.put("/api/v1/school-years/2026", json=second, headers=auth)).status_code == 200
    got = (await client.get("/api/v1/school-years/2026", headers=auth)).json()
    assert {k: got[k] for k in second} == second


async def test_a_year_not_stored_is_404(client: httpx.AsyncClient, people: People) -> None:
    r = await client.get("/api/v1/school-years/2031", headers=people.auth("auditor"))
    assert r.status_code == 404 and "2031" in r.json()["detail"]


def _with(**change: Any) -> dict[str, Any]:
    return YEAR | change


@pytest.mark.parametrize(
    ("year", "body", "status", "field"),
    [
        (2026, _with(start="2026-12-18", end="2026-02-02"), 400, "end"),
        (2026, _with(start="2025-02-02"), 400, "start"),
        (2026, _with(end="2027-01-10"), 400, "end"),
        (2026, _with(no_school_days=[{"date": "2026-01-15", "reason": "férias"}]), 400, "no_school_days[0].date"),
        (2026, _with(no_school_days=[{"date": "2026-03-10"}]), 422, "body.no_school_days.0.reason"),
        (2026, _with(no_school_days=[{"date": "2026-03-10", "reason": "  "}]), 400, "no_school_days[0].reason"),
        (2026, _with(no_school_days=[YEAR["no_school_days"][0]] * 2), 400, "no_school_days[1].date"),
        (2026, _with(no_school_days=[{"date": "2026-09-07", "reason": "x"}]), 400, "no_school_days[0].date"),
        (2026, _with(extra_school_days=[{"date": "2026-03-09"}]), 400, "extra_school_days[0].date"),
        (2026, _with(extra_school_days=[{"date": "2026-03-10"}]), 400, "extra_school_days[0].date"),
        (2026, _with(extra_school_days=[{"date": "2026-12-19"}]), 400, "extra_school_days[0].date"),
        (2026, _with(extra_school_days=["2026-03-14"]), 422, "body.extra_school_days.0"),
        (2026, _with(start="2026-02-30"), 422, "body.start"),
        (2026, _with(holidays=[]), 422, "body.holidays"),
        (1999, YEAR, 422, "path.year"),
    ],
)
async def test_bad_input_names_the_field_and_stores_nothing(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, year: int, body: dict[str, Any],
    status: int, field: str,
) -> None:  # fmt: skip
    r = await client.put(f"/api/v1/school-years/{year}", json=body, headers=people.auth("monitor"))
    assert r.status_code == status, r.text
    answer = r.json()
    fields = [answer.get("field")] + [e["field"] for e in answer.get("errors", [])]
    assert field in fields, answer
    assert await conn.fetchval("SELECT count(*) FROM school_years") == 0
    assert await conn.fetchval("SELECT count(*) FROM school_calendar_days") == 0
    assert await conn.fetchval("SELECT count(*) FROM audit_log WHERE action LIKE 'registry.school_year%'") == 0


async def test_a_bad_put_leaves_the_stored_year_as_it_was(client: httpx.AsyncClient, people: People) -> None:
    auth = people.auth("monitor")
    assert (await client.put("/api/v1/school-years/2026", json=YEAR, headers=auth)).status_code == 200
    bad = _with(no_school_days=[{"date": "2026-03-10", "reason": "chuva"}, {"date": "2026-03-10", "reason": "x"}])
    assert (await client.put("/api/v1/school-years/2026", json=bad, headers=auth)).status_code == 400
    got = (await client.get("/api/v1/school-years/2026", headers=auth)).json()
    assert got["no_school_days"] == YEAR["no_school_days"]


async def test_only_registry_writers_may_put(client: httpx.AsyncClient, people: People) -> None:
    for role in ("auditor", "contractor"):
        r = await client.put("/api/v1/school-years/2026", json=YEAR, headers=people.auth(role))
        assert r.status_code == 403
