"""Every report's workbook, pinned cell by cell: on a simulated school run posted live, each report's XLSX read back
with openpyxl gives the same cells (sheet, address, value, type, number format, bold), frozen panes and filters as
the golden file written by main's XlsxWriter path before issue 37 (tests/data/xlsx_golden/sim_run.json).

A change of writer (a compiled one, a typed-column path) must keep this file as it is. Only what differs between
two runs of the same query is masked: the moment the file was made, who asked (the user's name carries its id) and
vehicle ids. Regenerate only from main's code, never from the code under test:
`TELEMETRIA_XLSX_GOLDEN=write .venv/bin/pytest tests/db/test_xlsx_cells_pinned.py` on main.
"""

from __future__ import annotations

import os
import re
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import httpx
import openpyxl
import orjson

from tests.db.conftest import People
from tests.db.test_reports_accuracy import DAY
from tests.db.test_xlsx_exports import REPORTS, people, vehicle  # noqa: F401  (fixtures)
from tests.db.xlsxfile import workbook

GOLDEN = Path(__file__).resolve().parents[1] / "data" / "xlsx_golden" / "sim_run.json"
GENERATION = re.compile(r"geração \d+")
MASKED_LABELS = ("Gerado em", "Gerado por")  # the "Consulta" lines whose value is the moment and the asker
# Columns that differ between runs: ids from the database's sequences, and the arrival of fixes posted now for a
# past day (the delay between a fix's time and its arrival grows with the day the test runs).
MASKED_COLUMNS = ("(id)", "Recebida em", "atraso")


def _value(v: Any) -> Any:
    if isinstance(v, datetime | date | time):
        return v.isoformat()
    if isinstance(v, timedelta):
        return v.total_seconds()
    if isinstance(v, float):
        return repr(v)  # every digit: a float that changes in its last place is a change
    return v


def _masked(header: Any) -> bool:
    return isinstance(header, str) and any(m.lower() in header.lower() for m in MASKED_COLUMNS)


def cells(book: openpyxl.Workbook) -> dict[str, Any]:
    """Each sheet's non-empty cells, one line each, "address|openpyxl's data type|number format|bold|value as
    JSON", its frozen panes and its filter."""
    out: dict[str, Any] = {}
    for ws in book.worksheets:
        rows = list(ws.iter_rows())
        ids = {c.column for c in rows[0] if _masked(c.value)} if rows else set()
        masked = {r[0].row for r in rows if r and isinstance(r[0].value, str) and r[0].value.startswith(MASKED_LABELS)}
        found = []
        for row in rows:
            for c in row:
                if c.value is None:
                    continue
                v = _value(c.value)
                if isinstance(v, str):  # the registry's generation counts every edit the database ever had
                    v = GENERATION.sub("geração <n>", v)
                if c.row > 1 and (c.column in ids or (c.row in masked and c.column > 1)):
                    v = "<masked>"
                found.append(
                    f"{c.coordinate}|{c.data_type}|{c.number_format}|{int(bool(c.font.b))}|{orjson.dumps(v).decode()}"
                )
        out[ws.title] = {"freeze": ws.freeze_panes, "filter": ws.auto_filter.ref, "cells": found}
    return out


async def test_every_reports_workbook_has_the_cells_it_had_before(
    client: httpx.AsyncClient,
    people: People,  # noqa: F811
    vehicle: int,  # noqa: F811
) -> None:
    base = {"vehicle_id": str(vehicle), "from": DAY, "to": DAY, "format": "xlsx"}
    got: dict[str, Any] = {}
    for kind, extra, _ in REPORTS:
        r = await client.get(f"/api/v1/reports/{kind}", params={**base, **extra}, headers=people.auth("auditor"))
        assert r.status_code == 200, (kind, r.text)
        got[kind + "".join(f" {k}={v}" for k, v in extra.items())] = cells(workbook(r.content))
    if os.environ.get("TELEMETRIA_XLSX_GOLDEN") == "write":
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_bytes(orjson.dumps(got, option=orjson.OPT_INDENT_2) + b"\n")
    golden = orjson.loads(GOLDEN.read_bytes())
    assert sorted(got) == sorted(golden)
    for report, sheets in golden.items():
        assert list(got[report]) == list(sheets), report  # the same sheets, in the same order
        for name, sheet in sheets.items():
            mine = got[report][name]
            assert (mine["freeze"], mine["filter"]) == (sheet["freeze"], sheet["filter"]), (report, name)
            assert len(mine["cells"]) == len(sheet["cells"]), (report, name)
            for a, b in zip(mine["cells"], sheet["cells"], strict=True):  # the first cell that differs, named
                assert a == b, (report, name)
