"""The boletim's pure parts: runs due, which vehicle made a run, statuses, pay, totals; hand-made observations."""

from __future__ import annotations

import hashlib
from dataclasses import replace
from datetime import UTC, date, datetime, time
from decimal import Decimal as D
from zoneinfo import ZoneInfo

import orjson
import pytest

from telemetria.contracts.rule import PaymentRule
from telemetria.measurement import document
from telemetria.measurement.boletim import (
    Justification,
    Line,
    RouteRef,
    Terms,
    VehicleInfo,
    choose,
    lines,
    pct,
    route_totals,
    short,
)
from telemetria.measurement.due import DueRun, allot, due_days, due_runs
from telemetria.measurement.model import Observation, RunPlan
from telemetria.reports.model import Route
from telemetria.reports.store.asof import AssignmentRow

TZ = ZoneInfo("America/Porto_Velho")
DAY = date(2026, 3, 2)  # a Monday
RULE = PaymentRule()
TERMS = Terms(D("4.37"), RULE)
CONTRACTOR = 7
VEHICLES = {
    1: VehicleInfo(1, "AAA1A11", True, CONTRACTOR),
    2: VehicleInfo(2, "BBB2B22", True, CONTRACTOR),
    3: VehicleInfo(3, "CCC3C33", False, CONTRACTOR),
}


def plan(route_id: int = 10, day: date = DAY, run_no: int = 1, share: str = "1") -> RunPlan:
    start = datetime(day.year, day.month, day.day, 10, tzinfo=UTC).timestamp()
    return RunPlan(route_id, day, run_no, start, start + 3600, 0.0, 38450.0, D(share))


def run(vehicles: tuple[int, ...] = (1,), **kw: object) -> DueRun:
    p = plan(**kw)  # type: ignore[arg-type]
    return DueRun(p, "R10", D("38.450"), vehicles, (D("38.450") * p.share).quantize(D("0.001")))


def obs(r: DueRun, vehicle_id: int, coverage: float, route_km: float = 0.0, off: float = 0.0) -> Observation:
    p = r.plan
    return Observation(p.route_id, p.day, p.run_no, vehicle_id, coverage, route_km or 38.45 * coverage, off,
                       p.start + 60, p.end - 60)  # fmt: skip


def index(*os: Observation) -> dict[tuple[int, date, int, int], Observation]:
    return {(o.route_id, o.day, o.run_no, o.vehicle_id): o for o in os}


def one(r: DueRun, *os: Observation, others: tuple[int, ...] = (), js: tuple[Justification, ...] = ()) -> Line:
    (ln,) = lines([r], index(*os), {0: others}, lambda d: TERMS, VEHICLES, CONTRACTOR, js)
    return ln


@pytest.mark.parametrize(
    ("coverage", "status", "payable"),
    [
        (1.0, "made", "38.450"),
        (0.95, "made", "38.450"),  # the boundary is made
        (0.949949, "partial", "36.524"),  # 94.9949 % is 94.99 % (to 0.01 %) before the threshold is applied
        (0.9499, "partial", "36.524"),  # 38.45 × 94.99 % = 36.523655
        (0.5, "partial", "19.225"),
        (0.4999, "not_made", "0.000"),
        (0.0, "not_made", "0.000"),
    ],
)
def test_status_boundaries_and_proportional_pay(coverage: float, status: str, payable: str) -> None:
    r = run()
    ln = one(r, obs(r, 1, coverage))
    assert ln.status == status
    assert ln.payable_km == D(payable)
    assert ln.amount == (D(payable) * D("4.37")).quantize(D("0.01"))
    assert not ln.substitution and ln.vehicle_id == 1 and ln.plate == "AAA1A11"


def test_a_run_with_no_evidence_is_not_made_on_the_assigned_vehicle() -> None:
    ln = one(run())
    assert (ln.status, ln.vehicle_id, ln.coverage_pct, ln.payable_km, ln.amount) == ("not_made", 1, 0, 0, 0)
    assert ln.first is None and ln.realized_km == 0


