"""Gathering a contract's boletim from the database: the registry of each day, observations, prices, closings.

Every fact is read for the whole period at once (one query for the assignments, the rollups of every vehicle
and day at once (batch.py), one query for the substitutes' windows...), never per run. The days of a closed month come
from its frozen content (document.py); only the other days are computed.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

from telemetria.contracts import store as calendar_store
from telemetria.contracts.calendar import ScheduleChange, Shift, schedule_changes, school_days, shifts_off
from telemetria.contracts.rule import PaymentRule
from telemetria.db import Conn
from telemetria.http import FieldError
from telemetria.measurement import batch, boletim, document, pavement, plans, schoolday
from telemetria.measurement import queries as q
from telemetria.measurement.boletim import Justification, Line, RouteRef, Terms, VehicleInfo
from telemetria.measurement.document import Closing, Computed, ContractHead
from telemetria.measurement.due import DueRun, days, due_days, due_runs
from telemetria.measurement.model import Observation
from telemetria.reports.analysis.engine import line as route_line
from telemetria.reports.analysis.roads import profile
from telemetria.reports.model import Route
from telemetria.reports.store import asof
from telemetria.reports.store import queries as rq
from telemetria.roads import inforce
from telemetria.roads.model import Roads, in_force_on


async def contracts(conn: Conn, scope: int | None, contract_id: int | None) -> list[ContractHead]:
    rows = await conn.fetch(q.CONTRACTS, scope, contract_id)
    return [ContractHead(r["id"], r["number"], r["contractor_id"], r["contractor"], r["valid_from"], r["valid_to"])
            for r in rows]  # fmt: skip


def month_of(day: date) -> date:
    return day.replace(day=1)


async def _terms(conn: Conn, cid: int, first: date, last: date) -> list[tuple[date, date, Terms]]:
    """The versions applying inside first..last, each clipped to it, in order."""
    out = []
    for r in await conn.fetch(q.TERMS, [cid], first, last):
        during = r["during"]
        lo = max(first, during.lower) if during.lower else first
        hi = min(last, date.fromordinal(during.upper.toordinal() - 1)) if during.upper else last
        second = r["price_per_km_unpaved"]
        out.append((lo, hi, Terms(Decimal(r["price_per_km"]), PaymentRule.from_row(r),
                                  Decimal(second) if second is not None else None)))  # fmt: skip
    return sorted(out, key=lambda t: t[0])


def _terms_on(spans: Sequence[tuple[date, date, Terms]], cid: int) -> Callable[[date], Terms]:
    def on(day: date) -> Terms:
        for lo, hi, t in spans:
            if lo <= day <= hi:
                return t
        sentence = f"o contrato nº {cid} não tem preço em vigor em {day:%d/%m/%Y}"
        raise FieldError(f"contract_id: {sentence}", "contract_id", 409, people=sentence[:1].upper() + sentence[1:])

    return on


@dataclass(frozen=True, slots=True)
class Calendar:
    """The school days of a period, and what the school day was on them (contracts/calendar.py)."""

    days: set[date]
    off: dict[date, frozenset[Shift]]
    changes: dict[tuple[date, Shift], ScheduleChange]

    def follow(self, runs: Sequence[DueRun]) -> list[DueRun]:
        return schoolday.follow(runs, self.off, self.changes)


async def _calendar(conn: Conn, wanted: Sequence[date], where: str) -> Calendar:
    cal = Calendar(set(), {}, {})
    for year in sorted({d.year for d in wanted}):
        sy = await calendar_store.school_year(conn, year)
        if sy is None:
            sentence = (
                f"não há ano letivo {year} cadastrado: cadastre-o antes de medir (PUT /api/v1/school-years/{year})"
            )
            raise FieldError(f"{where}: {sentence}", where, 409, people=sentence[:1].upper() + sentence[1:])
        cal.days.update(school_days(sy))
        cal.off.update(shifts_off(sy))
        cal.changes.update(schedule_changes(sy))
    return cal


async def school_calendar(conn: Conn, wanted: Sequence[date], where: str) -> Calendar:
    """The school days of `wanted`'s years and what each school day was (for a run's window as the day was)."""
    return await _calendar(conn, wanted, where)


async def _others(conn: Conn, runs: Sequence[DueRun], short: Sequence[int], contractor: int) -> dict[int, list[int]]:
    """Run index → the vehicles the contractor had on the run's day, not assigned to it, with a fix in its window."""
    if not short:
        return {}
    starts = [datetime.fromtimestamp(runs[i].plan.start, UTC) for i in short]
    ends = [datetime.fromtimestamp(runs[i].plan.end, UTC) for i in short]
    out: dict[int, list[int]] = {}
    days = [runs[i].plan.day for i in short]
    for r in await conn.fetch(q.WITH_FIXES, list(short), starts, ends, [contractor] * len(short), days):
        if r["vehicle_id"] not in runs[r["i"]].vehicle_ids:
            out.setdefault(r["i"], []).append(r["vehicle_id"])
    return out


