"""bench/boletim.py runs end to end on a tiny contract: its data, rollups, the timed reads and the table."""

from __future__ import annotations

from dataclasses import replace
from datetime import date

import pytest

from bench import boletim
from bench.benchdb import BenchDb
from bench.timing import Timing
from telemetria.settings import Settings
from tests.conftest import scratch_database


def test_the_period_is_the_last_school_days_before_today() -> None:
    days = boletim.school_period(date(2026, 11, 30), 22)
    assert len(days) == 22 and days[-1] == date(2026, 11, 27)
    assert date(2026, 11, 20) not in days and all(d.isoweekday() <= 5 for d in days)  # Consciência Negra
    early = boletim.school_period(date(2026, 1, 5), 5)  # not enough days yet this year: last December's
    assert early[-1] == date(2025, 12, 31) and len(early) == 5


async def test_the_boletim_bench_runs_on_a_tiny_contract(base_settings: Settings) -> None:
    async with scratch_database(base_settings, "telemetria_benchboletim") as scratch:
        db = BenchDb(scratch.name, scratch.dsn, scratch.admin_dsn)
        plan = boletim.Plan(routes=2, days=3, reps=1)
        res = await boletim.measure(db, scratch.settings(), plan, today=date(2026, 11, 30))
    assert res.period == (date(2026, 11, 25), date(2026, 11, 27))
    runs = res.boletim["runs"]
    assert {(r["date"], r["route_id"]) for r in runs} == {
        (d, rid) for d in ("2026-11-25", "2026-11-26", "2026-11-27") for rid in (1, 2)
    }
    # fleetgen's vehicles drive their whole loop every morning: every run made, paid at the declared km.
    assert {r["status"] for r in runs} == {"made"}
    assert len(res.timings) == 4 and all(t.best_ms > 0 for _, t, _ in res.timings)
    text = boletim.render(res)
    assert "boletim, 2 routes × 3 school days (json) (target scaled to its size)" in text and "km report" in text
    assert "boletim, worst case: substitutions, partial runs, no rollups" in text
    # The worst case takes the paths the best one does not: a substitute's run, a partial one, no rollups.
    (worst,) = [n for n in res.notes if n.startswith("worst case: boletim:")]
    assert "partial" in worst, worst
    assert res.timings[0][2] == pytest.approx(boletim.TARGET_MS * 6 / (40 * 22))  # scaled to 2 routes × 3 days
    # The verdict is the exit code: a median over the target exits 1, under it 0 (issue 33: it always exited 0).
    slow = replace(res, timings=[(w, Timing([10.0]), target) for w, _, target in res.timings])
    fast = replace(res, timings=[(w, Timing([1e-6]), target) for w, _, target in res.timings])
    assert (boletim.exit_code(slow), boletim.exit_code(fast)) == (1, 0)
    assert "NOT met" in boletim.render(slow)
