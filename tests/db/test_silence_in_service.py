"""Silence is a fact (issue 36): a tracker that sent nothing during its due runs is in service then and reads
0 % in the 30 s rule report and on the day panel, not 100 % nor "sem tempo em serviço" (Art. 15 §2); the
windows are the runs due as the boletim counts them, so a Saturday has none."""

from __future__ import annotations

from datetime import UTC, datetime, time, timedelta

import asyncpg

from telemetria.localtime import LOCAL_TZ
from telemetria.measurement.plans import plan_runs
from telemetria.occurrences.day import compliance
from telemetria.occurrences.detection.duewindows import DueWindows
from telemetria.reports.analysis import engine
from telemetria.reports.kinds import reporting
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Selection, Window
from telemetria.reports.store import asof, context
from tests.db.test_occurrence_derive import Script, add_vehicle, days, local, store, world


async def test_a_tracker_silent_during_its_due_runs_reads_zero(conn: asyncpg.Connection, clean: None) -> None:
    day, before = days()
    w = await world(conn, before, day)
    vid, tid = await add_vehicle(conn, "SIL1A11", w["contractor"], w["l9"], before - timedelta(days=30))
    # Parked with the engine off at 05:00, before its runs, then nothing: never in service by its own fixes.
    await store(conn, vid, tid, Script(local(day, "05:00")).park(300).rows)
    route = (await asof.routes_on(conn, [w["l9"]], day))[w["l9"]]
    due_s = sum(p.end - p.start for p in plan_runs(route, engine.line(route), day))
    assert due_s > 3600

    saturday = day + timedelta(days=(5 - day.isoweekday()) % 7 + 1)  # the Saturday after `day`
    assert saturday.isoweekday() == 6
    win = Window(
        datetime.combine(before, time(), LOCAL_TZ), datetime.combine(saturday + timedelta(days=1), time(), LOCAL_TZ),
        LOCAL_TZ,
    )  # fmt: skip
    ctx = await context.load(conn, None, Selection([vid], None, None), win)
    doc = await reporting.report(conn, ctx, win, DEFAULT, DueWindows, now=datetime.now(UTC))
    assert isinstance(doc.rows, list)
    rows = {r["date"]: r for r in doc.rows}
    assert rows[day]["coverage"] == 0.0 and rows[day]["in_service_s"] == round(due_s)  # silent while due
    assert rows[before]["coverage"] == 0.0  # sent nothing at all that day: its runs were due all the same
    assert rows[saturday]["coverage"] is None and rows[saturday]["in_service_s"] == 0  # nothing due on a Saturday

    # The day panel's compliance of that day, seen at its end: the same 0 % and the vehicle among the worst.
    end = datetime.combine(day, time(23, 59), LOCAL_TZ)
    panel = await compliance(conn, None, day, end)
    assert panel["coverage"] == 0.0 and panel["in_service_s"] == round(due_s)
    assert [(v["plate"], v["coverage"]) for v in panel["worst"]] == [("SIL1A11", 0.0)]