def test_justified_is_not_paid_by_default_and_made_stays_made() -> None:
    r = run()
    j = Justification(10, DAY, None, "ponte caída", "monitor", datetime(2026, 3, 3, tzinfo=UTC))
    ln = one(r, obs(r, 1, 0.2), js=(j,))
    assert ln.status == "justified" and ln.payable_km == 0 and ln.amount == 0
    assert ln.justification == "ponte caída" and ln.justified_by == "monitor"
    made = one(r, obs(r, 1, 0.99), js=(j,))
    assert made.status == "made" and made.justification is None
    # a partial run justified keeps what its coverage pays; a rule paying justified runs pays the declared km
    assert one(r, obs(r, 1, 0.7), js=(j,)).payable_km == D("26.915")
    paid = lines([r], index(obs(r, 1, 0.2)), {}, lambda d: Terms(D("4.37"), PaymentRule(justified_paid=True)),
                 VEHICLES, CONTRACTOR, [j])  # fmt: skip
    assert paid[0].status == "justified" and paid[0].payable_km == D("38.450")


def test_a_justification_of_another_run_does_not_count() -> None:
    r = run(run_no=2, share="0.5")
    j = Justification(10, DAY, 1, "atoleiro", "monitor", datetime(2026, 3, 3, tzinfo=UTC))
    assert one(r, obs(r, 1, 0.1), js=(j,)).status == "not_made"


def test_a_substitution_is_chosen_over_a_worse_assigned_run() -> None:
    r = run()
    assert short(r, index(obs(r, 1, 0.3)), RULE)
    ln = one(r, obs(r, 1, 0.3), obs(r, 2, 0.98), others=(2,))
    assert ln.substitution and not ln.unauthorized and ln.vehicle_id == 2 and ln.status == "made"
    assert ln.plate == "BBB2B22" and ln.payable_km == D("38.450")


def test_a_substitute_must_do_better_and_reach_partial() -> None:
    r = run()
    # worse than the assigned vehicle: the assigned run stands
    assert not choose(r, index(obs(r, 1, 0.6), obs(r, 2, 0.55)), (2,), RULE).substitution
    # another vehicle that crossed a bit of the route is no substitute
    ln = one(r, obs(r, 2, 0.3), others=(2,))
    assert not ln.substitution and ln.vehicle_id == 1 and ln.status == "not_made"
    # an assigned vehicle that made it is never replaced
    assert not short(r, index(obs(r, 1, 0.96)), RULE)
    assert choose(r, index(obs(r, 1, 0.96), obs(r, 2, 1.0)), (2,), RULE).vehicle_id == 1


def test_a_vehicle_busy_with_its_own_run_is_no_substitute() -> None:
    # vehicle 2 drives its own route 11 at the same time, over roads route 10 shares: it covers 62 % of route 10
    mine, theirs = run(vehicles=(1,)), run(vehicles=(2,), route_id=11)
    seen = index(obs(mine, 2, 0.62), obs(theirs, 2, 0.99))
    got = lines([mine, theirs], seen, {0: (2,)}, lambda d: TERMS, VEHICLES, CONTRACTOR, ())
    assert [(ln.route_id, ln.vehicle_id, ln.substitution, ln.status) for ln in got] == [
        (10, 1, False, "not_made"),
        (11, 2, False, "made"),
    ]
    # the same vehicle idle on its own route (under partial) may stand in
    seen = index(obs(mine, 2, 0.97), obs(theirs, 2, 0.1))
    got = lines([mine, theirs], seen, {0: (2,)}, lambda d: TERMS, VEHICLES, CONTRACTOR, ())
    assert (got[0].vehicle_id, got[0].substitution, got[0].status) == (2, True, "made")
    # and a run of its own at another time does not keep it from standing in
    later = run(vehicles=(2,), route_id=11)
    later = DueRun(
        replace(later.plan, start=later.plan.end + 600, end=later.plan.end + 4200),
        "R11",
        D("38.450"),
        (2,),
        D("38.450"),
    )
    got = lines([mine, later], index(obs(mine, 2, 0.97), obs(later, 2, 0.99)), {0: (2,)}, lambda d: TERMS, VEHICLES,
                CONTRACTOR, ())  # fmt: skip
    assert (got[0].vehicle_id, got[0].substitution) == (2, True)


