"""A simulated month of a per-km school-transport contract, with its ground truth per run (pure, seeded).

Four routes of one contractor's fleet over a school month; route 3 makes two runs a day (out to the school
in the morning, back at midday, as its stops' scheduled times say), the others one. Per route-day the plan
is `made` (the assigned vehicle drives the whole route), and on a few days something else happens:

- `partial`: the vehicle turns round before reaching the school and drives back to the garage the way it came,
  so it covers the route's first and last stretches only (coverage ≈ 2 × TURN_AT);
- `not_made`: the vehicle stays in its garage (parked, ignition off, still reporting now and then);
- `substitution`: the contractor's spare vehicle drives the route while the assigned one stays parked;
- `late`: made, but its fixes are withheld (no signal all day) and come in one store-and-forward batch after
  every other day's;

and one weekday is marked without school (nobody drives, no run is due). The school day as it was (issue 31):
route 3's return run is the afternoon's (tarde, by its 12:30 timetable); on one day there is school in the
morning only (`morning_only`: the calendar says so, route 3's return is not due and nobody drives it), and on
another the afternoon is dismissed early (`dismissal`: the calendar records the tarde's runs due from 10:00,
and route 3's return is driven then). Two contracts (issue 31): route 5 (`SIM-05`, `SECOND_CONTRACT`) runs
along route 1's line on its timetable with a vehicle of its own (`SECOND_VEHICLE`); on the day that vehicle
stays in its garage (`not_made`), route 1's vehicle drives its own run along the same roads in that window,
and that one drive is paid once: route 5's run is not made. The truth gives, per due run, who drove it, the
share of the run's stretch of the route line driven along it and those km, and the status the contract's
default rule gives that share. Same seed, same month, fix for fix.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Literal

import numpy as np

from telemetria.contracts.rule import PaymentRule, Status
from telemetria.fix import Fix
from telemetria.localtime import LOCAL_TZ
from telemetria.sim.motion import MotionParams, drive
from telemetria.sim.polyline import Polyline, offset
from telemetria.sim.roads import Route, RouteStop, make_grid, make_route
from telemetria.sim.tracker import TrackerParams, Upload, track
from telemetria.sim.truth import Truth

Kind = Literal["made", "partial", "not_made", "substitution", "late", "morning_only", "dismissal"]

ROUTES = 4  # the first contract's
SPARE = ROUTES  # fleet index of the contractor's spare vehicle
SHARED = 0  # the first contract's route whose line the second contract's route runs along
SECOND_ROUTE = ROUTES  # route index of the second contract's route (SIM-05)
SECOND_VEHICLE = ROUTES + 1  # its vehicle's fleet index
SECOND_CONTRACT = 1  # contract index of SIM-05 (the others: 0)
FLEET = ROUTES + 2  # vehicles: one per route, the spare, SIM-05's
TWO_RUNS = 3  # the route whose stops' scheduled times define a morning and a midday run
TURN_AT = 0.35  # a partial run turns round at this share of the route's length
LENGTH_M = (20_000.0, 40_000.0)
STARTS = (time(6, 0), time(6, 10), time(6, 20), time(6, 15))  # local, each route's (first) run
MIDDAY = time(12, 30)  # local: route 3's return run (the afternoon shift's)
DISMISSAL = time(10, 0)  # local: the early dismissal's tarde runs due from then (route 3's return driven then)
START_JITTER_S = 300  # runs start up to this late, seconds
PARKED_EVERY_S = 300  # a parked tracker's heartbeat
PRICE_PER_KM = Decimal("4.37")
RULE = PaymentRule()  # the defaults: made ≥ 95 %, partial ≥ 50 % paid by coverage, else nothing
MOTION = MotionParams(boarding_s=(40.0, 120.0))
TRACKER = TrackerParams()  # 5 m noise, a signal loss now and then (store-and-forward, resends)


@dataclass(frozen=True, slots=True)
class Event:
    """What happens on one route on one school day (its index in the month's school days), besides `made`."""

    kind: Kind
    route: int
    school_day: int


EVENTS = (
    Event("partial", 0, 2), Event("not_made", 1, 4), Event("not_made", SECOND_ROUTE, 5), Event("substitution", 2, 6),
    Event("late", 3, 8), Event("morning_only", TWO_RUNS, 12), Event("dismissal", TWO_RUNS, 14),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class RegStop:
    """A stop as registered: name, kind, place (degrees) and scheduled local time."""

    name: str
    kind: str
    lat: float
    lon: float
    scheduled: time


@dataclass(frozen=True, slots=True, eq=False)
class MonthRoute:
    """A registered route: the line, its stops, the stretches of the line its runs cover (metres, run order)."""

    code: str
    route: Route
    stops: tuple[RegStop, ...]
    runs: tuple[tuple[float, float], ...]
    vehicle: int  # fleet index of the assigned vehicle
    declared_km: Decimal
    contract: int = 0  # contract index (0: the first contract, SECOND_CONTRACT: SIM-05's)

    @property
    def length_m(self) -> float:
        """Length of the registered line, metres."""
        return self.route.length_m

    def share(self, run_no: int) -> Decimal:
        """Fraction of the declared km run `run_no` (1, 2, ...) is worth: its stretch's share of the line."""
        a, b = self.runs[run_no - 1]
        return Decimal(repr((b - a) / self.length_m))


@dataclass(frozen=True, slots=True)
class RunTruth:
    """One due run as it really happened."""

    day: date
    route: int
    run_no: int
    kind: Kind
    vehicle: int | None  # fleet index of the vehicle that drove (None: nobody drove)
    coverage: float  # share of the run's stretch driven along the route, 0..1
    route_km: float  # km of the run's stretch driven along the route

    @property
    def status(self) -> Status:
        """The status the contract's default rule gives the true coverage."""
        return RULE.status(Decimal(repr(self.coverage * 100)))

    @property
    def substitution(self) -> bool:
        return self.kind == "substitution"


@dataclass(frozen=True, slots=True)
class Post:
    """One upload of one vehicle's tracker (as it sent it: resent duplicates and all)."""

    vehicle: int
    day: date
    late: bool  # withheld until every other day was posted
    upload: Upload


@dataclass(frozen=True, slots=True, eq=False)
class Month:
    seed: int
    year: int
    month: int
    no_school: tuple[date, ...]
    morning_only: tuple[date, ...]  # school days with school in the morning only (no tarde, no noite)
    dismissals: tuple[tuple[date, time], ...]  # school days whose tarde runs were due from a time (early dismissal)
    routes: tuple[MonthRoute, ...]
    runs: tuple[RunTruth, ...]
    posts: tuple[Post, ...]  # in the order the trackers sent them, the late day's last
    truths: tuple[tuple[int, Truth], ...]  # (fleet index, truth) of every drive, for checks

    @property
    def first(self) -> date:
        return date(self.year, self.month, 1)

    @property
    def last(self) -> date:
        return _month_days(self.year, self.month)[-1]

    @property
    def school_days(self) -> tuple[date, ...]:
        return tuple(d for d in _month_days(self.year, self.month) if d.isoweekday() <= 5 and d not in self.no_school)

    def expected_payable_km(self, r: RunTruth) -> Decimal:
        """The run's payable km by the default rule from its true coverage (exact, unrounded)."""
        route = self.routes[r.route]
        declared = route.declared_km * route.share(r.run_no)
        return RULE.payable_km(r.status, Decimal(repr(r.coverage * 100)), declared, Decimal(0))


def _month_days(year: int, month: int) -> list[date]:
    first = date(year, month, 1)
    return [first + timedelta(days=k) for k in range(31) if (first + timedelta(days=k)).month == month]


def simulate_month(seed: int = 17, year: int = 2026, month: int = 3, no_school: tuple[int, ...] = (10,)) -> Month:
    """The month: its routes, every due run's truth, and the uploads of every vehicle's tracker."""
    first = month_routes(seed)
    shared = first[SHARED]
    second = MonthRoute("SIM-05", shared.route, shared.stops, shared.runs, SECOND_VEHICLE, shared.declared_km,
                        SECOND_CONTRACT)  # fmt: skip
    routes = (*first, second)
    skip = tuple(date(year, month, d) for d in no_school)
    days = [d for d in _month_days(year, month) if d.isoweekday() <= 5 and d not in skip]
    plan = {(days[e.school_day], e.route): e.kind for e in EVENTS}
    morning_only = tuple(days[e.school_day] for e in EVENTS if e.kind == "morning_only")
    dismissals = tuple((days[e.school_day], DISMISSAL) for e in EVENTS if e.kind == "dismissal")
    runs: list[RunTruth] = []
    live: list[Post] = []
    late: list[Post] = []
    truths: list[tuple[int, Truth]] = []
    for d, day in enumerate(days):
        for k, route in enumerate(routes):
            kind: Kind = plan.get((day, k), "made")
            rng = np.random.default_rng([seed, k, d, 1])
            driver = SPARE if kind == "substitution" else route.vehicle
            posts: list[Post] = []
            if kind in ("not_made", "substitution"):
                posts += _parked(route, day, rng)  # the assigned vehicle stays in its garage
            for run_no, (m0, m1) in enumerate(route.runs, 1):
                if kind == "morning_only" and run_no == 2:
                    continue  # the afternoon had no school: its run is not due, nobody drives it
                if kind == "not_made":
                    runs.append(RunTruth(day, k, run_no, kind, None, 0.0, 0.0))
                    continue
                path, covered = run_path(route, run_no, kind)
                start = _start(k, run_no, day, rng, DISMISSAL if kind == "dismissal" else None)
                truth = drive(path, start, np.random.default_rng([seed, k, d, run_no, 2]), MOTION)
                uploads, _ = track(truth, np.random.default_rng([seed, k, d, run_no, 3]), 30, TRACKER)
                truths.append((driver, truth))
                posts += [Post(driver, day, kind == "late", u) for u in uploads]
                got = sum(max(0.0, min(b, m1) - max(a, m0)) for a, b in covered)
                runs.append(RunTruth(day, k, run_no, kind, driver, got / (m1 - m0), got / 1000))
            (late if kind == "late" else live).extend(posts)
    live.sort(key=lambda p: p.upload.sent_at)
    late = [Post(p.vehicle, p.day, True, Upload(max(x.upload.sent_at for x in live), p.upload.fixes, p.upload.resent))
            for p in late]  # fmt: skip
    return Month(seed, year, month, skip, morning_only, dismissals, routes, tuple(runs), tuple(live + late),
                 tuple(truths))  # fmt: skip


def month_routes(seed: int) -> tuple[MonthRoute, ...]:
    """The contract's registered routes from `seed`: lines, stops with their scheduled times, runs (the week's too)."""
    grid = make_grid(seed)
    return tuple(_month_route(k, make_route(grid, np.random.default_rng([seed, k, 0]), length_m=LENGTH_M))
                 for k in range(ROUTES))  # fmt: skip


def _month_route(k: int, route: Route) -> MonthRoute:
    half = route.length_m / 2  # the school: the line is out to it and back the same way
    runs = ((0.0, half), (half, route.length_m)) if k == TWO_RUNS else ((0.0, route.length_m),)
    return MonthRoute(f"SIM-{k + 1:02d}", route, _stops(k, route), runs, k, Decimal(f"{route.length_m / 1000:.1f}"))


def _stops(k: int, route: Route) -> tuple[RegStop, ...]:
    """Garage, boarding points, school, the same points back: scheduled by a nominal drive (40 km/h, 1.5 min a stop)."""
    school = next(j for j, s in enumerate(route.stops) if s.kind == "school")
    lat0, lon0 = float(route.line.lat[0]), float(route.line.lon[0])
    out = [RegStop("Garagem", "garage", lat0, lon0, STARTS[k])]
    for j, s in enumerate(route.stops):
        back = f"Ponto {2 * school - j + 1} (volta)"
        name = f"Ponto {j + 1}" if j < school else (f"Escola {k + 1}" if j == school else back)
        out.append(RegStop(name, s.kind, s.lat, s.lon, _nominal(k, route, s.dist_m)))
    return tuple(out)


def _nominal(k: int, route: Route, dist_m: float) -> time:
    """When a nominal drive at 40 km/h with 1.5 min a stop passes `dist_m`, whole minutes, local."""
    half = route.length_m / 2
    start, at = STARTS[k], dist_m
    if k == TWO_RUNS and dist_m > half + 1.0:
        start, at = MIDDAY, dist_m - half
    first = half if start == MIDDAY else 0.0
    stops_before = sum(1 for s in route.stops if first + 1.0 < s.dist_m < dist_m - 1.0)
    school = 6 if first == 0.0 and dist_m > half + 1.0 else 0  # pupils get off at the school
    minutes = 3 + at / (40 / 3.6) / 60 + 1.5 * stops_before + school
    return (datetime.combine(date.min, start) + timedelta(minutes=round(minutes))).time()


def _start(k: int, run_no: int, day: date, rng: np.random.Generator, dismissal: time | None = None) -> datetime:
    at = STARTS[k % len(STARTS)] if run_no == 1 else dismissal or MIDDAY
    local = datetime.combine(day, at, LOCAL_TZ) + timedelta(seconds=int(rng.integers(0, START_JITTER_S)))
    return local.astimezone(UTC)


def run_path(route: MonthRoute, run_no: int, kind: Kind = "made") -> tuple[Route, list[tuple[float, float]]]:
    """What the vehicle drives for a run, and the stretches of the route line that covers (metres)."""
    line, length = route.route.line, route.length_m
    if kind == "partial":
        assert len(route.runs) == 1, "a partial run turns round on a route of one run"
        turn = TURN_AT * length
        return turned(route.route, turn), [(0.0, turn), (length - turn, length)]
    m0, m1 = route.runs[run_no - 1]
    if (m0, m1) == (0.0, length):
        return route.route, [(0.0, length)]
    keep = (line.cum_m >= m0 - 1e-6) & (line.cum_m <= m1 + 1e-6)
    inside = [s for s in route.route.stops if m0 + 1 < s.dist_m < m1 - 1]
    stops = tuple(RouteStop(s.kind, s.dist_m - m0, s.lat, s.lon) for s in inside)
    sub = Route(Polyline.of(line.lat[keep], line.lon[keep]), route.route.is_node[keep], stops)
    return sub, [(m0, m1)]


def turned(route: Route, turn: float) -> Route:
    """The route driven from the garage to `turn` metres along, then back to the garage the same way."""
    line = route.line
    keep = line.cum_m < turn - 1.0
    la, lo, _ = line.at(np.asarray([turn]))
    lat = np.concatenate([line.lat[keep], la, line.lat[keep][::-1]])
    lon = np.concatenate([line.lon[keep], lo, line.lon[keep][::-1]])
    nodes = np.concatenate([route.is_node[keep], [False], route.is_node[keep][::-1]])
    out = [s for s in route.stops if s.kind == "boarding" and s.dist_m < turn - 150.0]
    stops = (*out, RouteStop("boarding", turn, float(la[0]), float(lo[0])))  # it stands a while before turning
    stops += tuple(RouteStop("boarding", 2 * turn - s.dist_m, s.lat, s.lon) for s in reversed(out))
    return Route(Polyline.of(lat, lon), nodes, stops)


def _parked(route: MonthRoute, day: date, rng: np.random.Generator) -> list[Post]:
    """A parked tracker's heartbeats at the garage over the morning: ignition off, a few metres of noise."""
    stop = route.stops[0]
    t0 = datetime.combine(day, time(5, 30), LOCAL_TZ).astimezone(UTC)
    posts = []
    for i in range(3 * 3600 // PARKED_EVERY_S):
        ts = t0 + timedelta(seconds=i * PARKED_EVERY_S)
        lat, lon = offset(stop.lat, stop.lon, float(rng.uniform(0, 360)), float(rng.uniform(0, 8)))
        fix = Fix(ts=ts, lat=round(lat, 7), lon=round(lon, 7), speed_kmh=0.0, heading_deg=0.0, ignition=False)
        posts.append(Post(route.vehicle, day, False, Upload(ts + timedelta(seconds=1), [fix])))
    return posts
