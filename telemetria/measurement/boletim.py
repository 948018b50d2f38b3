"""The boletim de medição of one contract: which vehicle made each due run, its status, km and amount; pure.

For each due run (due.py):
1. The assigned vehicles' observations (observe.py) are compared; the best (coverage, then km along the route)
   is the run's, if it reaches the rule's `made` threshold.
2. Otherwise the contractor's other vehicles with fixes in the run's window are observed too; the best of them
   becomes a **substitution** (flagged) when it covers more than the assigned vehicle did and at least the
   `partial` threshold (a vehicle that only crossed a bit of the route is not taken for the run), and was not
   busy making a run of its own at the time (assigned to it, window overlapping, at least `partial`: one
   vehicle cannot make two runs at once, and routes that share roads would otherwise pay them twice). A substitute
   is flagged `unauthorized` too when it is not authorized for the service: inactive in the registry, or not a
   vehicle of the contract's contractor.
3. Coverage is taken to 0.01 % (half to even); the contract's PaymentRule in force that day gives the status
   (`justified` when a justification exists and the run was not made) and the payable km of the run's
   contracted km (route's declared km × the run's share of the day), to the metre; the amount is payable km ×
   the price in force that day, rounded to the cent once per line. With a second price in force and the run's
   unpaved share known (a road network in force that day), the unpaved part of the payable km is paid at the
   second price (pavement.py). Route and contract totals are sums of lines.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import ROUND_HALF_EVEN, Decimal
from typing import Literal

from telemetria.contracts.money import METRE
from telemetria.contracts.rule import PaymentRule, Status
from telemetria.measurement import pavement
from telemetria.measurement.due import DueRun
from telemetria.measurement.model import Observation, RunPlan

PCT = Decimal("0.01")
ZERO = Decimal(0)
ObsKey = tuple[int, date, int, int]  # route_id, day, run_no, vehicle_id
LineStatus = Status | Literal["pending"]
STATUSES: tuple[Status, ...] = ("made", "partial", "not_made", "justified")  # judged: the totals count these


@dataclass(frozen=True, slots=True)
class Terms:
    """The contract's prices and rule in force on a day."""

    price_per_km: Decimal
    rule: PaymentRule
    price_per_km_unpaved: Decimal | None = None  # the second price, for the unpaved share of a run's km


@dataclass(frozen=True, slots=True)
class VehicleInfo:
    """A vehicle as the boletim names it. `contractor_id`: its contractor today; `spans`: the contractors that had
    it, (first local day or None, day after the last or None, contractor), from vehicle_contractor_spans
    (migrations/0028); empty: `contractor_id` on every day."""

    id: int
    plate: str
    active: bool
    contractor_id: int | None
    spans: tuple[tuple[date | None, date | None, int | None], ...] = ()

    def contractor_on(self, day: date) -> int | None:
        """The contractor that had the vehicle on local `day` (issue 33: attribution by day)."""
        if not self.spans:
            return self.contractor_id
        for lo, hi, contractor in self.spans:
            if (lo is None or lo <= day) and (hi is None or day < hi):
                return contractor
        return None


@dataclass(frozen=True, slots=True)
class Justification:
    route_id: int
    day: date
    run_no: int | None  # None: every run of that day
    reason: str
    created_by: str | None
    created_at: datetime
    # nao_realizada: the run was not made (today's meaning); feito_fora_do_horario: made on its own day outside its
    # window, from `made_at` (local): judged over its window moved there (schoolday.claimed), made only by GPS
    kind: str = "nao_realizada"
    made_at: time | None = None


@dataclass(frozen=True, slots=True)
class Line:
    """One run line of the boletim; every figure as shown (km to the metre, coverage to 0.01 %, R$ to the cent)."""

    day: date
    run_no: int
    route_id: int
    code: str
    vehicle_id: int | None
    plate: str | None
    substitution: bool
    unauthorized: bool
    status: LineStatus
    coverage_pct: Decimal
    realized_km: Decimal
    off_route_km: Decimal
    declared_km: Decimal  # the route's declared km that day
    contracted_km: Decimal  # what this run is worth
    payable_km: Decimal
    price_per_km: Decimal
    amount: Decimal
    first: float | None  # epoch s: first and last fix on the route in the run's window
    last: float | None
    justification: str | None = None
    justified_by: str | None = None
    justified_at: datetime | None = None
    unpaved_km: Decimal = ZERO  # of payable_km, those paid at price_per_km_unpaved (0: no second price or network)
    price_per_km_unpaved: Decimal | None = None  # the second price in force that day, None: the contract has none
    off_schedule: str | None = None  # "early" / "late": made outside its window, on its own day (schoolday.py)
    justification_kind: str | None = None  # the shown justification's kind (nao_realizada, feito_fora_do_horario)