def test_an_inactive_substitute_is_unauthorized() -> None:
    r = run()
    ln = one(r, obs(r, 3, 0.99), others=(3,))
    assert ln.substitution and ln.unauthorized and ln.vehicle_id == 3


def test_best_of_two_assigned_vehicles() -> None:
    r = run(vehicles=(1, 2))
    assert one(r, obs(r, 1, 0.4), obs(r, 2, 0.97)).vehicle_id == 2
    assert not one(r, obs(r, 1, 0.4), obs(r, 2, 0.97)).substitution


def test_off_route_km_are_not_paid_by_default() -> None:
    r = run()
    ln = one(r, obs(r, 1, 1.0, off=12.3456))
    assert ln.off_route_km == D("12.346") and ln.payable_km == D("38.450")


def test_totals_are_sums_of_lines_to_the_cent() -> None:
    runs = [run(day=date(2026, 3, d)) for d in range(2, 24) if date(2026, 3, d).isoweekday() < 6]
    o = index(*(obs(r, 1, 0.777) for r in runs))
    ls = lines(runs, o, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [])
    assert len(ls) == 16 and all(ln.amount == D("130.56") for ln in ls)  # 29.876 km × 4.37 = 130.558
    (t,) = route_totals([RouteRef(10, "R10", D("38.450"))], ls)
    assert (t.runs_due, t.runs_partial, t.runs_made) == (16, 16, 0)
    assert t.amount == D("2088.96") == sum(ln.amount for ln in ls)
    assert t.payable_km == D("29.876") * 16 and t.contracted_km == D("38.450") * 16
    assert route_totals([RouteRef(11, "R11", D("5"))], [])[0].runs_due == 0