async def own_runs(conn: Conn, vehicle_ids: Sequence[int], first: date, last: date, cal: Calendar) -> list[DueRun]:
    """Every run the vehicles were assigned on the school days of first..last, whatever its route or contract.

    What keeps a vehicle from being paid twice for one drive: a substitute candidate that made a run of its own at
    the time (boletim.busy) is not taken, and which runs it made is asked of the whole municipality, never of the
    contract or routes the question is about; so a contract's boletim, a single route's justification and the
    other contract's boletim give the same status to the same run.
    """
    if not vehicle_ids:
        return []
    wanted = set(vehicle_ids)
    route_ids = sorted({r["route_id"] for r in await conn.fetch(rq.ASSIGNMENTS, sorted(wanted), first, last)})
    rows = [a for a in await asof.assignments(conn, route_ids, first, last) if a.vehicle_id in wanted]
    due = due_days(first, last, cal.days, route_ids, rows)
    routes_by_day = {}
    for day in sorted({d for _, d in due}):
        routes_by_day[day] = await asof.routes_on(conn, sorted({r for r, d in due if d == day}), day)
    return cal.follow(due_runs(due, routes_by_day, plans.plan_runs, route_line))


def _claim(run: DueRun, o: Observation) -> tuple[Decimal, float, float, int, int]:
    """How strong a substitute's claim on a run is: its coverage, km along the route, then the earlier run."""
    p = run.plan
    return boletim.pct(o.coverage), o.route_km, -p.start, -p.route_id, -p.run_no


