"""The detection rules: what the reports' engine derives from a vehicle's day, the day's runs and the gaps between
fixes, as occurrence candidates (pure; docs/occurrences.md says how each kind is found and why).

Every rule reads the Analysis of one whole local day (reports/analysis/engine.py: the fixes with context, by fix
time, with the registry of that day) and gives the candidates that START inside it; the caller keeps those of
its window. Nothing here re-derives what the engine derives: speeding episodes, deviations, classified stops and
on-board legs are the engine's, runs and visits are reports/analysis/schedule.py's, run plans the measurement's.

`now` (epoch s) matters only for what is still going on: an episode whose last fix is the newest one, while the
tracker is not yet silent, has end=None; a silence with no fix after it yet is live (end=None).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np

from telemetria.geo.geodesic import distance_m
from telemetria.measurement.model import RunPlan
from telemetria.occurrences.model import Candidate, Kind
from telemetria.occurrences.params import DetectParams
from telemetria.reports.analysis import places, stops
from telemetria.reports.analysis.engine import Analysis, points_of
from telemetria.reports.analysis.schedule import PASSED, SERVED, SKIPPED, Run, scheduled_at
from telemetria.reports.analysis.track import FloatArray, utc
from telemetria.reports.model import Route


def iso(t: float) -> str:
    """Epoch seconds as ISO 8601 UTC with its offset, whole seconds (fixes carry no more)."""
    return utc(round(t)).isoformat()


def completing(t: FloatArray, at: float) -> float | None:
    """The fix time of the first fix at or after `at` (epoch s): the fix whose arrival made a candidate known."""
    k = int(np.searchsorted(t, at - 1e-6))
    return float(t[k]) if k < len(t) else None


def _last_kept(a: Analysis) -> int | None:
    k = np.flatnonzero(a.keep)
    return int(k[-1]) if len(k) else None


def _ongoing(a: Analysis, last: int, now: float, params: DetectParams) -> bool:
    """Whether an episode ending at fix `last` may still be going on: no kept fix after it, and the tracker has not
    been silent since (a silence, estimated as `silences` does, ends every episode at its last fix)."""
    quiet = now - float(a.track.t[last]) - fix_interval(a.track.t, params.report.gap_s) / 2
    return last == _last_kept(a) and quiet <= params.silent_s


def _qualifying(
    t: FloatArray, members: np.ndarray, min_fixes: int, min_s: float, start: float, after: float | None
) -> float:
    """The fix time at which a run of `members` estimated to start at `start` (epoch s: episodes.py's midpoint) first
    had min_fixes fixes and lasted min_s seconds: a member lasting that long since `start`, else the fix after the
    run (`after`: it gave the estimated end), else its last member."""
    for j in range(len(members)):
        if j + 1 >= min_fixes and t[members[j]] - start >= min_s:
            return float(t[members[j]])
    return float(t[members[-1]]) if after is None else after


def bounds(x: Any) -> dict[str, str]:
    """The bounds of an episode's start and end (start_min ≤ start ≤ start_max, end_min ≤ end ≤ end_max: the fixes
    around it and its first and last fixes, reports/analysis/episodes.py and stops.py) as facts, ISO 8601 UTC; a
    side no fix bounds (a silence, the track's ends) is left out."""
    names = ("start_min", "start_max", "end_min", "end_max")
    return {k: iso(v) for k in names if (v := getattr(x, k)) is not None}


def _place(a: Analysis, i: int) -> str | None:
    text: str | None = places.place(a, i)["place"]
    return text


def _route_at(a: Analysis, i: int) -> int | None:
    """The route whose line fix i follows (within its tolerance), if any."""
    r = int(a.near[i])
    return a.routes[r].id if r >= 0 and a.offset_m[i] <= a.routes[r].tolerance_m else None


def speeding(a: Analysis, now: float, params: DetectParams) -> list[Candidate]:
    """Each speeding episode of the engine (above the limit in force for ≥ speeding_min_s and ≥ speeding_min_fixes)."""
    rp, t = params.report, a.track.t
    out = []
    for e in a.speeding:
        m = np.arange(e.first, e.last + 1)
        m = m[a.keep[m] & (a.speed_kmh[m] > a.limit_kmh[m])]
        out.append(
            Candidate(
                Kind.SPEEDING, a.vehicle.id, utc(e.start), None if _ongoing(a, e.last, now, params) else utc(e.end),
                route_id=_route_at(a, e.i_max), lat=float(a.track.lat[e.i_max]), lon=float(a.track.lon[e.i_max]),
                place=_place(a, e.i_max),
                facts={"max_kmh": round(e.max_kmh, 1), "limit_kmh": round(e.limit_kmh, 1),
                       "over_kmh": round(e.max_kmh - e.limit_kmh, 1), "duration_s": round(e.duration_s),
                       "km": round(a.km_between(e.first, e.last), 3), **bounds(e)},
                completed_ts=utc(_qualifying(t, m, rp.speeding_min_fixes, rp.speeding_min_s, e.start, e.end_max)),
            )
        )  # fmt: skip
    return out


def deviations(a: Analysis, now: float, params: DetectParams) -> list[Candidate]:
    """Each deviation episode of the engine: off every route assigned that day beyond its tolerance, long enough,
    overlapping a run window with pupils on board (Art. 26 forbids other itineraries "conduzindo passageiros").

    route_id is the route it left (the nearest route at the last on-route fix before it, else at its first fix);
    lat/lon are the farthest fix's; `place` is where it left the route.
    """
    rp, t = params.report, a.track.t
    out = []
    for e in a.deviations:
        if not on_board_at(a, e.start, e.end):  # Art. 26: other itineraries *while carrying passengers*
            continue
        at = e.left if e.left is not None else e.first
        r = a.routes[int(a.near[at])] if a.near[at] >= 0 else a.routes[int(a.near[e.i_max])]
        m = np.arange(e.first, e.last + 1)
        m = m[a.keep[m] & (a.offset_m[m] > r.tolerance_m)]
        out.append(
            Candidate(
                Kind.ROUTE_DEVIATION, a.vehicle.id, utc(e.start),
                None if _ongoing(a, e.last, now, params) else utc(e.end), route_id=r.id,
                lat=float(a.track.lat[e.i_max]), lon=float(a.track.lon[e.i_max]), place=_place(a, at),
                facts={"max_off_m": round(e.max_distance_m, 1), "tolerance_m": round(r.tolerance_m, 1),
                       "duration_s": round(e.duration_s), "km": round(a.km_between(e.first, e.last), 3),
                       **bounds(e)},
                completed_ts=utc(_qualifying(t, m if len(m) else np.array([e.first, e.last]),
                                             rp.deviation_min_fixes, rp.deviation_min_s, e.start, e.end_max)),
            )
        )  # fmt: skip
    return out


def on_board_at(a: Analysis, start: float, end: float) -> bool:
    """Whether [start, end] overlaps a run window with pupils on board: an on-board leg of the engine, between the
    first boarding and the school, or between the school and the last drop-off."""
    return any(leg.start <= end and start <= leg.end for leg in a.legs)


def unauthorized_stops(a: Analysis, now: float, params: DetectParams) -> list[Candidate]:
    """Each stop of the engine farther than authorized_radius_m from every registered point of the day's routes,
    lasting ≥ unauthorized_stop_min_s, that starts during a run with pupils on board (Art. 38 IX: stopping for
    boarding or alighting where not authorized; an empty bus parked after its run is no such stop); none on a day
    the vehicle has no route assigned (nothing is authorized)."""
    if not a.routes:
        return []
    out = []
    for c in a.stops:
        s = c.stop
        if c.authorized or s.duration_s < params.unauthorized_stop_min_s or not on_board_at(a, s.start, s.start):
            continue
        near = c.point is not None and math.isfinite(c.distance_m)
        out.append(
            Candidate(
                Kind.UNAUTHORIZED_STOP, a.vehicle.id, utc(s.start),
                None if _ongoing(a, s.last, now, params) else utc(s.end),
                route_id=c.point.route_id if near and c.point else None, lat=s.lat, lon=s.lon,
                place=_place(a, s.first),
                facts={"duration_s": round(s.duration_s), "nearest_stop": c.point.name if near and c.point else None,
                       "nearest_m": round(c.distance_m, 1) if near else None, "ignition_off": s.ignition_off,
                       **bounds(s)},
                completed_ts=utc(completing(a.track.t, s.start + params.unauthorized_stop_min_s) or s.end),
            )
        )  # fmt: skip
    return out


def on_board(a: Analysis, params: DetectParams) -> list[Candidate]:
    """Each on-board leg of the engine (first boarding stop → school, school → last drop-off) of onboard_max_s or
    more (Art. 9 §1 wants it under 2 h), measured between the stops' estimated instants (issue 34), with their
    bounds."""
    legs = [leg for leg in a.legs if leg.over]
    if not legs:
        return []
    # The legs' stop indexes refer to the engine's short stops as classified against the day's points.
    classified = stops.classify(a.short_stops, points_of(a.routes), params.report.authorized_radius_m)
    out = []
    for leg in legs:
        a0, b0 = classified[leg.from_stop], classified[leg.to_stop]
        where = a0.stop.first if leg.kind == "to_school" else a0.stop.last
        out.append(
            Candidate(
                Kind.OVER_2H_ON_BOARD, a.vehicle.id, utc(leg.start), utc(leg.end),
                route_id=a0.point.route_id if a0.point else None, lat=a0.stop.lat, lon=a0.stop.lon,
                place=_place(a, where),
                facts={"minutes": round(leg.duration_s / 60.0, 1), "from": a0.point.name if a0.point else None,
                       "to": b0.point.name if b0.point else None, "leg": leg.kind, **bounds(leg)},
                completed_ts=utc(completing(a.track.t, leg.start + params.report.onboard_max_s) or leg.end),
            )
        )  # fmt: skip
    return out


def run_key(route_id: int, day: date, run_no: int) -> str:
    """The natural key of a run's occurrences: "route:day:run_no"."""
    return f"{route_id}:{day.isoformat()}:{run_no}"


def _plan_of(plans: Sequence[RunPlan], at: float) -> RunPlan | None:
    return next((p for p in plans if p.start <= at < p.end), None)


def _observed(kept: FloatArray, at: float, departure: bool, gap_s: float) -> bool:
    """Whether the instant a stop was reached (`at`) is known from the fixes: an arrival whose fix before came more
    than gap_s earlier, or a departure whose fix after came more than gap_s later, happened somewhere in a gap
    (the vehicle may have been there on time), so it is no evidence of lateness."""
    if departure:
        k = int(np.searchsorted(kept, at, side="right"))
        return k < len(kept) and float(kept[k]) - at <= gap_s
    k = int(np.searchsorted(kept, at, side="left"))
    return k > 0 and at - float(kept[k - 1]) <= gap_s


def schedule_delays(
    a: Analysis, day: date, runs: Sequence[tuple[Route, Run]], plans: Mapping[int, Sequence[RunPlan]],
    params: DetectParams,
) -> list[Candidate]:  # fmt: skip
    """One candidate per run (the measurement's run plans, by scheduled time) off its schedule (Art. 37 XI): stops
    reached more than delay_tolerance_min after their scheduled time (schedule.py's visits, served or passed: the
    departure from the run's first scheduled point, the arrival at the others), inside the run's window (a vehicle
    that sat in its garage past the window did not make the run late: it did not make it), or boarding stops left
    more than early_tolerance_min before their scheduled time (pupils left behind), or boarding stops skipped on a
    run otherwise made (its school served, or at least half its boarding stops: a run not made is run_not_made's,
    judged once), seen skipped when a later point was reached; each seen by the fixes, not across a gap. It
    starts at the first such stop (reached late, left early, or the arrival at the point after a skipped one) and
    ends at the last."""
    tol_s = params.delay_tolerance_min * 60.0
    early_s = params.early_tolerance_min * 60.0
    kept = a.track.t[a.keep]
    out = []
    for route, run in runs:
        late: dict[int, list[tuple[int, float, float]]] = {}  # run_no → (visit, scheduled, reached)
        early: dict[int, list[tuple[int, float, float]]] = {}  # run_no → (visit, scheduled, departed)
        skipped = _skipped(
            run, plans.get(route.id, ()), kept, params.report.gap_s
        )  # run_no → (visit, scheduled, seen skipped at)
        begun: set[int] = set()  # runs whose first point has been seen
        for i, v in enumerate(run.visits):
            sched = run.scheduled[i]
            plan = _plan_of(plans.get(route.id, ()), sched) if sched is not None else None
            if plan is None or sched is None:
                continue
            first = plan.run_no not in begun
            begun.add(plan.run_no)
            reached = v.departure if first else v.arrival
            if (
                v.status in (SERVED, PASSED) and reached is not None and reached - sched > tol_s
                and reached <= plan.end and _observed(kept, reached, first, params.report.gap_s)
            ):  # fmt: skip
                late.setdefault(plan.run_no, []).append((i, sched, reached))
            left = v.departure
            if (
                not first and v.status == SERVED and v.point.kind == "boarding" and left is not None
                and sched - left > early_s and left >= plan.start and _observed(kept, left, True, params.report.gap_s)
            ):  # fmt: skip
                early.setdefault(plan.run_no, []).append((i, sched, left))
        for run_no in sorted(set(late) | set(early) | set(skipped)):
            found, gone, missed = late.get(run_no, []), early.get(run_no, []), skipped.get(run_no, [])
            facts: dict[str, Any] = {}
            if found:
                i, sched, reached = found[0]
                p = run.visits[i].point
                facts = {"stop": p.name, "scheduled": iso(sched), "arrived": iso(reached),
                         "late_min": round((reached - sched) / 60.0, 1),
                         "max_late_min": round(max(r - s for _, s, r in found) / 60.0, 1),
                         "late_stops": len(found)}  # fmt: skip
            if gone:
                facts |= {"early_stop": run.visits[gone[0][0]].point.name, "early_scheduled": iso(gone[0][1]),
                          "departed": iso(gone[0][2]), "early_min": round((gone[0][1] - gone[0][2]) / 60.0, 1),
                          "early_stops": len(gone)}  # fmt: skip
            if missed:
                facts["skipped_stops"] = [run.visits[k].point.name for k, _, _ in missed]
            times = [r for _, _, r in found] + [d for _, _, d in gone] + [t for _, _, t in missed]
            start = min(times)
            i = next(k for k, _, r in found + gone + missed if r == start)
            p = run.visits[i].point
            out.append(
                Candidate(
                    Kind.SCHEDULE_DELAY, a.vehicle.id, utc(start), utc(max(times)),
                    route_id=route.id, run_no=run_no, key=run_key(route.id, day, run_no), lat=p.lat, lon=p.lon,
                    place=f"{p.name} (rota {route.code})", facts=facts,
                    completed_ts=utc(completing(a.track.t, start) or start),
                )
            )  # fmt: skip
    return out


def _skipped(
    run: Run, plans: Sequence[RunPlan], kept: FloatArray, gap_s: float
) -> dict[int, list[tuple[int, float, float]]]:
    """run_no → the boarding visits skipped on a run plan otherwise made, each with its scheduled time and the
    arrival at the next point reached after it (when the skip became evident). Only where the fixes saw the whole
    way from the point reached before to the one after (no gap over gap_s: the tracker silent is no skip)."""
    out: dict[int, list[tuple[int, float, float]]] = {}
    for plan in plans:
        idx = [i for i, s in enumerate(run.scheduled) if s is not None and plan.start <= s < plan.end]
        visits = [run.visits[i] for i in idx]
        boarding = [v for v in visits if v.point.kind == "boarding"]
        served = sum(v.status == SERVED for v in boarding)
        made = any(v.status == SERVED and v.point.kind == "school" for v in visits) or (
            bool(boarding) and 2 * served >= len(boarding)
        )
        if not made:
            continue
        for n, i in enumerate(idx):
            v = run.visits[i]
            if v.status != SKIPPED or v.point.kind != "boarding":
                continue
            later = [run.visits[k].arrival for k in idx[n + 1 :] if run.visits[k].status in (SERVED, PASSED)]
            seen = next((t for t in later if t is not None), None)
            before = [run.visits[k].departure for k in idx[:n] if run.visits[k].status in (SERVED, PASSED)]
            since = next((t for t in reversed(before) if t is not None), plan.start)
            sched = run.scheduled[i]
            if seen is None or sched is None:
                continue
            way = kept[(kept >= since) & (kept <= seen)]
            if len(way) >= 2 and float(np.max(np.diff(way))) <= gap_s:
                out.setdefault(plan.run_no, []).append((i, sched, seen))
    return out


@dataclass(frozen=True, slots=True)
class DueSpan:
    """A due run of a route assigned to the vehicle: its plan's window and the scheduled span inside it (epoch s).

    The tracker must report while the vehicle serves (Art. 15): from the run's first scheduled time until it
    reached the run's last point (until it does, to the end of the run's window).
    """

    route_id: int
    run_no: int
    window_start: float
    window_end: float
    start: float
    end: float


def due_spans(
    route: Route, plans: Sequence[RunPlan], day: date, run: Run | None = None, now: float | None = None
) -> list[DueSpan]:
    """The due spans of a route's runs on a due day: from each run plan's first scheduled time to the vehicle's
    arrival at the run's last point (`run`: schedule.py's run of the route that day), early or late, or while it
    has not arrived there, to the end of the run's window (it may still be on its way). A run with a single
    scheduled time inside its window is due too (Art. 15 §1 XII: a fix every 30 s while the vehicle serves; a
    timetable may give only the school's time): from that time to the arrival at that point, or while it has not
    arrived, to the window's end. A span that would end at or before its start (arrived at or before the first
    scheduled time) is none.

    A run whose window ended (before `now`) with none of its points reached has no span either: it is judged as a
    run (run_not_made, or justified), and a tracker_silent beside it would charge the same event twice (issue 32).
    While its window is open, the span stands (a live silence), and the silence is withdrawn once it ends."""
    pts = sorted(route.points, key=lambda p: p.seq)
    times = [scheduled_at(p, day) for p in pts]
    reached: list[float | None] = [None] * len(pts)
    if run is not None and len(run.visits) == len(pts):
        reached = [v.arrival if v.status in (SERVED, PASSED) else None for v in run.visits]
    out = []
    for plan in plans:
        inside = [i for i, s in enumerate(times) if s is not None and plan.start <= s < plan.end]
        if not inside:
            continue
        first, last = times[inside[0]], times[inside[-1]]
        assert first is not None and last is not None
        nothing = run is None or all(reached[i] is None for i in inside)
        if now is not None and plan.end <= now and nothing:
            continue  # no point of the ended run reached: it is judged as a run (run_not_made or justified)
        done = reached[inside[-1]]
        end = done if done is not None else max(last, plan.end)
        if end > first:
            out.append(DueSpan(route.id, plan.run_no, plan.start, plan.end, first, end))
    return out


@dataclass(frozen=True, slots=True)
class Edge:
    """A fix of the vehicle just outside its track (epoch s, degrees): the last one before it or the first after."""

    t: float
    lat: float
    lon: float


def _position(a: Analysis, k: int, step: int) -> tuple[float, float]:
    """The position of the kept fix nearest to k in direction `step` (k itself if kept; the raw fix if none is)."""
    j = k
    while 0 <= j < len(a.track):
        if a.keep[j]:
            return float(a.track.lat[j]), float(a.track.lon[j])
        j += step
    return float(a.track.lat[k]), float(a.track.lon[k])


def _due(spans: Sequence[DueSpan], lo: float, hi: float, silent_s: float) -> DueSpan | None:
    """The first due span of which more than silent_s lies inside the silence (lo, hi)."""
    return next((s for s in sorted(spans, key=lambda s: s.start) if min(hi, s.end) - max(lo, s.start) > silent_s), None)


Fixed = tuple[float, int | Edge]  # t, and the index in the track or the Edge it is


@dataclass(frozen=True, slots=True)
class _Edges:
    """The vehicle's fixes around and in its track, in time order: `t` all their times, `at(i)` the i-th one (the
    Fixed is made for the few fixes a silence needs, not for every fix of a long day)."""

    a: Analysis
    before: Edge | None
    after: Edge | None

    @property
    def t(self) -> FloatArray:
        head = [] if self.before is None else [self.before.t]
        tail = [] if self.after is None else [self.after.t]
        return np.concatenate([np.array(head, dtype=float), self.a.track.t, np.array(tail, dtype=float)])

    def at(self, i: int) -> Fixed:
        k = i - (self.before is not None)
        if k < 0:
            assert self.before is not None
            return self.before.t, self.before
        if k < len(self.a.track):
            return float(self.a.track.t[k]), k
        assert self.after is not None
        return self.after.t, self.after


def _where(a: Analysis, f: Fixed, step: int) -> tuple[float, float]:
    """lat, lon of a fix; in the track, of the nearest kept fix in direction `step` (outliers say nothing)."""
    at = f[1]
    return (at.lat, at.lon) if isinstance(at, Edge) else _position(a, at, step)


LEGAL_INTERVAL_S = 30.0  # Art. 15 § 1º XII: a fix at least every 30 s


def fix_interval(times: FloatArray, gap_s: float) -> float:
    """The tracker's own interval between fixes (s): the median of its consecutive fixes' intervals that are no gap
    (0 < dt ≤ gap_s); the law's 30 s when there are none."""
    d = np.diff(times)
    d = d[(d > 0) & (d <= gap_s)]
    return float(np.median(d)) if len(d) else LEGAL_INTERVAL_S


def silences(
    a: Analysis, before: Edge | None, after: Edge | None, spans: Sequence[DueSpan], now: float, params: DetectParams
) -> list[Candidate]:
    """The tracker's silences starting inside the analysis's day: gaps between consecutive fixes (any fix: the
    tracker spoke) longer than silent_s of which more than silent_s lies inside a due span of the day (`spans`):
    never while no run is due (issue 32: moving across a gap off duty is no infraction), and never for a run of
    which no point was reached (due_spans leaves it out: it is judged as a run, run_not_made or justified).
    `before`/`after`: the vehicle's fixes just outside
    its track (None: there is none, or the track reaches past the day on that side).

    Without the one-interval bias (issue 34): the tracker, sending every `step` seconds (fix_interval), stopped
    somewhere between the last fix before the gap and the next one it would have sent, and resumed between the
    send before the first fix after it and that fix. So a silence starts at the midpoint `ta + step/2` (bounds:
    the last fix `ta` and `ta + step`) and ends at `hi - step/2` (bounds: `hi - step` and the first fix after it,
    `hi`), and it is that estimate (the gap less one interval) which must exceed silent_s, inside a due span: the
    gap between the fixes, `gap_s` in its facts, reads one interval long on average. One that began before the day
    (the vehicle had not reported since yesterday) counts for the day only by its due spans, from the first span
    it silences (that instant is exact: no bounds). With no fix after it yet a due silence is live: end=None, up to
    `now`.
    """
    fixes = _Edges(a, before, after)
    times = fixes.t
    step = fix_interval(times, params.report.gap_s)
    # Gap k lies between fixes k-1 and k: (None, first) is the time before the vehicle's first fix ever (as far as
    # we looked), (last, None) the time since its last one, up to now. Only gaps whose estimate is longer than
    # silent_s are looked at (half an interval off each side a fix bounds: the end `now` is no fix), and of them
    # those ending before the day or starting after it (the context's, and those beyond `before`/`after`) are left
    # out below.
    bounds = np.concatenate([[-math.inf], times, [now]])
    less = np.full(len(bounds) - 1, step)
    less[-1] = step / 2
    out = []
    for g in np.flatnonzero(np.diff(bounds) - less > params.silent_s).tolist():
        f0 = fixes.at(g - 1) if g > 0 else None
        f1 = fixes.at(g) if g < len(times) else None
        ta = f0[0] if f0 is not None else -math.inf
        hi = f1[0] if f1 is not None else now
        if ta >= a.end or hi <= a.start:
            continue
        lo_est = ta + step / 2  # -inf with no fix before
        hi_est = hi - step / 2 if f1 is not None else now
        due = _due(spans, lo_est, hi_est, params.silent_s)
        p0 = _where(a, f0, -1) if f0 is not None else None
        p1 = _where(a, f1, 1) if f1 is not None else None
        moved = float(distance_m(p0[1], p0[0], p1[1], p1[0])) if p0 is not None and p1 is not None else None
        if ta >= a.start:
            if due is None:  # never while no run is due (issue 32): a parked or off-duty tracker owes nothing
                continue
            start = lo_est
        elif due is not None:
            start = max(lo_est, due.start)
        else:
            continue
        if f1 is None:
            facts: dict[str, Any] = {"since": iso(ta) if f0 is not None else None}
        else:
            facts = {"gap_s": round(hi - ta) if f0 is not None else None,
                     "moved_m": round(moved, 1) if moved is not None else None,
                     "end_min": iso(hi - step), "end_max": iso(hi)}  # fmt: skip
        if start == lo_est:  # from the fixes, not from a run's start
            facts |= {"start_min": iso(ta), "start_max": iso(ta + step)}
        # Where: the last fix before it, or for one that began before the day, where the vehicle reappeared.
        pos, f = (p0, f0) if f0 is not None and ta >= a.start else (p1, f1)
        k = f[1] if f is not None and not isinstance(f[1], Edge) else None
        out.append(
            Candidate(
                Kind.TRACKER_SILENT, a.vehicle.id, utc(start), utc(hi_est) if f1 is not None else None,
                route_id=due.route_id if due else None, run_no=due.run_no if due else None,
                lat=pos[0] if pos else None, lon=pos[1] if pos else None,
                place=_place(a, k) if k is not None else None, facts=facts,
                completed_ts=utc(hi) if f1 is not None else None,
            )
        )  # fmt: skip
    return out


def day_candidates(
    a: Analysis, day: date, runs: Sequence[tuple[Route, Run]], plans: Mapping[int, Sequence[RunPlan]],
    spans: Sequence[DueSpan], before: Edge | None, after: Edge | None, now: float, params: DetectParams,
) -> list[Candidate]:  # fmt: skip
    """Every window kind's candidates of one local day's analysis, starting inside it, by start then kind."""
    found = [
        *speeding(a, now, params),
        *deviations(a, now, params),
        *unauthorized_stops(a, now, params),
        *schedule_delays(a, day, runs, plans, params),
        *on_board(a, params),
        *silences(a, before, after, spans, now, params),
    ]
    inside = [c for c in found if a.owns(c.start.timestamp())]
    return sorted(inside, key=lambda c: (c.start, c.kind, c.key or ""))