def test_two_runs_a_day_split_the_declared_km() -> None:
    a, b = run(run_no=1, share="0.5"), run(run_no=2, share="0.5")
    ls = lines([a, b], index(obs(a, 1, 1.0), obs(b, 1, 0.6)), {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [])
    assert [ln.contracted_km for ln in ls] == [D("19.225"), D("19.225")]
    assert [ln.payable_km for ln in ls] == [D("19.225"), D("11.535")]


def test_coverage_is_rounded_to_a_hundredth_of_a_percent() -> None:
    assert pct(0.95) == D("95.00") and pct(0.94995) == D("95.00") and pct(0.949949) == D("94.99")
    assert pct(1.2) == D("100.00") and pct(-0.1) == D("0.00")


def test_due_days_follow_school_days_and_assignment_weekdays() -> None:
    school = {date(2026, 3, d) for d in (2, 3, 4, 5, 6)} - {date(2026, 3, 4)}
    rows = [
        AssignmentRow(1, 10, 1, date(2026, 2, 1), None, frozenset({1, 3, 5})),  # Mon, Wed, Fri
        AssignmentRow(2, 11, 2, date(2026, 3, 5), None, frozenset({1, 2, 3, 4, 5})),  # from Thursday
        AssignmentRow(3, 12, 3, date(2026, 3, 1), None, frozenset({1, 2, 3, 4, 5})),  # not the contract's
    ]
    due = due_days(date(2026, 3, 1), date(2026, 3, 7), school, [10, 11], rows)
    assert sorted(due) == [(10, date(2026, 3, 2)), (10, date(2026, 3, 6)), (11, date(2026, 3, 5)),
                           (11, date(2026, 3, 6))]  # fmt: skip
    assert due[(11, date(2026, 3, 5))] == (2,)


def test_due_runs_take_the_plans_of_the_route_of_the_day() -> None:
    route = Route(10, "R10", "Linha", [-62.47, -62.46], [-10.44, -10.44], 60, 100, (), planned_km=38.45)

    def plans(r: Route, line: object, day: date) -> list[RunPlan]:
        return [plan(r.id, day, 2, "0.4"), plan(r.id, day, 1, "0.6")]

    runs = due_runs({(10, DAY): (1,)}, {DAY: {10: route}}, plans, lambda r: None)  # type: ignore[arg-type,return-value]
    assert [(r.plan.run_no, r.contracted_km) for r in runs] == [(1, D("23.070")), (2, D("15.380"))]
    assert runs[0].declared_km == D("38.450") and runs[0].code == "R10"


def test_a_frozen_line_reads_back_exactly() -> None:
    r = run()
    j = Justification(10, DAY, None, "chuva", "monitor", datetime(2026, 3, 3, 12, tzinfo=UTC))
    ln = one(r, obs(r, 1, 0.6123, off=1.5), js=(j,))
    content = document.canonical({"runs": [document.line_json(ln, 5, TZ)]})
    assert b'"coverage":0.6123' in content and b'"amount":' in content
    (back,) = document.lines_of(content)
    assert back == ln
    assert document.digest(content) == hashlib.sha256(content).hexdigest()  # the bytes stored, nothing else
    assert orjson.loads(content)["runs"][0]["payable_km"] == 23.543  # 38.45 × 61.23 % = 23.54294 → 23.543


def test_the_worked_example_of_docs_contracts() -> None:
    """The week in docs/contracts.md ("A worked example"): route L01, 38.45 km, R$ 4.37/km."""
    days = [date(2026, 3, d) for d in range(2, 7)]
    runs = [run(day=d) for d in days]
    cover = [0.982, 0.777, 0.96, 0.31, 0.0]
    o = index(*(obs(r, 2 if i == 2 else 1, c) for i, (r, c) in enumerate(zip(runs, cover, strict=True))))
    j = Justification(10, days[4], None, "ponte caída", "monitor", datetime(2026, 3, 9, tzinfo=UTC))
    ls = lines(runs, o, {2: [2]}, lambda d: TERMS, VEHICLES, CONTRACTOR, [j])
    got = [(ln.plate, ln.coverage_pct, ln.status, ln.payable_km, ln.amount, ln.substitution) for ln in ls]
    assert got == [
        ("AAA1A11", D("98.20"), "made", D("38.450"), D("168.03"), False),
        ("AAA1A11", D("77.70"), "partial", D("29.876"), D("130.56"), False),
        ("BBB2B22", D("96.00"), "made", D("38.450"), D("168.03"), True),
        ("AAA1A11", D("31.00"), "not_made", D("0.000"), D("0.00"), False),
        ("AAA1A11", D("0.00"), "justified", D("0.000"), D("0.00"), False),
    ]
    (t,) = route_totals([RouteRef(10, "L01", D("38.450"))], ls)
    assert (t.runs_due, t.runs_made, t.runs_partial, t.runs_not_made, t.runs_justified) == (5, 2, 1, 1, 1)
    assert (t.contracted_km, t.payable_km, t.amount) == (D("192.250"), D("106.776"), D("466.62"))


def test_two_runs_of_38_455_km_pay_38_455_km() -> None:
    """Largest remainder to the metre: 19.2275 + 19.2275 rounded each on its own would pay 38.456 km."""
    route = Route(10, "R10", "Linha", [-62.47, -62.46], [-10.44, -10.44], 60, 100, (), planned_km=38.455)

    def halves(r: Route, line: object, day: date) -> list[RunPlan]:
        return [plan(r.id, day, 1, "0.5"), plan(r.id, day, 2, "0.5")]

    runs = due_runs({(10, DAY): (1,)}, {DAY: {10: route}}, halves, lambda r: None)  # type: ignore[arg-type,return-value]
    assert [r.contracted_km for r in runs] == [D("19.228"), D("19.227")]
    ls = lines(runs, index(*(obs(r, 1, 1.0) for r in runs)), {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [])
    (t,) = route_totals([RouteRef(10, "R10", D("38.455"))], ls)
    assert t.contracted_km == t.payable_km == D("38.455")


@pytest.mark.parametrize(
    ("total", "shares", "parts"),
    [
        ("38.455", ["0.5", "0.5"], ["19.228", "19.227"]),
        ("10.000", ["1", "1", "1"], ["3.334", "3.333", "3.333"]),
        ("0.002", ["0.2", "0.3", "0.5"], ["0.000", "0.001", "0.001"]),
        ("7.000", ["0", "0"], ["0.000", "0.000"]),
    ],
)
def test_allot_sums_to_the_total(total: str, shares: list[str], parts: list[str]) -> None:
    got = allot(D(total), [D(s) for s in shares])
    assert got == [D(p) for p in parts]
    if any(D(s) for s in shares):
        assert sum(got, D(0)) == D(total)


def test_a_run_whose_window_has_not_closed_is_pending_and_out_of_the_totals() -> None:
    done, later = run(route_id=10), run(route_id=11)
    later = replace(later, plan=replace(later.plan, start=later.plan.end + 600, end=later.plan.end + 4200))
    seen = index(obs(done, 1, 1.0), obs(later, 1, 0.3))
    now = done.plan.end + 1200  # the second run is under way
    ls = lines([done, later], seen, {1: (2,)}, lambda d: TERMS, VEHICLES, CONTRACTOR, [], now=now)
    assert [ln.status for ln in ls] == ["made", "pending"]
    assert ls[1].payable_km == 0 and ls[1].amount == 0 and not ls[1].substitution and ls[1].coverage_pct == 30
    ts = route_totals([RouteRef(10, "R10", D("38.45")), RouteRef(11, "R11", D("38.45"))], ls)
    assert [(t.runs_due, t.runs_not_made, t.runs_pending) for t in ts] == [(1, 0, 0), (0, 0, 1)]
    assert ts[1].contracted_km == 0 and ts[1].pending_km == D("38.450") and ts[1].amount == 0
    judged = lines([done, later], seen, {1: (2,)}, lambda d: TERMS, VEHICLES, CONTRACTOR, [])
    assert judged[1].status == "not_made"  # without `now` (the day panel) every run is judged


def test_a_vehicle_busy_with_a_run_of_another_contract_is_no_substitute() -> None:
    """One drive paid once: vehicle 2 made route 20 (another contract) while route 10's own vehicle stayed home."""
    mine = run(route_id=10)
    elsewhere = run(vehicles=(2,), route_id=20)
    seen = index(obs(mine, 2, 0.97), obs(elsewhere, 2, 0.99))
    alone = lines([mine], seen, {0: (2,)}, lambda d: TERMS, VEHICLES, CONTRACTOR, [])
    assert (alone[0].substitution, alone[0].status) == (True, "made")  # what the old busy() saw
    got = lines([mine], seen, {0: (2,)}, lambda d: TERMS, VEHICLES, CONTRACTOR, [], own=[elsewhere])
    assert (got[0].vehicle_id, got[0].substitution, got[0].status) == (1, False, "not_made")


def test_a_run_made_out_of_its_time_is_made_only_in_a_drive_no_other_run_of_the_route_was_paid_for() -> None:
    """feito_fora_do_horario: the claimed window's evidence (`claimed`) makes the run made, flagged, with the
    justification shown; the same drive over a shared stretch, already another run of the route, does not; a
    claim the GPS does not bear out leaves the run as it was, unjustified."""
    ida, volta = run(run_no=1, share="0.5"), run(run_no=2, share="0.5")  # both over the whole line: shared
    j = Justification(10, DAY, 2, "saiu cedo", "monitor", datetime(2026, 3, 3, tzinfo=UTC), "feito_fora_do_horario",
                      time(7))  # fmt: skip
    t0 = volta.plan.start - 3 * 3600  # the claimed drive, hours before the volta's window
    there = Observation(10, DAY, 2, 1, 0.99, 38.0, 0.0, t0, t0 + 1800)

    def judged(ida_obs: Observation, claimed: Observation) -> Line:
        out = lines([ida, volta], index(ida_obs), {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [j],
                    claimed=index(claimed))  # fmt: skip
        return out[1]

    apart = replace(obs(ida, 1, 0.99), first=t0 - 7200, last=t0 - 3600)  # the ida driven before it
    ln = judged(apart, there)
    assert (ln.status, ln.off_schedule, ln.justification_kind, ln.justification) == (
        "made", "early", "feito_fora_do_horario", "saiu cedo")  # fmt: skip
    assert ln.payable_km == volta.contracted_km
    same = replace(obs(ida, 1, 0.99), first=t0, last=t0 + 1800)  # the very drive already paid as the ida
    ln = judged(same, there)
    assert (ln.status, ln.justification, ln.justification_kind) == ("not_made", None, None)
    ln = judged(apart, replace(there, coverage=0.6))  # not made there either: not justified by the claim
    assert (ln.status, ln.justification) == ("not_made", None)