@dataclass(frozen=True, slots=True)
class RouteRef:
    route_id: int
    code: str
    declared_km: Decimal


@dataclass(frozen=True, slots=True)
class RouteTotals:
    route_id: int
    code: str
    declared_km: Decimal
    runs_due: int
    runs_made: int
    runs_partial: int
    runs_not_made: int
    runs_justified: int
    contracted_km: Decimal
    realized_km: Decimal
    payable_km: Decimal
    amount: Decimal
    unpaved_km: Decimal = ZERO
    runs_pending: int = 0  # runs whose window has not closed yet: not in the figures above
    pending_km: Decimal = ZERO  # their contracted km


def pct(coverage: float) -> Decimal:
    """A coverage share (0..1) as a percentage to 0.01 %, half to even, within 0..100."""
    value = Decimal(repr(float(coverage))) * 100
    return min(max(value, ZERO), Decimal(100)).quantize(PCT, rounding=ROUND_HALF_EVEN)


def km(value: float) -> Decimal:
    return Decimal(repr(float(value))).quantize(METRE, rounding=ROUND_HALF_EVEN)


def _key(o: Observation) -> tuple[Decimal, float]:
    return pct(o.coverage), o.route_km


def _best(run: DueRun, vehicle_ids: Iterable[int], obs: Mapping[ObsKey, Observation]) -> Observation | None:
    p = run.plan
    seen = [o for v in vehicle_ids if (o := obs.get((p.route_id, p.day, p.run_no, v))) is not None]
    return max(seen, key=_key, default=None)  # ties: the first (assignment order, then vehicle id)


def short(run: DueRun, obs: Mapping[ObsKey, Observation], rule: PaymentRule) -> bool:
    """Whether no assigned vehicle made the run: then the contractor's other vehicles are looked at."""
    best = _best(run, run.vehicle_ids, obs)
    return best is None or pct(best.coverage) < rule.made_min_coverage_pct


@dataclass(frozen=True, slots=True)
class Choice:
    vehicle_id: int | None
    observation: Observation | None
    substitution: bool


def choose(run: DueRun, obs: Mapping[ObsKey, Observation], others: Sequence[int], rule: PaymentRule) -> Choice:
    """The vehicle whose evidence the run is paid by: an assigned one, or a substitute (see the module's rules)."""
    mine = _best(run, run.vehicle_ids, obs)
    default = run.vehicle_ids[0] if run.vehicle_ids else None
    if mine is not None and pct(mine.coverage) >= rule.made_min_coverage_pct:
        return Choice(mine.vehicle_id, mine, False)
    theirs = _best(run, sorted(set(others) - set(run.vehicle_ids)), obs)
    floor = pct(mine.coverage) if mine is not None else None
    if theirs is not None and pct(theirs.coverage) >= rule.partial_min_coverage_pct:
        if floor is None or pct(theirs.coverage) > floor:
            return Choice(theirs.vehicle_id, theirs, True)
    return Choice(mine.vehicle_id if mine else default, mine, False)


def busy(
    run: DueRun, vehicle_id: int, own: Sequence[DueRun], obs: Mapping[ObsKey, Observation], rule: PaymentRule
) -> bool:
    """Whether `vehicle_id` made (at least partially) a run of its own, `own` (of any route or contract), whose
    window overlaps `run`'s."""
    p = run.plan
    for r in own:
        q = r.plan
        if (q.route_id, q.day, q.run_no) == (p.route_id, p.day, p.run_no):
            continue
        if vehicle_id not in r.vehicle_ids or q.end <= p.start or q.start >= p.end:
            continue
        o = obs.get((q.route_id, q.day, q.run_no, vehicle_id))
        if o is not None and pct(o.coverage) >= rule.partial_min_coverage_pct:
            return True
    return False


def _justification(run: DueRun, by_day: Mapping[tuple[int, date], Sequence[Justification]]) -> Justification | None:
    p = run.plan
    found = [j for j in by_day.get((p.route_id, p.day), ()) if j.run_no is None or j.run_no == p.run_no]
    return min(found, key=lambda j: j.created_at, default=None)