async def rival_claims(
    conn: Conn, runs: Sequence[DueRun], others: Mapping[int, Sequence[int]], obs: Mapping[boletim.ObsKey, Observation],
    first: date, last: date, cal: Calendar,
) -> set[tuple[int, int]]:  # fmt: skip
    """(run index, vehicle) pairs where the vehicle, a substitute candidate, has a stronger claim on another run of
    the municipality at the time (any route, any contract, whatever was asked): one drive is one substitution.

    Another run is a rival when its window overlaps, none of its own vehicles made it (its contract's rule that
    day), and the candidate covered it at least to `partial` and more than its own vehicles did; the candidate
    stands in only for the run it has the strongest claim on (_claim). The same answer for any route subset.
    """
    wanted = {v for vs in others.values() for v in vs}
    if not wanted:
        return set()
    ids = [r["id"] for r in await conn.fetch(q.ALL_ROUTES)]
    due = due_days(first, last, cal.days, ids, await asof.assignments(conn, ids, first, last))
    routes_by_day = {}
    for day in sorted({d for _, d in due}):
        routes_by_day[day] = await asof.routes_on(conn, sorted({r for r, d in due if d == day}), day)
    due = {(r, d): vs for (r, d), vs in due.items() if (x := routes_by_day[d].get(r)) and x.contract_id is not None}
    town = cal.follow(due_runs(due, routes_by_day, plans.plan_runs, route_line))
    key = {i: (runs[i].plan.route_id, runs[i].plan.day, runs[i].plan.run_no) for i in others}
    near: dict[int, list[DueRun]] = {}
    for i in others:
        p = runs[i].plan
        near[i] = [r for r in town if (r.plan.route_id, r.plan.day, r.plan.run_no) != key[i]
                   and r.plan.start < p.end and p.start < r.plan.end]  # fmt: skip
    rivals = {(r.plan.route_id, r.plan.day, r.plan.run_no): r for rs in near.values() for r in rs}
    if not rivals:
        return set()
    contract_of = {k: routes_by_day[k[1]][k[0]].contract_id for k in rivals}
    terms: dict[int, Callable[[date], Terms]] = {}
    for cid in sorted({c for c in contract_of.values() if c is not None}):
        terms[cid] = _terms_on(await _terms(conn, cid, first, last), cid)
    # What the rivals' own vehicles did (most already observed by the caller: the candidates' own runs), then the
    # candidates only on the rivals their own vehicles did not make: observing every candidate on every rival cost
    # 8x the boletim of a fleet with one vehicle kept home (bench.boletim --missed).
    seen = dict(obs)
    seen |= await batch.observations(conn, [(r.plan, v) for k, r in rivals.items() for v in r.vehicle_ids
                                            if (*k, v) not in seen])  # fmt: skip
    short = {k for k, r in rivals.items() if _short(r, seen, contract_of[k], terms)}
    seen |= await batch.observations(conn, [(r.plan, v) for k, r in rivals.items() if k in short for v in wanted
                                            if v not in r.vehicle_ids and (*k, v) not in seen])  # fmt: skip
    out: set[tuple[int, int]] = set()
    for i, vs in others.items():
        for v in vs:
            mine = obs.get((*key[i], v))
            if mine is None:
                continue
            for r in near[i]:
                k = (r.plan.route_id, r.plan.day, r.plan.run_no)
                theirs = seen.get((*k, v))
                owner = contract_of[k]
                if theirs is None or v in r.vehicle_ids or owner is None or k not in short:
                    continue
                rule = terms[owner](r.plan.day).rule
                own = max((boletim.pct(o.coverage) for u in r.vehicle_ids if (o := seen.get((*k, u)))), default=None)
                got = boletim.pct(theirs.coverage)
                if got < rule.partial_min_coverage_pct or (own is not None and got <= own):
                    continue
                if _claim(r, theirs) > _claim(runs[i], mine):
                    out.add((i, v))
                    break
    return out


def _short(
    run: DueRun, seen: Mapping[boletim.ObsKey, Observation], owner: int | None,
    terms: Mapping[int, Callable[[date], Terms]],
) -> bool:  # fmt: skip
    """A rival its own vehicles did not make, by its contract's rule that day (False: not measured that day)."""
    if owner is None:
        return False
    try:
        rule = terms[owner](run.plan.day).rule
    except FieldError:  # no price in force: that run is not measured
        return False
    return boletim.short(run, seen, rule)


async def shares(
    conn: Conn, runs: Sequence[DueRun], routes_by_day: Mapping[date, Mapping[int, Route]],
    terms_on: Callable[[date], Terms],
) -> dict[int, Decimal]:  # fmt: skip
    """Run index → its unpaved share (pavement.share), for the runs whose terms have a second price and that have
    a road network in force on their day: by the route version of that day, its profile kept per line and network.
    """
    wanted = [i for i, r in enumerate(runs) if terms_on(r.plan.day).price_per_km_unpaved is not None]
    if not wanted:
        return {}
    networks, _ = await inforce.in_force(conn)
    built: dict[int, Roads] = {}
    out: dict[int, Decimal] = {}
    for i in wanted:
        p = runs[i].plan
        network = in_force_on(networks, p.day)
        route = routes_by_day.get(p.day, {}).get(p.route_id)
        if network is None or route is None:
            continue
        if network not in built:
            built[network] = await inforce.roads(conn, network)
        _, unpaved_m = profile(route_line(route), built[network]).split(p.m_from, p.m_to)
        out[i] = pavement.share(unpaved_m, abs(p.m_to - p.m_from))
    return out


