"""What the demo's backfill (sim/backfill.py) plants in its past school days, without a database."""

from __future__ import annotations

from datetime import date, timedelta

from telemetria.sim.backfill import JUSTIFIED, PLAN, closed_month, day_fixes, plan_of, school_days

SEED = 1
VEHICLES = 5
FIRST = date(2026, 11, 5)  # a first start on 2026-12-05: the registry's first day, 30 days before


def test_the_days_are_weekdays_before_the_first_start_and_the_plan_is_anchored_to_the_first_day() -> None:
    days = school_days(FIRST, FIRST + timedelta(days=30))
    assert len(days) == 21 and all(d.isoweekday() <= 5 for d in days) and days[-1] == date(2026, 12, 4)
    # 20 November is a national holiday (Dia da Consciência Negra): no run is due, so nothing is planted there
    # (a substitution planted there left the closed month without one when the demo started on 6 December)
    assert date(2026, 11, 20) not in days
    for start in (date(2026, 12, d) for d in range(1, 15)):
        later = school_days(start - timedelta(days=30), start)
        assert {p.kind for p in plan_of(later).values()} == {"partial", "not_made", "substitution"}
        assert date(2026, 11, 20) not in later
    plan = plan_of(days)
    assert len(plan) == len(PLAN)
    # a later start (more days) keeps each plant on its day: the stored past does not change
    assert plan_of(school_days(FIRST, FIRST + timedelta(days=40))) == plan
    assert {p.kind for p in plan.values()} == {"partial", "not_made", "substitution"}
    assert plan[(days[JUSTIFIED.day], JUSTIFIED.vehicle)].kind == "not_made"
    assert closed_month(FIRST + timedelta(days=30)) == date(2026, 11, 1)


def test_each_plant_shows_in_the_fixes() -> None:
    days = school_days(FIRST, FIRST + timedelta(days=30))
    plan = plan_of(days)
    made = day_fixes(SEED, VEHICLES, days[0], {})
    assert all(len(made[v]) > 30 and any(f.speed_kmh > 0 for f in made[v]) for v in range(VEHICLES))
    assert made[VEHICLES] == []  # the reserve stays home on an ordinary day
    for (day, v), p in plan.items():
        got = day_fixes(SEED, VEHICLES, day, plan)
        if p.kind == "partial":  # turned round: a shorter drive than the whole route's
            assert 0 < len(got[v]) < 0.9 * len(day_fixes(SEED, VEHICLES, day, {})[v])
        else:  # parked at the garage, ignition off
            assert got[v] and all(f.ignition is False and f.speed_kmh == 0 for f in got[v])
        if p.kind == "substitution":
            assert any(f.speed_kmh > 0 for f in got[VEHICLES])
    assert day_fixes(SEED, VEHICLES, days[3], plan) == day_fixes(SEED, VEHICLES, days[3], plan)  # seeded