def lines(
    runs: Sequence[DueRun], obs: Mapping[ObsKey, Observation], others: Mapping[int, Sequence[int]],
    terms_on: Callable[[date], Terms], vehicles: Mapping[int, VehicleInfo], contractor_id: int,
    justifications: Iterable[Justification], shares: Mapping[int, Decimal] | None = None, now: float | None = None,
    own: Sequence[DueRun] | None = None, outside: Mapping[ObsKey, Observation] | None = None,
    claimed: Mapping[ObsKey, Observation] | None = None,
) -> list[Line]:  # fmt: skip
    """The boletim's run lines, in the order of `runs`.

    `others`: index in `runs` → the contractor's other vehicles with fixes in that run's window (only for the
    runs that were `short`). `terms_on(day)`: the prices and rule in force that day. `shares`: index in `runs` →
    the run's unpaved share (pavement.share), for the runs with a road network in force that day; a run without
    one, or whose terms have no second price, is paid every km at price_per_km. `now` (epoch s): a run whose
    window has not closed by then is `pending`: shown with what its assigned vehicles did so far, paid nothing and
    left out of the totals (route_totals), never given to a substitute nor justified. None: every run is judged.
    `own`: the runs the substitute candidates were assigned that period, of every route and contract
    (store.own_runs); a candidate that made one of them at the time is busy. None: `runs` only. `outside`: what
    the assigned vehicles did of a run over its own day outside its window (schoolday.widened); a run they made
    there is made, flagged `early` or `late`, and no substitute is looked for. `claimed`: what the assigned
    vehicles did of a run over the window a `feito_fora_do_horario` justification moved it to
    (schoolday.claimed): when that reaches `made` in a drive not already another run of the route that day
    (`confirmed`), the run is made there (flagged early or late, the justification shown); else the claim is not
    borne out by the GPS and the run is judged as if it had no justification.
    """
    by_day: dict[tuple[int, date], list[Justification]] = {}
    for j in justifications:
        by_day.setdefault((j.route_id, j.day), []).append(j)
    by_vehicle: dict[int, list[DueRun]] = {}
    for run in [*runs, *own] if own is not None else runs:
        for vid in run.vehicle_ids:
            by_vehicle.setdefault(vid, []).append(run)
    out = []
    for i, run in enumerate(runs):
        terms = terms_on(run.plan.day)
        rule = terms.rule
        if now is not None and run.plan.end > now:
            out.append(_pending(run, obs, terms, vehicles))
            continue
        just = _justification(run, by_day)
        there = None
        if just is not None and just.kind == "feito_fora_do_horario":
            there = confirmed(run, runs, obs, claimed or {}, rule)
            if there is None:
                just = None  # the GPS does not bear the claim out: judged as a run without justification
        moved = there or (off_schedule(run, obs, outside, rule) if outside else None)
        if moved is not None:
            pick, when = Choice(moved.vehicle_id, moved, False), _when(run, moved)
        else:
            free = [x for x in others.get(i, ()) if not busy(run, x, by_vehicle.get(x, ()), obs, rule)]
            pick, when = choose(run, obs, free, rule), None
        o = pick.observation
        coverage = pct(o.coverage) if o else ZERO
        status = rule.status(coverage, just is not None and there is None)
        off = km(o.off_route_km) if o else ZERO
        payable = rule.payable_km(status, coverage, run.contracted_km, off).quantize(METRE, rounding=ROUND_HALF_EVEN)
        v = vehicles.get(pick.vehicle_id) if pick.vehicle_id is not None else None
        # a substitute is the holder's own when the holder had it on the run's day, whoever has it today
        unauthorized = pick.substitution and (
            v is None or not v.active or v.contractor_on(run.plan.day) != contractor_id
        )
        shown = just if status == "justified" or there is not None else None
        u = shares.get(i) if shares else None
        second = terms.price_per_km_unpaved
        if second is not None and u is not None:
            paved, unpaved = pavement.split(payable, u)
            amount = pavement.amount(paved, unpaved, terms.price_per_km, second)
        else:
            unpaved, amount = ZERO, rule.amount(payable, terms.price_per_km)
        out.append(
            Line(
                run.plan.day, run.plan.run_no, run.plan.route_id, run.code, pick.vehicle_id, v.plate if v else None,
                pick.substitution, unauthorized, status, coverage, km(o.route_km) if o else ZERO, off,
                run.declared_km, run.contracted_km, payable, terms.price_per_km, amount, o.first if o else None,
                o.last if o else None, shown.reason if shown else None, shown.created_by if shown else None,
                shown.created_at if shown else None, unpaved, second, when, shown.kind if shown else None,
            )
        )  # fmt: skip
    return out


def off_schedule(
    run: DueRun, obs: Mapping[ObsKey, Observation], outside: Mapping[ObsKey, Observation], rule: PaymentRule
) -> Observation | None:
    """The assigned vehicles' evidence of the run outside its window, when they did not make it inside but did
    there (at least `made`)."""
    mine = _best(run, run.vehicle_ids, obs)
    if mine is not None and pct(mine.coverage) >= rule.made_min_coverage_pct:
        return None
    there = _best(run, run.vehicle_ids, outside)
    return there if there is not None and pct(there.coverage) >= rule.made_min_coverage_pct else None