async def live_lines(
    conn: Conn, head: ContractHead, wanted: Sequence[date], route_ids: Sequence[int],
    spans: Sequence[tuple[date, date, Terms]], where: str = "from", now: float | None = None,
) -> list[Line]:  # fmt: skip
    """The run lines of the days `wanted` (inside the contract's validity), computed from GPS evidence: the runs of
    `route_ids` on the days each belonged to the contract (its version in force that day names it).

    `now` (epoch s): runs whose window has not closed by then are `pending` (boletim.lines); None judges all.
    """
    if not wanted or not route_ids:
        return []
    first, last = min(wanted), max(wanted)
    cal = await _calendar(conn, wanted, where)
    school = cal.days & set(wanted)
    due = due_days(first, last, school, route_ids, await asof.assignments(conn, route_ids, first, last))
    routes_by_day = {}
    for day in sorted({d for _, d in due}):
        routes_by_day[day] = await asof.routes_on(conn, sorted({r for r, d in due if d == day}), day)
    # a route's runs are the contract's on the days its version then in force names the contract (dated membership)
    due = {(r, d): vs for (r, d), vs in due.items() if (x := routes_by_day[d].get(r)) and x.contract_id == head.id}
    runs = cal.follow(due_runs(due, routes_by_day, plans.plan_runs, route_line))
    terms_on = _terms_on(spans, head.id)
    obs = await batch.observations(conn, [(r.plan, v) for r in runs for v in r.vehicle_ids])
    judged = [i for i, r in enumerate(runs) if now is None or r.plan.end <= now]
    missed = [i for i in judged if boletim.short(runs[i], obs, terms_on(runs[i].plan.day).rule)]
    wide = schoolday.widened(runs, missed)
    outside = await batch.observations(conn, [(p, v) for i, p in wide.items() for v in runs[i].vehicle_ids])
    short = [i for i in missed if boletim.off_schedule(runs[i], obs, outside, terms_on(runs[i].plan.day).rule) is None]
    others = await _others(conn, runs, short, head.contractor_id)
    obs |= await batch.observations(conn, [(runs[i].plan, v) for i, vs in others.items() for v in vs])
    theirs = await own_runs(conn, sorted({v for vs in others.values() for v in vs}), first, last, cal)
    obs |= await batch.observations(conn, [(r.plan, v) for r in theirs for v in r.vehicle_ids
                                           if (r.plan.route_id, r.plan.day, r.plan.run_no, v) not in obs])  # fmt: skip
    taken = await rival_claims(conn, runs, others, obs, first, last, cal)
    assigned = sorted({v for r in runs for v in r.vehicle_ids})
    named = sorted({*assigned, *(v for vs in others.values() for v in vs)})  # the substitutes too
    vehicles = {
        r["id"]: VehicleInfo(r["id"], r["plate"], r["active"], r["contractor_id"],
                             tuple(zip(r["los"], r["his"], r["contractors"], strict=True)))
        for r in await conn.fetch(q.VEHICLES, [head.contractor_id], named)
    }  # fmt: skip
    justifications = [
        Justification(r["route_id"], r["day"], r["run_no"], r["reason"], r["created_by"], r["created_at"], r["kind"],
                      r["made_at"])
        for r in await conn.fetch(q.JUSTIFICATIONS, list(route_ids), first, last)
    ]  # fmt: skip
    made_at = {(j.route_id, j.day, j.run_no): j.made_at for j in justifications
               if j.kind == "feito_fora_do_horario" and j.run_no is not None and j.made_at is not None}  # fmt: skip
    moved = schoolday.claimed([runs[i] for i in judged], made_at)
    claimed = await batch.observations(conn, [(p, v) for i, p in moved.items() for v in runs[judged[i]].vehicle_ids])
    unpaved = await shares(conn, runs, routes_by_day, terms_on)
    free = {i: [v for v in vs if (i, v) not in taken] for i, vs in others.items()}
    return boletim.lines(runs, obs, free, terms_on, vehicles, head.contractor_id, justifications, unpaved, now,
                         theirs, outside, claimed)  # fmt: skip


async def closings(conn: Conn, cid: int, first: date, last: date) -> list[Closing]:
    return [
        Closing(r["month"], r["sha256"], r["closed_by"], r["closed_at"], *document.frozen_of(bytes(r["content"])))
        for r in await conn.fetch(q.CLOSED, [cid], first, last)
    ]


