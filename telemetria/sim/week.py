"""A simulated school week with planted events and the occurrences they must give (pure, seeded).

The simulated month's contract (sim/month.py: its four routes, stops and schedule, `month_routes`) over one
week, Monday to Friday and a weekend with nobody driving, with six vehicles: the four routes' own, the
contractor's reserve and an inactive vehicle of the contractor. Every vehicle's tracker reports all day while
parked (a heartbeat every HEARTBEAT_S), every 30 s while driving. Normal driving is clearly inside every
threshold of issue 18 (below the limit, on the route, short halts, on time); on some runs PLAN plants:

- `speeding` (clearly above the limit, a minute or two), `detour` (an out-and-back spur well beyond the route's
  tolerance), `stop` (a halt of 5–7 min away from every registered point), `late_start` (25 min late),
  `over_2h` (pupils boarded two hours early: a to-school leg over 2 h), `skip` (the run is not made),
  `reserve` (the contractor's reserve makes the run: authorised, no occurrence), `inactive` (an inactive
  vehicle makes it: `unauthorized_vehicle`), `gap` (the tracker is off for a while, moving: `tracker_silent`),
  `filled` / `filled_late` (no signal for a while: the fixes come in when it returns, or hours later, so the
  live silent alert must be withdrawn), `late_batch` (the vehicle's whole day arrives in the evening).

The truth is not the plan but what the 1 Hz ground truth and the fixes show by the definitions of
docs/occurrences.md "The kinds" (thresholds from reports/knobs.py and DetectParams' defaults), so an event
the plan did not mean (a detour making stops late) is in it too; `clear_margins` says how far from every
threshold the week keeps. Same seed, same week, fix for fix.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta
from functools import cache
from itertools import pairwise

import numpy as np
import shapely
from pyproj import Transformer

from telemetria.fix import Fix
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.analysis.schedule import EARLY_S, LATE_S
from telemetria.reports.knobs import DEFAULT as KNOBS
from telemetria.sim.month import MIDDAY, ROUTES, STARTS, MonthRoute, month_routes, run_path
from telemetria.sim.motion import MotionParams, drive
from telemetria.sim.polyline import GEOD, offset
from telemetria.sim.tracker import TrackerParams, track
from telemetria.sim.truth import Truth, off_route_runs

SEED = 17
MONDAY = date(2026, 3, 9)  # inside the month's school year and contract
SCHOOL_DAYS = 5
RESERVE = ROUTES  # fleet index of the contractor's reserve vehicle (an authorised substitute)
INACTIVE = ROUTES + 1  # fleet index of a vehicle of the contractor, inactive in the registry
FLEET = ROUTES + 2
HEARTBEAT_S = 120  # a parked tracker's report interval, well under the silence threshold
DAY_FROM, DAY_TO = time(4, 30), time(15, 0)  # local: when parked trackers report
LATE_BATCH_AT = time(18, 0)  # local: when the late batch day arrives
FILL_LATE_S = 3 * 3600  # `filled_late`: the held fixes arrive this long after the signal returns
SILENCE_S = 1800  # length of a planted signal loss or tracker-off gap
LATE_START_S = 25 * 60
EARLY_BOARDING_S = 8400  # `over_2h`: pupils wait on board at the first boarding stop this long
# The thresholds the truth is judged by (DetectParams' defaults and the reports' knobs).
LIMIT_KMH = KNOBS.default_limit_kmh
UNAUTHORIZED_STOP_S = 60.0
DELAY_TOLERANCE_S = 600.0
EARLY_TOLERANCE_S = 900.0  # a boarding stop left this long before its time is an early departure (issue 32)
SILENT_S = 300.0
SILENT_MOVED_M = 500.0

# A normal halt (traffic) stays under the unauthorised stop's minimum less one fix interval: a stop's ends are
# estimated at the midpoints with the fixes around them (reports/analysis/stops.py), so each may read up to half an
# interval (15 s at 30 s) longer than it was.
NORMAL = MotionParams(cruise_kmh=(40.0, 50.0), speeding=False, halt_s=(10.0, 25.0), boarding_s=(40.0, 120.0))
TRACKER = TrackerParams(loss_per_hour=0.0)  # signal losses only where planted


@dataclass(frozen=True, slots=True)
class Plant:
    """What is planted on run `run_no` of `route` on school day `day` (0 = Monday)."""

    what: str
    day: int
    route: int
    run_no: int = 1


PLAN = (
    Plant("speeding", 0, 0), Plant("detour", 0, 1), Plant("stop", 0, 2),
    Plant("late_start", 1, 0), Plant("skip", 1, 1), Plant("reserve", 1, 2),
    Plant("over_2h", 2, 0), Plant("inactive", 2, 1), Plant("gap", 2, 2), Plant("speeding", 2, 3),
    Plant("late_batch", 3, 0), Plant("speeding", 3, 0), Plant("filled_late", 3, 1), Plant("detour", 3, 2),
    Plant("stop", 3, 3),
    Plant("speeding", 4, 1), Plant("filled", 4, 2),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Event:
    """An occurrence the week must give: kind (model.Kind's value), fleet index, true start and end (UTC)."""

    kind: str
    vehicle: int
    start: datetime
    end: datetime | None
    route: int | None = None
    run_no: int | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class Silence:
    """A hole in a vehicle's live data (last fix before it, last fix it holds) that later data fills: withdrawn."""

    vehicle: int
    start: datetime
    end: datetime
    note: str


@dataclass(frozen=True, slots=True)
class Arrival:
    """One fix of a fleet vehicle and when it reaches the server (UTC)."""

    at: datetime
    vehicle: int
    fix: Fix


@dataclass(frozen=True, slots=True)
class Drive:
    """One run driven: by which fleet vehicle, of which route and run, and its ground truth."""

    vehicle: int
    day: date
    route: int
    run_no: int
    plants: frozenset[str]
    truth: Truth


@dataclass(frozen=True, slots=True, eq=False)
class Week:
    seed: int
    days: tuple[date, ...]  # Monday .. Sunday
    routes: tuple[MonthRoute, ...]
    drives: tuple[Drive, ...]
    arrivals: tuple[Arrival, ...]  # in arrival order
    events: tuple[Event, ...]
    silences: tuple[Silence, ...]
    plan: tuple[Plant, ...] = field(default=PLAN)

    @property
    def school_days(self) -> tuple[date, ...]:
        return self.days[:SCHOOL_DAYS]

    @property
    def end(self) -> datetime:
        """After every arrival: the week's last moment, UTC."""
        return datetime.combine(self.days[-1] + timedelta(days=1), time(), LOCAL_TZ).astimezone(UTC)


def _local(day: date, at: time) -> datetime:
    return datetime.combine(day, at, LOCAL_TZ).astimezone(UTC)


def _sched(route: MonthRoute, day: date) -> list[datetime]:
    return [_local(day, s.scheduled) for s in route.stops]


def run_points(route: MonthRoute, run_no: int) -> list[int]:
    """Indexes of the route's registered points that run `run_no` serves (a school break splits the runs)."""
    if len(route.runs) == 1:
        return list(range(len(route.stops)))
    school = next(j for j, s in enumerate(route.stops) if s.kind == "school")
    return list(range(school + 1)) if run_no == 1 else list(range(school + 1, len(route.stops)))


def run_window(route: MonthRoute, day: date, run_no: int) -> tuple[datetime, datetime]:
    """The run's window (reports/analysis/runs.py): EARLY_S before its first time to LATE_S after its last, cut."""
    sched = _sched(route, day)
    wins = []
    for n in range(1, len(route.runs) + 1):
        pts = [sched[j] for j in run_points(route, n)]
        wins.append([pts[0] - timedelta(seconds=EARLY_S), pts[-1] + timedelta(seconds=LATE_S)])
    for a, b in pairwise(wins):
        if a[1] > b[0]:  # cut inside the break in the ratio LATE_S : EARLY_S
            last, first = a[1] - timedelta(seconds=LATE_S), b[0] + timedelta(seconds=EARLY_S)
            cut = last + (first - last) * (LATE_S / (LATE_S + EARLY_S))
            a[1] = b[0] = cut
    lo, hi = _local(day, time()), _local(day + timedelta(days=1), time())
    w = wins[run_no - 1]
    return max(w[0], lo), min(w[1], hi)


def simulate_week(seed: int = SEED) -> Week:
    """The week: its drives, every fix with its arrival time, and the occurrences and silences it must give."""
    routes = month_routes(seed)
    days = tuple(MONDAY + timedelta(days=k) for k in range(7))
    plan: dict[tuple[int, int, int], set[str]] = {}
    for p in PLAN:
        plan.setdefault((p.day, p.route, p.run_no), set()).add(p.what)
    home = _homes(routes)
    drives: list[Drive] = []
    arrivals: list[Arrival] = []
    events: list[Event] = []
    silences: list[Silence] = []
    for d, day in enumerate(days[:SCHOOL_DAYS]):
        today: dict[int, list[Drive]] = {v: [] for v in range(FLEET)}
        held: dict[int, Held] = {}
        for k, route in enumerate(routes):
            for run_no in range(1, len(route.runs) + 1):
                what = frozenset(plan.get((d, k, run_no), set()))
                if "skip" in what:
                    a, b = run_window(route, day, run_no)
                    events.append(Event("run_not_made", k, a, b, k, run_no, "skip"))
                    continue
                driver = RESERVE if "reserve" in what else INACTIVE if "inactive" in what else k
                rng = np.random.default_rng([seed, d, k, run_no, 1])
                truth = _drive(route, run_no, day, what, rng, [seed, d, k, run_no, 2])
                today[driver].append(Drive(driver, day, k, run_no, what, truth))
                if "inactive" in what:  # over the run's window, as a run not made
                    a, b = run_window(route, day, run_no)
                    events.append(Event("unauthorized_vehicle", driver, a, b, k, run_no, "inactive"))
                for kind in ("gap", "filled", "filled_late"):
                    if kind in what:
                        t0 = _moving_window(truth, np.random.default_rng([seed, d, k, run_no, 3]))
                        held[driver] = (kind, t0, t0 + SILENCE_S)
        for v in range(FLEET):
            mine = sorted(today[v], key=lambda x: x.truth.start)
            drives += mine
            late = any("late_batch" in x.plants for x in mine)
            got, hole = _vehicle_day(v, day, mine, home[v], held.get(v), seed, d)
            if late:
                at = _local(day, LATE_BATCH_AT)
                got = [replace(x, at=at) for x in got]
                before = max(x.fix.ts for x in arrivals if x.vehicle == v)
                silences.append(Silence(v, before, max(x.fix.ts for x in got), "late_batch"))
            if hole is not None:
                silences.append(hole)
            arrivals += got
    fixes: dict[int, list[Fix]] = {v: [] for v in range(FLEET)}
    for x in arrivals:
        fixes[x.vehicle].append(x.fix)
    events += _truth_events(routes, days, drives, fixes)
    arrivals.sort(key=lambda x: (x.at, x.vehicle, x.fix.ts))
    events.sort(key=lambda e: (e.start, e.vehicle, e.kind))
    return Week(seed, days, routes, tuple(drives), tuple(arrivals), tuple(events), tuple(silences))


def _homes(routes: Sequence[MonthRoute]) -> dict[int, tuple[float, float]]:
    """Where each vehicle parks: its route's garage; the substitutes at the garage of the route they make."""
    garage = {k: (r.stops[0].lat, r.stops[0].lon) for k, r in enumerate(routes)}
    by = {p.what: p.route for p in PLAN}
    return {**garage, RESERVE: garage[by["reserve"]], INACTIVE: garage[by["inactive"]]}


def _motion(route: MonthRoute, what: frozenset[str]) -> MotionParams:
    p = NORMAL
    if "speeding" in what:
        p = replace(p, speeding=True, speeding_kmh=(72.0, 85.0), speeding_s=(45.0, 100.0))
    if "detour" in what:
        p = replace(p, detour=True, detour_m=(1200.0, 1600.0))
    if "stop" in what:
        p = replace(p, halt_s=(300.0, 420.0))
    if "over_2h" in what:
        p = replace(p, first_boarding_s=(EARLY_BOARDING_S, EARLY_BOARDING_S + 60.0))
    return p


def _drive(route: MonthRoute, run_no: int, day: date, what: frozenset[str], rng: np.random.Generator,
           seeds: list[int]) -> Truth:  # fmt: skip
    """The run driven: starting 2–4 min before its first time (so it leaves on time), or as planted."""
    path, _ = run_path(route, run_no)
    at = STARTS[route.vehicle] if run_no == 1 else MIDDAY
    start = _local(day, at) - timedelta(seconds=240 - int(rng.integers(0, 120)))
    if "late_start" in what:
        start += timedelta(seconds=LATE_START_S)
    if "over_2h" in what:
        start -= timedelta(seconds=EARLY_BOARDING_S + 300)
    motion = _motion(route, what)
    for attempt in range(50):
        truth = drive(path, start, np.random.default_rng([*seeds, attempt]), motion)
        if "stop" not in what or _far_halt(route, truth):
            return truth
    raise ValueError(f"no halt far from {route.code}'s registered points")


def _far_halt(route: MonthRoute, truth: Truth) -> bool:
    """The run's halt is far (≥ 300 m) from every registered point, so that it is not authorised."""
    (halt,) = [s for s in truth.stops if s.kind == "halt"]
    return _nearest_m(route, halt.lat, halt.lon) >= 300.0


def _nearest_m(route: MonthRoute, lat: float, lon: float) -> float:
    pts = route.stops
    _, _, d = GEOD.inv([lon] * len(pts), [lat] * len(pts), [s.lon for s in pts], [s.lat for s in pts])
    return float(np.min(d))


def _moving_window(truth: Truth, rng: np.random.Generator) -> float:
    """A start (s into the run) of a SILENCE_S window in the run's middle across which the vehicle moves far."""
    for _ in range(200):
        t0 = float(np.floor(rng.uniform(0.25, 0.6) * (truth.duration_s - SILENCE_S)))
        if truth.distance_between(t0, t0 + SILENCE_S) > 3 * SILENT_MOVED_M:
            return t0
    raise ValueError("the run is too short for a silence while moving")


Held = tuple[str, float, float]  # a planted silence: what, from, to (seconds into the drive)


def _vehicle_day(v: int, day: date, mine: Sequence[Drive], home: tuple[float, float], held: Held | None,
                 seed: int, d: int) -> tuple[list[Arrival], Silence | None]:  # fmt: skip
    """A vehicle's fixes of a day with their arrival times: heartbeats while parked, the drives' fixes live."""
    out: list[Arrival] = []
    hole = None
    busy = [(x.truth.time(0) - timedelta(seconds=60), x.truth.time(x.truth.duration_s) + timedelta(seconds=60))
            for x in mine]  # fmt: skip
    rng = np.random.default_rng([seed, d, v, 9])
    t, t1 = _local(day, DAY_FROM), _local(day, DAY_TO)
    while t <= t1:
        if not any(a <= t <= b for a, b in busy):
            before = [x for x in mine if x.truth.start <= t]
            lat, lon = (before[-1].truth.lat[-1], before[-1].truth.lon[-1]) if before else home
            lat, lon = offset(float(lat), float(lon), float(rng.uniform(0, 360)), float(rng.uniform(0, 6)))
            fix = Fix(ts=t, lat=round(lat, 7), lon=round(lon, 7), speed_kmh=0.0, heading_deg=0.0, ignition=False)
            out.append(Arrival(t + timedelta(seconds=1), v, fix))
        t += timedelta(seconds=HEARTBEAT_S)
    for x in mine:
        uploads, _ = track(x.truth, np.random.default_rng([seed, d, x.route, x.run_no, 4]), 30, TRACKER)
        fixes = [(u.sent_at, f) for u in uploads for f in u.fixes]
        if held and held[0] and x is next((y for y in mine if y.plants & {held[0]}), None):
            kind, a, b = held
            t_a, t_b = x.truth.time(a), x.truth.time(b)
            inside = [f for _, f in fixes if t_a <= f.ts < t_b]
            after = [f.ts for _, f in fixes if f.ts >= t_b]
            if kind == "gap":
                fixes = [(s, f) for s, f in fixes if not (t_a <= f.ts < t_b)]
            else:
                back = t_b + timedelta(seconds=2 + (FILL_LATE_S if kind == "filled_late" else 0))
                fixes = [(back if t_a <= f.ts < t_b else s, f) for s, f in fixes]
                last = max(f.ts for _, f in fixes if f.ts < t_a)
                hole = Silence(v, last, min(after) if after else t_b, kind)
            assert inside, "a planted silence holds fixes"
        out += [Arrival(s, v, f) for s, f in fixes]
    out.sort(key=lambda x: x.fix.ts)
    return out, hole


# --- the truth by the definitions ------------------------------------------------------------------------


def _episodes(mask: np.ndarray) -> list[tuple[int, int]]:
    edges = np.flatnonzero(np.diff(np.concatenate([[False], mask, [False]]).astype(np.int8)))
    return [(int(a), int(b) - 1) for a, b in zip(edges[::2], edges[1::2], strict=True)]


def _truth_events(routes: Sequence[MonthRoute], days: Sequence[date], drives: Sequence[Drive],
                  fixes: dict[int, list[Fix]]) -> list[Event]:  # fmt: skip
    out: list[Event] = []
    school_days = set(days[:SCHOOL_DAYS])
    for x in drives:
        tr, own = x.truth, x.vehicle == x.route  # substitutes have no route assigned
        route = routes[x.route]
        for ep in tr.speeding:
            if ep.duration_s >= KNOBS.speeding_min_s:
                out.append(Event("speeding", x.vehicle, tr.time(ep.t_start_s), tr.time(ep.t_end_s), x.route,
                                 x.run_no, f"{ep.max_kmh:.0f} km/h"))  # fmt: skip
        if not own:
            continue
        legs = _aboard(tr, route, x.run_no)  # stops and deviations are judged with pupils on board (Art. 38 IX, 26)
        for a, b in off_route_runs(tr, KNOBS.deviation_tolerance_m):
            if b - a >= KNOBS.deviation_min_s and any(a <= e and s <= b for s, e in legs):
                out.append(Event("route_deviation", x.vehicle, tr.time(a), tr.time(b), x.route, x.run_no))
        for s in tr.stops:
            far = _nearest_m(route, s.lat, s.lon) > KNOBS.authorized_radius_m
            aboard = any(a <= s.t_start_s <= b for a, b in legs)
            if far and aboard and s.duration_s >= UNAUTHORIZED_STOP_S:
                out.append(Event("unauthorized_stop", x.vehicle, tr.time(s.t_start_s), tr.time(s.t_end_s),
                                 x.route, x.run_no, s.kind))  # fmt: skip
        off = [t for t in (_first_late(route, x), _first_early(route, x)) if t is not None]
        if off:
            out.append(Event("schedule_delay", x.vehicle, min(off), None, x.route, x.run_no))
        for a, b in _legs(tr):
            if b - a >= KNOBS.onboard_max_s:
                out.append(Event("over_2h_on_board", x.vehicle, tr.time(a), tr.time(b), x.route, x.run_no))
    for v, fs in fixes.items():
        fs = sorted(fs, key=lambda f: f.ts)
        windows = [run_window(r, day, n) for day in school_days for r in routes if r.vehicle == v
                   for n in range(1, len(r.runs) + 1)]  # fmt: skip
        for f0, f1 in pairwise(fs):
            if (f1.ts - f0.ts).total_seconds() <= SILENT_S:
                continue
            _, _, moved = GEOD.inv(f0.lon, f0.lat, f1.lon, f1.lat)
            if any(f0.ts < b and f1.ts > a for a, b in windows):  # only while a run is due (issue 32)
                out.append(Event("tracker_silent", v, f0.ts, f1.ts, note=f"{moved:.0f} m"))
    return out


def stop_times(route: MonthRoute, x: Drive) -> list[tuple[datetime, datetime] | None]:
    """Per registered point of the run, the stationary stay (arrival, departure) that serves it, or None.

    Stays within authorized_radius_m of a point, matched in order (points by seq, stays by time, each stay at
    most once): the most points served, then the least total |time − scheduled| (out and back share points).
    """
    tr = x.truth
    sched = _sched(route, x.day)
    pts = [route.stops[j] for j in run_points(route, x.run_no)]
    times = [sched[j] for j in run_points(route, x.run_no)]
    stays = [(tr.time(s.t_start_s), tr.time(s.t_end_s)) for s in tr.stops]
    near = [[_dist(p.lat, p.lon, s.lat, s.lon) <= KNOBS.authorized_radius_m for s in tr.stops] for p in pts]

    @cache
    def best(i: int, j: int) -> tuple[int, float, tuple[int | None, ...]]:
        if i == len(pts):
            return 0, 0.0, ()
        n, cost, rest = best(i + 1, j)
        out = (n, cost, (None, *rest))
        for k in range(j, len(stays)):
            if near[i][k]:
                n, cost, rest = best(i + 1, k + 1)
                err = abs((stays[k][1 if i == 0 else 0] - times[i]).total_seconds())
                out = max(out, (n + 1, cost - err, (k, *rest)), key=lambda o: (o[0], o[1]))
        return out

    return [None if k is None else stays[k] for k in best(0, 0)[2]]


def delays_s(route: MonthRoute, x: Drive) -> list[float | None]:
    """Seconds late at each registered point of the run (departure at the first, arrival at the others)."""
    sched = _sched(route, x.day)
    pts = run_points(route, x.run_no)
    out: list[float | None] = []
    for i, (j, stay) in enumerate(zip(pts, stop_times(route, x), strict=True)):
        out.append(None if stay is None else ((stay[1] if i == 0 else stay[0]) - sched[j]).total_seconds())
    return out


def _first_late(route: MonthRoute, x: Drive) -> datetime | None:
    for i, (late, stay) in enumerate(zip(delays_s(route, x), stop_times(route, x), strict=True)):
        if late is not None and stay is not None and late > DELAY_TOLERANCE_S:
            return stay[1] if i == 0 else stay[0]
    return None


def _first_early(route: MonthRoute, x: Drive) -> datetime | None:
    """The first departure from a boarding point (not the run's first point) more than EARLY_TOLERANCE_S before
    its scheduled time."""
    sched = _sched(route, x.day)
    pts = run_points(route, x.run_no)
    left = [stay[1] for i, (j, stay) in enumerate(zip(pts, stop_times(route, x), strict=True))
            if i > 0 and stay is not None and route.stops[j].kind == "boarding"
            and (sched[j] - stay[1]).total_seconds() > EARLY_TOLERANCE_S]  # fmt: skip
    return min(left) if left else None


def _legs(tr: Truth) -> list[tuple[float, float]]:
    """On-board legs (s into the run): first boarding arrival → school arrival; school departure → last drop-off."""
    kinds = [s.kind for s in tr.stops]
    if "school" not in kinds:
        return []
    i = kinds.index("school")
    board = [s for s in tr.stops[:i] if s.kind == "boarding"]
    drop = [s for s in tr.stops[i + 1 :] if s.kind == "boarding"]
    out = []
    if board:
        out.append((board[0].t_start_s, tr.stops[i].t_start_s))
    if drop:
        out.append((tr.stops[i].t_end_s, drop[-1].t_start_s))
    return out


def _aboard(tr: Truth, route: MonthRoute, run_no: int) -> list[tuple[float, float]]:
    """When pupils are on board (s into the run): the on-board legs; a run split at the school (two runs a day)
    ends there (the first: first boarding → school) or starts there (the second: school → last drop-off)."""
    if any(s.kind == "school" for s in tr.stops) or len(route.runs) == 1 or not tr.stops:
        return _legs(tr)
    board = [s for s in tr.stops if s.kind == "boarding"]
    if not board:
        return []
    if run_no == 1:
        return [(board[0].t_start_s, tr.stops[-1].t_start_s)]
    return [(tr.stops[0].t_end_s, board[-1].t_start_s)]


def _dist(lat0: float, lon0: float, lat1: float, lon1: float) -> float:
    return float(GEOD.inv(lon0, lat0, lon1, lat1)[2])


# --- how far from the thresholds the week keeps ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Margins:
    """Over the whole week, the extremes of what each threshold judges (to show nothing lies near one)."""

    normal_max_kmh: float  # top 1 Hz speed of runs without planted speeding
    shortest_speeding_s: float  # of the episodes above the limit
    normal_max_off_m: float  # farthest from the route on runs without a detour
    longest_unplanned_halt_s: float  # away from every registered point, on runs without a planted stop
    normal_max_late_s: float  # latest at a point on runs not planted late
    min_planted_late_s: float
    normal_longest_leg_s: float


def margins(week: Week) -> Margins:
    """See Margins."""
    top, shortest, off, halt, late, planted_late, leg = 0.0, math.inf, 0.0, 0.0, -math.inf, math.inf, 0.0
    for x in week.drives:
        tr, route = x.truth, week.routes[x.route]
        if "speeding" not in x.plants:
            top = max(top, float(tr.speed_kmh.max()))
        shortest = min([shortest, *(e.duration_s for e in tr.speeding)])
        if "detour" not in x.plants:
            off = max(off, _max_off_m(tr))
        if "stop" not in x.plants:
            far = [s.duration_s for s in tr.stops if _nearest_m(route, s.lat, s.lon) > KNOBS.authorized_radius_m]
            halt = max([halt, *far])
        d = [s for s in delays_s(route, x) if s is not None]
        if x.plants & {"late_start"}:
            planted_late = min([planted_late, max(d)])
        else:
            late = max([late, *d])
        if "over_2h" not in x.plants:
            leg = max([leg, *(b - a for a, b in _legs(tr))])
    return Margins(top, shortest, off, halt, late, planted_late, leg)


def _max_off_m(tr: Truth) -> float:
    """Farthest the 1 Hz truth gets from the planned route line, metres."""
    to_utm = Transformer.from_crs("EPSG:4326", "EPSG:32720", always_xy=True)  # UTM 20S, as truth.py
    rx, ry = to_utm.transform(tr.route.line.lon, tr.route.line.lat)
    px, py = to_utm.transform(tr.lon, tr.lat)
    return float(shapely.distance(shapely.linestrings(np.column_stack([rx, ry])), shapely.points(px, py)).max())


def kinds_planted(week: Week) -> dict[str, int]:
    """How many events of each kind the week must give."""
    out: dict[str, int] = {}
    for e in week.events:
        out[e.kind] = out.get(e.kind, 0) + 1
    return out
