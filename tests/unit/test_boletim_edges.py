"""The boletim's boundaries and less travelled paths, pinned where the mutation pass (docs/testing.md) found them
unwatched: each threshold at exactly its value, windows that only touch, runs made outside their window, pending
lines and totals of routes the registry no longer lists. Figures are the contract's rule (PaymentRule's defaults:
made from 95.00 %, partial from 50.00 %) and hand-computed km and R$; no database."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time
from decimal import Decimal as D

from telemetria.contracts.rule import PaymentRule
from telemetria.measurement.boletim import (
    Justification,
    Line,
    RouteRef,
    Terms,
    busy,
    choose,
    confirmed,
    lines,
    off_schedule,
    route_totals,
    short,
)
from telemetria.measurement.due import DueRun
from telemetria.measurement.model import Observation
from tests.unit.test_boletim import CONTRACTOR, DAY, RULE, TERMS, VEHICLES, index, obs, run


def at(r: DueRun, vehicle_id: int, coverage: float, first: float, last: float) -> Observation:
    """An observation of run r by vehicle_id with its first and last fix on the route at the given epoch s."""
    return replace(obs(r, vehicle_id, coverage), first=first, last=last)


def moved(r: DueRun, start: float, end: float, m_from: float = 0.0, m_to: float = 38450.0) -> DueRun:
    return replace(r, plan=replace(r.plan, start=start, end=end, m_from=m_from, m_to=m_to))


def test_the_made_threshold_itself_is_made_by_the_assigned_vehicle() -> None:
    """95.00 % is made (PaymentRule: coverage >= made_min_coverage_pct): the assigned vehicle is not short and no
    substitute, however complete, replaces it."""
    r = run()
    assert not short(r, index(obs(r, 1, 0.95)), RULE)
    assert short(r, index(obs(r, 1, 0.9499)), RULE)
    pick = choose(r, index(obs(r, 1, 0.95), obs(r, 2, 1.0)), (2,), RULE)
    assert (pick.vehicle_id, pick.substitution) == (1, False)


def test_a_substitute_at_exactly_partial_stands_in_but_not_one_only_as_good() -> None:
    r = run()
    at_partial = choose(r, index(obs(r, 2, 0.5)), (2,), RULE)
    assert (at_partial.vehicle_id, at_partial.substitution) == (2, True)
    # no better than the assigned vehicle's 60.00 %: the assigned run stands
    same = choose(r, index(obs(r, 1, 0.6), obs(r, 2, 0.6)), (2,), RULE)
    assert (same.vehicle_id, same.substitution) == (1, False)
    # nobody seen at all: the run is the first assigned vehicle's, not made
    nobody = choose(run(vehicles=(2, 1)), {}, (), RULE)
    assert (nobody.vehicle_id, nobody.observation, nobody.substitution) == (2, None, False)
    assert choose(replace(r, vehicle_ids=()), {}, (), RULE).vehicle_id is None
    # the better of the assigned vehicles, partial, with nobody to stand in: that vehicle's run, not the first's
    two = run(vehicles=(1, 2))
    assert choose(two, index(obs(two, 2, 0.6)), (), RULE).vehicle_id == 2


def test_busy_takes_only_overlapping_runs_the_vehicle_was_assigned_and_made_from_partial() -> None:
    mine = run(vehicles=(1,))
    p = mine.plan
    own = run(vehicles=(2,), route_id=11)
    # the run itself listed first (the candidate was assigned to it too) does not end the search
    itself = replace(mine, vehicle_ids=(1, 2))
    assert busy(mine, 2, [itself, own], index(obs(own, 2, 0.5)), RULE)  # exactly partial: made in part
    assert not busy(mine, 2, [itself, own], index(obs(own, 2, 0.4999)), RULE)
    # a run of another vehicle, overlapping, which vehicle 2 happened to drive: not its own
    others = run(vehicles=(3,), route_id=11)
    assert not busy(mine, 2, [others], index(obs(others, 2, 0.99)), RULE)
    # windows that only touch do not overlap (one ends as the other starts), on either side
    before = moved(own, p.start - 3600, p.start)
    after = moved(own, p.end, p.end + 3600)
    for touching in (before, after):
        assert not busy(mine, 2, [touching], index(obs(touching, 2, 0.99)), RULE)
        assert not busy(mine, 2, [itself, touching, itself], index(obs(touching, 2, 0.99)), RULE)
    overlapping = moved(own, p.end - 1, p.end + 3600)
    assert busy(mine, 2, [before, overlapping], index(obs(overlapping, 2, 0.99)), RULE)


def test_the_first_justification_written_is_the_one_shown() -> None:
    r = run()
    later = Justification(10, DAY, 1, "atoleiro", "fiscal", datetime(2026, 3, 5, tzinfo=UTC))
    first = Justification(10, DAY, None, "ponte caída", "monitor", datetime(2026, 3, 3, tzinfo=UTC))
    (ln,) = lines([r], index(obs(r, 1, 0.1)), {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [later, first])
    assert (ln.status, ln.justification, ln.justified_by) == ("justified", "ponte caída", "monitor")


def test_each_run_is_paid_at_the_terms_of_its_own_day() -> None:
    """A price readjusted from the 3rd: the 2nd's run at R$ 4.37/km, the 3rd's at R$ 5.00/km (38.450 km each)."""
    a, b = run(day=date(2026, 3, 2)), run(day=date(2026, 3, 3))

    def terms_on(d: date) -> Terms:
        return Terms(D("5.00") if d >= date(2026, 3, 3) else D("4.37"), RULE)

    ls = lines([a, b], index(obs(a, 1, 1.0), obs(b, 1, 1.0)), {}, terms_on, VEHICLES, CONTRACTOR, [])
    assert [(ln.price_per_km, ln.amount) for ln in ls] == [(D("4.37"), D("168.03")), (D("5.00"), D("192.25"))]


def test_a_window_closing_at_now_is_judged_and_a_pending_run_does_not_hide_the_next() -> None:
    done, later = run(route_id=10), run(route_id=11)
    later = moved(later, later.plan.end + 600, later.plan.end + 4200)
    seen = index(obs(done, 1, 1.0), obs(later, 1, 0.3))
    # the pending run listed first: the judged one after it is still there
    ls = lines([later, done], seen, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [], now=done.plan.end)
    assert [(ln.route_id, ln.status) for ln in ls] == [(11, "pending"), (10, "made")]  # end == now: closed


def test_a_pending_line_shows_what_its_vehicle_did_so_far_and_pays_nothing() -> None:
    r = moved(run(vehicles=(2, 1)), 10_000.0, 13_600.0)
    seen = Observation(10, DAY, 1, 1, 0.4321, 16.6142, 1.2345, 10_060.0, 11_000.0)
    unpaved = Terms(D("4.37"), RULE, D("6.10"))
    (ln,) = lines([r], index(seen), {}, lambda d: unpaved, VEHICLES, CONTRACTOR, [], now=12_000.0)
    assert ln == Line(
        DAY, 1, 10, "R10", 1, "AAA1A11", False, False, "pending", D("43.21"), D("16.614"), D("1.234"),
        D("38.450"), D("38.450"), D("0.000"), D("4.37"), D("0.00"), 10_060.0, 11_000.0,
        price_per_km_unpaved=D("6.10"),
    )  # fmt: skip
    # nothing seen yet: the first assigned vehicle, zeros
    (empty,) = lines([r], {}, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [], now=12_000.0)
    assert (empty.vehicle_id, empty.plate, empty.coverage_pct, empty.realized_km, empty.off_route_km) == (
        2, "BBB2B22", D("0.00"), D("0"), D("0"))  # fmt: skip
    assert (empty.first, empty.last, empty.substitution, empty.unauthorized) == (None, None, False, False)
    # no vehicle assigned at all (a route with its assignment removed): nobody, nothing shown
    (none,) = lines([replace(r, vehicle_ids=())], {}, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [], now=12_000.0)
    assert (none.vehicle_id, none.plate) == (None, None)


def test_a_run_made_outside_its_window_on_its_day_is_made_late_or_early_by_its_own_vehicle() -> None:
    """schoolday.widened: the assigned vehicle drove the run on its day but outside its window: made, flagged,
    never a substitution; made in the window, the outside drive is not looked at."""
    r = run(vehicles=(2,))
    p = r.plan
    late = at(r, 2, 0.95, p.end + 600, p.end + 3000)  # exactly made
    (ln,) = lines([r], {}, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [], outside=index(late))
    assert (ln.vehicle_id, ln.plate, ln.substitution, ln.status, ln.off_schedule) == (2, "BBB2B22", False, "made",
                                                                                      "late")  # fmt: skip
    assert (ln.payable_km, ln.amount, ln.first) == (D("38.450"), D("168.03"), p.end + 600)
    early = at(r, 2, 0.99, p.start - 3000, p.start - 600)
    assert off_schedule(r, {}, index(early), RULE) == early
    (ln,) = lines([r], {}, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [], outside=index(early))
    assert ln.off_schedule == "early"
    # starting exactly at the window's start is not early
    assert lines([r], {}, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [],
                 outside=index(at(r, 2, 0.99, p.start, p.end + 600)))[0].off_schedule == "late"  # fmt: skip
    # under made outside: no such run, judged on the window (not made)
    assert off_schedule(r, {}, index(at(r, 2, 0.9499, p.end, p.end + 9)), RULE) is None
    # made in the window (exactly 95.00 %): the outside drive is not looked at
    inside = index(obs(r, 2, 0.95))
    assert off_schedule(r, inside, index(late), RULE) is None
    (ln,) = lines([r], inside, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [], outside=index(late))
    assert (ln.status, ln.off_schedule, ln.first) == ("made", None, p.start + 60)
    # partial in the window and made outside: made there
    assert off_schedule(r, index(obs(r, 2, 0.6)), index(late), RULE) == late
    # only the assigned vehicles' drives count
    assert off_schedule(r, {}, index(at(r, 1, 1.0, p.end, p.end + 9)), RULE) is None


def _claim(run_no: int) -> Justification:
    return Justification(10, DAY, run_no, "saiu cedo", "monitor", datetime(2026, 3, 3, tzinfo=UTC),
                         "feito_fora_do_horario", time(7))  # fmt: skip


def test_a_claimed_run_is_confirmed_at_exactly_made_and_not_when_made_in_its_window() -> None:
    ida, volta = run(run_no=1, share="0.5"), run(run_no=2, share="0.5")
    t0 = volta.plan.start - 3 * 3600
    there = Observation(10, DAY, 2, 1, 0.95, 38.0, 0.0, t0, t0 + 1800)
    assert confirmed(volta, [ida, volta], {}, index(there), RULE) == there
    assert confirmed(volta, [ida, volta], {}, index(replace(there, coverage=0.9499)), RULE) is None
    # a claim with no fix on the route (first/last unknown) is no evidence
    assert confirmed(volta, [ida, volta], {}, index(replace(there, first=None)), RULE) is None
    assert confirmed(volta, [ida, volta], {}, index(replace(there, last=None)), RULE) is None
    # made in its own window after all (exactly 95.00 %): no claim needed, judged there, justification not shown
    made = index(obs(volta, 1, 0.95))
    assert confirmed(volta, [ida, volta], made, index(there), RULE) is None
    (_, ln) = lines([ida, volta], made, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [_claim(2)],
                    claimed=index(there))  # fmt: skip
    assert (ln.status, ln.off_schedule, ln.justification) == ("made", None, None)


def test_a_claim_is_read_for_every_assigned_vehicle_and_the_best_is_taken() -> None:
    ida, volta = run(run_no=1, share="0.5"), run(vehicles=(2, 1), run_no=2, share="0.5")
    t0 = volta.plan.start - 3 * 3600
    by_1 = Observation(10, DAY, 2, 1, 0.97, 37.0, 0.0, t0, t0 + 1800)
    assert confirmed(volta, [ida, volta], {}, index(by_1), RULE) == by_1  # vehicle 2 (first) has no claim
    by_2 = replace(by_1, vehicle_id=2, coverage=0.99)
    assert confirmed(volta, [ida, volta], {}, index(by_1, by_2), RULE) == by_2
    assert confirmed(volta, [ida, volta], {}, index(replace(by_2, coverage=0.96), by_1), RULE) == by_1
    tie = replace(by_2, coverage=0.97, route_km=38.2)  # same coverage: more km along the route
    assert confirmed(volta, [ida, volta], {}, index(by_1, tie), RULE) == tie


def test_a_claimed_drive_clashes_only_with_a_run_of_the_same_route_and_day_over_a_shared_stretch() -> None:
    """One drive is paid once: the claimed drive is refused when it is another run of the route that day, made
    (at least partial, its first-to-last fix touching the claim's) over a stretch it shares with the claimed run."""
    volta = moved(run(run_no=2, share="0.5"), 20_000.0, 23_600.0, 0.0, 38450.0)
    t0 = 10_000.0
    there = Observation(10, DAY, 2, 1, 0.99, 38.0, 0.0, t0, t0 + 1800)

    def verdict(other: DueRun, o: Observation) -> Observation | None:
        return confirmed(volta, [other, volta], index(o), index(there), RULE)

    ida = moved(run(run_no=1, share="0.5"), 9_000.0, 12_600.0, 0.0, 38450.0)
    assert verdict(ida, at(ida, 1, 0.5, t0 + 1800, t0 + 2400)) is None  # exactly partial, touching at its end
    assert verdict(ida, at(ida, 1, 0.5, t0 - 600, t0)) is None  # touching at its start
    assert verdict(ida, at(ida, 1, 0.4999, t0, t0 + 1800)) == there  # under partial: no run made there
    assert verdict(ida, at(ida, 1, 0.99, t0 + 1801, t0 + 2400)) == there  # apart in time
    # the other run over a disjoint stretch (the loop's other half), or one meeting it at a single point
    for m_from, m_to in ((40_000.0, 60_000.0), (38450.0, 60_000.0)):
        loop = moved(ida, 9_000.0, 12_600.0, m_from, m_to)
        assert verdict(loop, at(loop, 1, 0.99, t0, t0 + 1800)) == there
    # a run of another route, or another day, is not this route's run
    for other in (
        replace(ida, plan=replace(ida.plan, route_id=11)),
        replace(ida, plan=replace(ida.plan, day=date(2026, 3, 3))),
    ):
        assert verdict(other, at(other, 1, 0.99, t0, t0 + 1800)) == there
    # an irrelevant run listed before the clashing one does not end the search
    elsewhere = replace(ida, plan=replace(ida.plan, route_id=11))
    clash = at(ida, 1, 0.99, t0, t0 + 1800)
    assert confirmed(volta, [elsewhere, volta, ida], index(clash), index(there), RULE) is None


def test_totals_of_a_route_no_longer_listed_and_the_code_of_its_last_line() -> None:
    """route_totals lists every route of the contract, and also a route with lines the registry no longer lists;
    the code and declared km shown are those of the route's last line (latest day, then run), else the
    registry's."""
    r1 = run(route_id=12, day=date(2026, 3, 2), run_no=2)
    r2 = run(route_id=12, day=date(2026, 3, 3), run_no=1)
    ls = lines([r1, r2], index(obs(r1, 1, 1.0), obs(r2, 1, 1.0)), {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [])
    ls = [
        replace(ls[0], code="R12-velha", declared_km=D("40.000")),
        replace(ls[1], code="R12", declared_km=D("38.450")),
    ]
    (gone,) = route_totals([], ls)
    assert (gone.route_id, gone.code, gone.declared_km, gone.runs_made) == (12, "R12", D("38.450"), 2)
    assert (gone.payable_km, gone.amount) == (D("76.900"), D("336.06"))
    (listed,) = route_totals([RouteRef(12, "R12-registro", D("50"))], list(reversed(ls)))
    assert (listed.code, listed.declared_km) == ("R12", D("38.450"))
    (bare,) = route_totals([RouteRef(13, "R13", D("12.5"))], [])
    assert (bare.route_id, bare.code, bare.declared_km) == (13, "R13", D("12.5"))
    # sums over no line are decimal zeros, as the document writes them
    for figure in (
        bare.contracted_km,
        bare.realized_km,
        bare.payable_km,
        bare.amount,
        bare.unpaved_km,
        bare.pending_km,
    ):
        assert isinstance(figure, D) and figure == 0


def test_a_judged_line_carries_every_figure_and_a_rule_paying_off_route_km_pays_them() -> None:
    """A run made at 97.00 % with 1.2345 km off the route, under a rule that pays off-route km (payment_rule
    off_route_km_paid): 38.450 + 1.234 = 39.684 km × R$ 4.37 = R$ 173.42; the justification the line shows (none:
    made) and the run's number, fixes and km as observed."""
    r = run(run_no=2, share="1")
    seen = Observation(10, DAY, 2, 1, 0.97, 37.2961, 1.2345, r.plan.start + 60, r.plan.end - 60)
    paying = Terms(D("4.37"), PaymentRule(off_route_km_paid=True))
    (ln,) = lines([r], index(seen), {}, lambda d: paying, VEHICLES, CONTRACTOR, [])
    assert ln == Line(
        DAY, 2, 10, "R10", 1, "AAA1A11", False, False, "made", D("97.00"), D("37.296"), D("1.234"),
        D("38.450"), D("38.450"), D("39.684"), D("4.37"), D("173.42"), r.plan.start + 60, r.plan.end - 60,
    )  # fmt: skip
    # no vehicle assigned that day and nobody seen: judged not made, on nobody
    (nobody,) = lines([replace(r, vehicle_ids=())], {}, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [])
    assert (nobody.status, nobody.vehicle_id, nobody.plate, nobody.amount) == ("not_made", None, None, D("0.00"))
    j = Justification(10, DAY, 2, "ponte caída", "monitor", datetime(2026, 3, 3, 9, tzinfo=UTC))
    (shown,) = lines([r], {}, {}, lambda d: TERMS, VEHICLES, CONTRACTOR, [j])
    assert (shown.status, shown.justified_at, shown.justification_kind) == (
        "justified", datetime(2026, 3, 3, 9, tzinfo=UTC), "nao_realizada")  # fmt: skip