async def compute(
    conn: Conn, head: ContractHead, first: date, last: date, *, frozen: bool = True,
    route_ids: Sequence[int] | None = None, where: str = "from", judge_all: bool = False,
) -> Computed:  # fmt: skip
    """The contract's boletim over first..last (inside its validity); closed months as frozen when `frozen`.

    Only what has happened is judged: a run whose window has not closed yet is `pending` (unless `judge_all`: the
    day panel shows how a run of today stands so far).
    """
    now = None if judge_all else time.time()
    refs = sorted(
        (RouteRef(r["id"], r["code"], Decimal(repr(float(r["declared_km"]))).quantize(Decimal("0.001")))
         for r in await conn.fetch(q.CONTRACT_ROUTES_DURING, head.id, first, last)),
        key=lambda r: (r.code, r.route_id),
    )  # fmt: skip
    only = set(route_ids) if route_ids is not None else None
    if only is not None:
        refs = [r for r in refs if r.route_id in only]
    shut = await closings(conn, head.id, first, last) if frozen else []
    shut_months = {c.month for c in shut}
    spans = await _terms(conn, head.id, first, last)
    wanted = [d for d in days(first, last) if month_of(d) not in shut_months]
    lines = await live_lines(conn, head, wanted, [r.route_id for r in refs], spans, where, now)
    for c in shut:  # as closed, even for a route that has left the contract since
        lines += [ln for ln in c.lines if first <= ln.day <= last and (only is None or ln.route_id in only)]
    lines.sort(key=lambda ln: (ln.day, ln.code, ln.route_id, ln.run_no))
    named = {n["network_id"]: n for c in shut for n in c.road_networks}  # closed months: as they were frozen
    named |= await _networks(conn, spans, wanted)
    networks = sorted(named.values(), key=lambda n: (n["effective_from"], n["network_id"]))
    reopened = list(await conn.fetch(q.REOPENED, head.id, first, last)) if frozen else []
    return Computed(head, first, last, refs, lines, spans, shut, networks, reopened)


async def _networks(conn: Conn, spans: Sequence[tuple[date, date, Terms]], wanted: Sequence[date]) -> dict[int, Any]:
    """What names the road networks whose pavement splits the km of the days computed live, by id: none when no
    terms of the period have a second price."""
    if all(t.price_per_km_unpaved is None for _, _, t in spans):
        return {}
    networks, named = await inforce.in_force(conn)
    used = {n for d in wanted if (n := in_force_on(networks, d)) is not None}
    return {n: named[n] for n in used}


async def name_justifications(
    conn: Conn, runs: Sequence[dict[str, Any]], first: date, last: date, closed: set[tuple[int, str]]
) -> None:
    """Give each justified run line of an answer its `justification_id`: the one the boletim shows, as
    boletim._justification picks it (the earliest of that run's or of its whole day's), which the page's
    "Corrigir justificativa" sends its new reason to. Lines without a justification get null, and so do the
    lines of a closed month (`closed`: (contract id, "YYYY-MM")): a closed month's justifications are not
    corrected, and its lines are otherwise served as they were stored (the id is not part of that content)."""
    for r in runs:
        if (r["contract_id"], r["date"][:7]) in closed:
            r["justification_id"] = None
    runs = [r for r in runs if (r["contract_id"], r["date"][:7]) not in closed]
    route_ids = sorted({r["route_id"] for r in runs if r["justification"] is not None})
    rows = await conn.fetch(q.JUSTIFICATION_IDS, route_ids, first, last) if route_ids else []
    by_day: dict[tuple[int, date], list[Any]] = {}
    for row in rows:  # in created_at order: the first that matches is the one shown
        by_day.setdefault((row["route_id"], row["day"]), []).append(row)
    for r in runs:
        found = None
        if r["justification"] is not None:
            key = (r["route_id"], date.fromisoformat(r["date"]))
            found = next((j["id"] for j in by_day.get(key, ()) if j["run_no"] in (None, r["run_no"])), None)
        r["justification_id"] = found


def answer(computed: Sequence[Computed], first: date, last: date, tz: Any) -> dict[str, Any]:
    """The report's JSON: `contracts` (totals per route and contract, prices, rule, months) and `runs`."""
    return {
        "from": first.isoformat(), "to": last.isoformat(), "tz": tz.key,
        "contracts": [document.contract_json(c, tz) for c in computed],
        "runs": [document.line_json(ln, c.head.id, tz) for c in computed for ln in c.lines],
    }  # fmt: skip
