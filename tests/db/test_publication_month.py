"""The public month's service against the measurement, on the simulated month (telemetria/sim/month.py): the
contract's routes registered through the API, the first school days' fixes posted as the trackers sent them.

/public/service?month=2026-03 must give each route exactly the boletim's runs due, runs made and km realized,
and those must be the truth's: every run of March due, the runs made on the days posted made, none of the others.
"""

from __future__ import annotations

from collections import Counter
from functools import cache

import asyncpg

from telemetria.sim.month import FLEET, Month, simulate_month
from telemetria.sim.wire import body
from tests.conftest import ScratchDb
from tests.db import simcontract
from tests.db.conftest import People
from tests.db.simcontract import app_client, ok

DAYS_POSTED = 3  # the first school days of the month: enough runs made, a small share of the month's fixes


@cache
def month() -> Month:
    return simulate_month()


async def test_the_public_month_is_the_boletims_and_the_truths(
    test_db: ScratchDb, conn: asyncpg.Connection, people: People
) -> None:
    m = month()
    async with app_client(test_db, public_enabled=True) as client:
        ids = await simcontract.set_up(client, conn, people, m.routes, m.no_school, FLEET,
                                       morning_only=m.morning_only, dismissals=m.dismissals)  # fmt: skip
        days = sorted({t.day for t in m.runs})[:DAYS_POSTED]
        for p in m.posts:
            if p.day in days and not p.late:
                r = await client.post("/api/v1/fixes", content=body(list(p.upload.fixes)), headers=ids.auth[p.vehicle])
                assert r.status_code == 200, r.text
        public = ok(await client.get("/public/service", params={"month": "2026-03"}))
        boletim = ok(
            await client.get(
                "/api/v1/reports/measurement",
                headers=people.auth("auditor"),
                params={"from": "2026-03-01", "to": "2026-03-31"},
            )
        )  # both contracts
    assert (public["from"], public["to"], public["complete"]) == ("2026-03-01", "2026-03-31", True)
    want = {t["code"]: (t["runs_due"], t["runs_made"], t["realized_km"])
            for c in boletim["contracts"] for t in c["routes"]}  # fmt: skip
    got = {r["code"]: (r["runs_due"], r["runs_made"], r["km_made"]) for r in public["routes"]}
    assert got == want
    assert {r["code"]: r["name"] for r in public["routes"]} == {r.code: f"Linha {r.code}" for r in m.routes}
    due = Counter(m.routes[t.route].code for t in m.runs)
    made = Counter(m.routes[t.route].code for t in m.runs if t.day in days and t.status == "made")
    assert {c: g[0] for c, g in got.items()} == dict(due)
    assert {c: g[1] for c, g in got.items() if g[1]} == dict(made) and sum(made.values()) > 0
    assert public["totals"]["runs_due"] == len(m.runs)
    assert public["totals"]["km_made"] == round(sum(g[2] for g in got.values()), 3) > 0