def confirmed(
    run: DueRun, runs: Sequence[DueRun], obs: Mapping[ObsKey, Observation], claimed: Mapping[ObsKey, Observation],
    rule: PaymentRule,
) -> Observation | None:  # fmt: skip
    """The assigned vehicles' evidence of a run claimed `feito_fora_do_horario`, when they did not make it in its
    window but did in the claimed one (at least `made`), in a drive that is not another run of the route that day
    over a shared stretch of the route (its first-to-last fix on the route overlapping theirs, at least
    `partial`): one drive is paid once. Runs over disjoint stretches (the ida and the volta of a loop) never share
    a km, so the volta made during the ida's window is not that drive."""
    mine = _best(run, run.vehicle_ids, obs)
    if mine is not None and pct(mine.coverage) >= rule.made_min_coverage_pct:
        return None
    p = run.plan
    ok = []
    for vid in run.vehicle_ids:
        o = claimed.get((p.route_id, p.day, p.run_no, vid))
        if o is None or o.first is None or o.last is None or pct(o.coverage) < rule.made_min_coverage_pct:
            continue
        clash = False
        for r in runs:
            q = r.plan
            if (q.route_id, q.day) != (p.route_id, p.day) or q.run_no == p.run_no or not _shared(p, q):
                continue
            x = obs.get((q.route_id, q.day, q.run_no, vid))
            if (
                x is not None
                and x.first is not None
                and x.last is not None
                and pct(x.coverage) >= rule.partial_min_coverage_pct
                and x.first <= o.last
                and o.first <= x.last
            ):
                clash = True
        if not clash:
            ok.append(o)
    return max(ok, key=lambda o: (o.coverage, o.route_km), default=None)


def _shared(p: RunPlan, q: RunPlan) -> bool:
    """Whether two runs' stretches of the route overlap (more than a point)."""
    a0, a1 = sorted((p.m_from, p.m_to))
    b0, b1 = sorted((q.m_from, q.m_to))
    return min(a1, b1) > max(a0, b0)


def _when(run: DueRun, o: Observation) -> str:
    return "early" if o.first is not None and o.first < run.plan.start else "late"


def _pending(run: DueRun, obs: Mapping[ObsKey, Observation], terms: Terms, vehicles: Mapping[int, VehicleInfo]) -> Line:
    """A run whose window has not closed: what its assigned vehicles show so far, nothing payable."""
    o = _best(run, run.vehicle_ids, obs)
    vid = o.vehicle_id if o else run.vehicle_ids[0] if run.vehicle_ids else None
    v = vehicles.get(vid) if vid is not None else None
    return Line(
        run.plan.day, run.plan.run_no, run.plan.route_id, run.code, vid, v.plate if v else None, False, False,
        "pending", pct(o.coverage) if o else ZERO, km(o.route_km) if o else ZERO, km(o.off_route_km) if o else ZERO,
        run.declared_km, run.contracted_km, ZERO.quantize(METRE), terms.price_per_km, ZERO.quantize(PCT),
        o.first if o else None, o.last if o else None, price_per_km_unpaved=terms.price_per_km_unpaved,
    )  # fmt: skip


def route_totals(routes: Sequence[RouteRef], run_lines: Sequence[Line]) -> list[RouteTotals]:
    """Per route, sums of its lines (every route of the contract listed, in code order; zeros without runs).

    The code and declared km shown are those of the route's last run line in the period (else the registry's).
    Pending lines are counted apart (runs_pending, pending_km), never in the judged figures.
    """
    refs = {r.route_id: r for r in routes}
    groups: dict[int, list[Line]] = {r.route_id: [] for r in routes}
    for ln in run_lines:
        groups.setdefault(ln.route_id, []).append(ln)
    out = []
    for route_id, mine in groups.items():
        last = max(mine, key=lambda ln: (ln.day, ln.run_no), default=None)
        ref = refs.get(route_id)
        code = last.code if last else ref.code if ref else str(route_id)
        declared_km = last.declared_km if last else ref.declared_km if ref else ZERO
        later = [ln for ln in mine if ln.status == "pending"]
        judged = [ln for ln in mine if ln.status != "pending"]
        count = {s: sum(ln.status == s for ln in judged) for s in STATUSES}
        out.append(
            RouteTotals(
                route_id, code, declared_km, len(judged), count["made"], count["partial"], count["not_made"],
                count["justified"], sum((ln.contracted_km for ln in judged), ZERO),
                sum((ln.realized_km for ln in judged), ZERO), sum((ln.payable_km for ln in judged), ZERO),
                sum((ln.amount for ln in judged), ZERO), sum((ln.unpaved_km for ln in judged), ZERO),
                len(later), sum((ln.contracted_km for ln in later), ZERO),
            )
        )  # fmt: skip
    return sorted(out, key=lambda t: (t.code, t.route_id))
