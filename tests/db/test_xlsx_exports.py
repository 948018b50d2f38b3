"""XLSX of every report, the boletim and the occurrence list: the data sheet holds the CSV's rows of the same
query, cell by cell, typed; the export is audited with its format; a role that may not export gets 403."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import asyncpg
import httpx
import pytest

from telemetria.auth.roles import PERMISSIONS, Perm, Role
from telemetria.measurement import sheet
from telemetria.occurrences.listing import CSV_COLUMNS
from telemetria.reports.kinds import events, km, reporting, schedule, summary, track
from telemetria.reports.output import xlsx
from telemetria.reports.output.csv import Column
from telemetria.sim import TrackerParams
from tests.db.conftest import People, make_people
from tests.db.test_measurement_api import FIRST, LAST
from tests.db.test_measurement_api import _setup as measurement_setup
from tests.db.test_occurrences_api import api, auth, occurrence, world  # noqa: F401  (fixtures)
from tests.db.test_reports_accuracy import DAY, _post, _register, _run
from tests.db.world import World
from tests.db.xlsxfile import same_rows, workbook

KM_BY_VEHICLE = [c for c in km.KM_COLUMNS if c.header != "Data"]
REPORTS: list[tuple[str, dict[str, str], Sequence[Column]]] = [
    ("km", {}, KM_BY_VEHICLE),
    ("km", {"by": "day"}, km.KM_COLUMNS),
    ("summary", {}, summary.SUMMARY_COLUMNS),
    ("speeding", {}, events.SPEEDING_COLUMNS),
    ("trips", {}, events.TRIPS_COLUMNS),
    ("stops", {}, events.STOPS_COLUMNS),
    ("route-deviation", {}, events.DEVIATION_COLUMNS),
    ("track", {}, track.COLUMNS),
    ("reporting", {}, reporting.COLUMNS),
    ("schedule", {}, schedule.COLUMNS),
]


@pytest.fixture
async def people(conn: asyncpg.Connection, clean: None) -> People:
    return await make_people(conn)


@pytest.fixture
def no_export(monkeypatch: pytest.MonkeyPatch) -> str:
    """Every role may export today: the auditor is made one that may not, for the refusals."""
    monkeypatch.setitem(PERMISSIONS, Role.AUDITOR, PERMISSIONS[Role.AUDITOR] - {Perm.EXPORT})
    return "auditor"


@pytest.fixture
async def vehicle(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> int:
    """One simulated run posted live."""
    run = _run(2, tracker=TrackerParams(loss_per_hour=0.0))
    t = await _register(conn, people, run, "AAA1A11", "sim-xlsx")
    await _post(client, t, [[f] for u in run.uploads for f in u.fixes])
    return int(t.vehicle_id)


async def _get(client: httpx.AsyncClient, path: str, params: dict[str, Any], headers: dict[str, str]) -> bytes:
    r = await client.get(path, params=params, headers=headers)
    assert r.status_code == 200, r.text
    return r.content


async def test_every_report_as_xlsx_holds_the_csvs_rows(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, vehicle: int
) -> None:
    base = {"vehicle_id": str(vehicle), "from": DAY, "to": DAY}
    counts = {}
    for kind, extra, columns in REPORTS:
        path, params = f"/api/v1/reports/{kind}", {**base, **extra}
        got = await client.get(path, params={**params, "format": "xlsx"}, headers=people.auth("auditor"))
        assert got.status_code == 200, (kind, got.text)
        assert got.headers["content-type"] == xlsx.MEDIA_TYPE
        assert got.headers["content-disposition"].endswith('.xlsx"') and DAY in got.headers["content-disposition"]
        text = await _get(client, path, {**params, "format": "csv"}, people.auth("auditor"))
        counts[kind + str(extra)] = same_rows(got.content, text, columns)
        query = {r[0].value: r[1].value for r in workbook(got.content)["Consulta"].iter_rows() if len(r) > 1}
        assert query["Veículos (1)"] == "AAA1A11" and str(query["Gerado por"]).startswith("auditor")
    assert counts["km{}"] == 2  # the vehicle and the total
    assert counts["track{}"] > 100 and counts["trips{}"] >= 1
    audited = await conn.fetch("SELECT action, detail FROM audit_log WHERE detail->>'format' = 'xlsx'")
    assert len(audited) == len(REPORTS) and {r["action"] for r in audited} >= {"export.km", "export.track"}


async def test_the_track_workbook_holds_its_totals_and_places(
    client: httpx.AsyncClient, people: People, vehicle: int
) -> None:
    params = {"vehicle_id": str(vehicle), "from": DAY, "to": DAY}
    content = await _get(client, "/api/v1/reports/track", {**params, "format": "xlsx"}, people.auth("auditor"))
    book = workbook(content)
    assert book.sheetnames[:4] == ["Consulta", "Trajetória", "Totais", "Locais"]
    footer = (await client.get("/api/v1/reports/track", params=params, headers=people.auth("auditor"))).json()
    totals = list(book["Totais"].iter_rows(values_only=True))
    assert totals[0] == tuple(c.header for c in track.TOTALS_COLUMNS)
    assert len(totals) == 1 + len(footer["totals"]) and totals[1][1] == "AAA1A11"
    assert totals[1][2] == pytest.approx(footer["totals"][0]["km"]) and isinstance(totals[1][3], int)
    places = list(book["Locais"].iter_rows(values_only=True))
    assert len(places) == 1 + len(footer["places"])


async def test_export_needs_the_export_permission(
    client: httpx.AsyncClient, people: People, vehicle: int, no_export: str
) -> None:
    params = {"vehicle_id": str(vehicle), "from": DAY, "to": DAY, "format": "xlsx"}
    for path in ("/api/v1/reports/km", "/api/v1/reports/track", "/api/v1/reports/measurement"):
        r = await client.get(path, params=params, headers=people.auth(no_export))
        assert r.status_code == 403 and "format" in r.json()["detail"], (path, r.text)


async def test_the_boletim_as_xlsx(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People) -> None:
    w = await measurement_setup(client, conn, people)
    params = {"contract_id": w["k"], "from": FIRST, "to": LAST}
    got = await _get(client, "/api/v1/reports/measurement", {**params, "format": "xlsx"}, people.auth("auditor"))
    text = await _get(client, "/api/v1/reports/measurement", {**params, "format": "csv"}, people.auth("auditor"))
    assert same_rows(got, text, sheet.COLUMNS) > 1
    book = workbook(got)
    assert book.sheetnames == ["Consulta", "Boletim de medição"]
    query = {r[0].value: r[1].value for r in book["Consulta"].iter_rows() if len(r) > 1}
    assert query["Período"] == "02/03/2026 a 06/03/2026" and query["Contratos (1)"]
    assert (
        await conn.fetchval(
            "SELECT count(*) FROM audit_log WHERE action = 'export.measurement' AND detail->>'format' = 'xlsx'"
        )
        == 1
    )


async def test_the_occurrence_list_as_xlsx(
    api: httpx.AsyncClient,  # noqa: F811
    conn: asyncpg.Connection,
    world: World,  # noqa: F811
) -> None:
    await occurrence(conn, world)
    await occurrence(conn, world, 2, kind="unauthorized_stop", place='=HYPERLINK("http://x")')
    params = {"from": "2026-03-02"}
    got = await _get(api, "/api/v1/occurrences", {**params, "format": "xlsx"}, auth(world, "auditor"))
    text = await _get(api, "/api/v1/occurrences", {**params, "format": "csv"}, auth(world, "auditor"))
    assert same_rows(got, text, CSV_COLUMNS) == 2
    assert workbook(got).sheetnames == ["Consulta", "Ocorrências"]
    assert (
        await conn.fetchval(
            "SELECT count(*) FROM audit_log WHERE action = 'export.occurrences' AND detail->>'format' = 'xlsx'"
        )
        == 1
    )


async def test_the_occurrence_list_needs_the_export_permission(
    api: httpx.AsyncClient,  # noqa: F811
    world: World,  # noqa: F811
    no_export: str,
) -> None:
    r = await api.get("/api/v1/occurrences", params={"format": "xlsx"}, headers=auth(world, no_export))
    assert r.status_code == 403 and "format" in r.json()["detail"]
