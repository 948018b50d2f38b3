"""Route runs: which registered points a vehicle served, passed or skipped on a day, against the schedule (pure).

The `schedule` report (reports/kinds/schedule.py) shows one run per vehicle, day and assigned route: schedule
adherence (Art. 37 XI) and routes not run (Art. 39 I).

Decisions:
- A route point is *served* when the vehicle stopped (a stop of at least onboard_stop_min_s: pupils board in
  under a minute) with its centre within authorized_radius_m; arrival and departure are the stop's first and
  last stationary fixes, widened over the consecutive stops within the radius of the same point (a bus that
  moves up a few metres at a boarding place, or inside the garage yard, has not left it). *Passed*: no such
  stop, but the path came within the radius: a kept fix, or the straight line between two kept fixes at most
  gap_s apart (the closest approach, its time interpolated). *Skipped*: neither.
- Points are matched in `seq` order to stops in time order, each stop at most once: the most points served,
  then the least total |arrival − scheduled|, then the earliest stops. So an out-and-back route whose
  "Ponto 1" and "Ponto 1 (volta)" share coordinates gets the outbound stop for the first and the return stop
  for the second, and a missed outbound stop is not stolen from the return. Passes are then looked for,
  in order, between the neighbouring visits.
- With scheduled times a run only looks at stops and fixes from EARLY_S before its first scheduled time to
  LATE_S after its last, so that the morning and afternoon runs of a day do not take each other's stops; a run
  later than that counts as not made. Without scheduled times the whole day is searched.
- The first point's scheduled time is a departure (its delay: departure − scheduled); every other point's is
  an arrival. Delays are given for served and passed points, in minutes, positive when late.
- A run is made when a school point was served or at least half of its boarding points were. A day the window
  touches is evaluated whole; days after today are left out. While a run's search window is still open (today),
  the points after the last one served or passed are *pending*, not skipped: the vehicle may still get there;
  and a run not made yet is pending (`made` is null), in the CSV "Pendente".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time

import numpy as np

from telemetria.geo.geodesic import distance_m
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.analysis import stops
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.track import FloatArray
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Point, Route

SERVED, PASSED, SKIPPED, PENDING = "served", "passed", "skipped", "pending"
EARLY_S = 3600.0  # a run's stops start at most this long before its first scheduled time
LATE_S = 2 * 3600.0  # and end at most this long after its last
_EARTH_M = 6_371_008.8
Path = tuple[FloatArray, FloatArray, FloatArray]  # t (epoch s), lat, lon of the kept fixes, in time order


@dataclass(frozen=True, slots=True)
class Visit:
    """One route point: status, arrival/departure (epoch s, None if skipped), metres from the stop or pass."""

    point: Point
    status: str
    arrival: float | None = None
    departure: float | None = None
    distance_m: float | None = None


@dataclass(frozen=True, slots=True)
class Run:
    """One route on one local day: its visits in seq order and the schedule (epoch s, None if unregistered)."""

    day: date
    visits: list[Visit]
    scheduled: list[float | None]
    closes: float  # epoch s after which no stop counts for this run

    def count(self, status: str, kind: str | None = None) -> int:
        """How many points (of `kind`, if given) have `status`."""
        return sum(v.status == status and kind in (None, v.point.kind) for v in self.visits)

    @property
    def made(self) -> bool:
        """School served, or at least half of the boarding points (Art. 39 I: otherwise a route not run)."""
        boarding = sum(v.point.kind == "boarding" for v in self.visits)
        served = self.count(SERVED, "boarding")
        return self.count(SERVED, "school") > 0 or (boarding > 0 and 2 * served >= boarding)

    def school(self) -> int | None:
        """Index of the first school point, if any."""
        return next((i for i, v in enumerate(self.visits) if v.point.kind == "school"), None)

    def delay_min(self, i: int) -> float | None:
        """Minutes late at point i (negative: early): departure for the first point, arrival for the others."""
        v, s = self.visits[i], self.scheduled[i]
        actual = v.departure if i == 0 else v.arrival
        return None if s is None or actual is None else round((actual - s) / 60.0, 1)


def scheduled_at(p: Point, day: date) -> float | None:
    """The point's registered time on local date `day`, epoch s (None when it has none)."""
    return None if p.scheduled is None else datetime.combine(day, time.fromisoformat(p.scheduled), LOCAL_TZ).timestamp()


def _near(points: Sequence[Point], found: Sequence[stops.Stop]) -> FloatArray:
    if not points or not found:
        return np.zeros((len(points), len(found)))
    d = distance_m(
        np.array([[p.lon] for p in points]), np.array([[p.lat] for p in points]),
        np.array([[s.lon for s in found]]), np.array([[s.lat for s in found]]),
    )  # fmt: skip
    return np.asarray(d, dtype=float).reshape(len(points), len(found))


def _align(d: FloatArray, radius_m: float, cost: FloatArray) -> list[int | None]:
    """Per point, the stop it is matched to: most matches, then least cost, then earliest stops (monotone)."""
    n, m = d.shape
    Score = tuple[int, float]
    f: list[list[Score]] = [[(0, 0.0)] * (m + 1) for _ in range(n + 1)]

    def take(i: int, k: int) -> Score:
        rest = f[i + 1][k + 1]
        return (rest[0] + 1, rest[1] - float(cost[i, k]))

    for i in range(n - 1, -1, -1):
        best: Score = (0, -math.inf)  # best over matches of point i at stops k ≥ j
        for j in range(m - 1, -1, -1):
            if d[i, j] <= radius_m:
                best = max(best, take(i, j))
            f[i][j] = max(f[i + 1][j], best)
    out: list[int | None] = []
    j = 0
    for i in range(n):
        k = next((k for k in range(j, m) if d[i, k] <= radius_m and take(i, k) == f[i][j]), None)
        out.append(k)
        j = j if k is None else k + 1
    return out


def _pass(p: Point, path: Path, lo: float, hi: float, radius_m: float, gap_s: float) -> Visit | None:
    """The first time in [lo, hi] the path came within radius_m of p (closest approach of that fix or segment)."""
    t, lat, lon = path  # t increasing (a Track's)
    sel = np.arange(np.searchsorted(t, lo, "left"), np.searchsorted(t, hi, "right"))
    if not len(sel):
        return None
    y = np.radians(lat[sel] - p.lat) * _EARTH_M
    x = np.radians(lon[sel] - p.lon) * _EARTH_M * math.cos(math.radians(p.lat))
    # Segment k runs from fix k to fix k+1; unlinked ones (over gap_s) and the last fix shrink to their start.
    linked = np.append(np.diff(t[sel]) <= gap_s, False)
    x1, y1 = np.append(x[1:], x[-1]), np.append(y[1:], y[-1])
    dx, dy = np.where(linked, x1 - x, 0.0), np.where(linked, y1 - y, 0.0)
    len2 = dx * dx + dy * dy
    u = np.clip(np.divide(-(x * dx + y * dy), len2, out=np.zeros_like(len2), where=len2 > 0), 0.0, 1.0)
    dist = np.hypot(x + u * dx, y + u * dy)
    hits = np.flatnonzero(dist <= radius_m)
    if not len(hits):
        return None
    k = int(hits[0])
    dt = np.append(np.diff(t[sel]), 0.0)
    at = float(t[sel][k] + u[k] * dt[k])
    return Visit(p, PASSED, at, at, float(dist[k]))


def evaluate(
    points: Sequence[Point], found: Sequence[stops.Stop], day: date, radius_m: float,
    path: Path | None = None, gap_s: float = 60.0, day_end: float | None = None,
) -> Run:  # fmt: skip
    """Match a route's points (sorted by seq) to the day's stops (time order) and passes along `path`: see module."""
    pts = sorted(points, key=lambda p: p.seq)
    sched = [scheduled_at(p, day) for p in pts]
    known = [s for s in sched if s is not None]
    lo, hi = (min(known) - EARLY_S, max(known) + LATE_S) if known else (-math.inf, math.inf)
    found = [s for s in found if s.end >= lo and s.start <= hi]
    d = _near(pts, found)
    cost = np.zeros(d.shape)
    for i, s in enumerate(sched):
        if s is not None and found:
            cost[i] = np.abs(np.array([x.end if i == 0 else x.start for x in found]) - s)
    at = _align(d, radius_m, cost)
    taken = [k for k in at if k is not None]
    visits: list[Visit] = []
    for i, (p, k) in enumerate(zip(pts, at, strict=True)):
        if k is None:
            visits.append(Visit(p, SKIPPED))
            continue
        prev = max([-1, *(x for x in taken if x < k)])
        nxt = min([len(found), *(x for x in taken if x > k)])
        a, b = k, k
        while a - 1 > prev and d[i, a - 1] <= radius_m:
            a -= 1
        while b + 1 < nxt and d[i, b + 1] <= radius_m:
            b += 1
        visits.append(Visit(p, SERVED, found[a].start, found[b].end, float(d[i, k])))
    if path is not None:
        for i, v in enumerate(visits):
            if v.status != SKIPPED:
                continue
            before = [w.departure for w in visits[:i] if w.departure is not None]
            after = [w.arrival for w in visits[i + 1 :] if w.status == SERVED and w.arrival is not None]
            seen = _pass(v.point, path, max([lo, *before]), min([hi, *after]), radius_m, gap_s)
            visits[i] = seen or v
    closes = hi if known else (math.inf if day_end is None else day_end)
    return Run(day, visits, sched, closes)


def still_open(run: Run, now: float) -> Run:
    """The run as it stands at `now` (epoch s) while its window is open: points after the last visited are pending."""
    if now >= run.closes:
        return run
    visited = [i for i, v in enumerate(run.visits) if v.status in (SERVED, PASSED)]
    after = visited[-1] + 1 if visited else 0
    visits = [replace(v, status=PENDING) if i >= after and v.status == SKIPPED else v for i, v in enumerate(run.visits)]
    return replace(run, visits=visits)


def runs_of(a: Analysis, day: date, params: ReportParams) -> list[tuple[Route, Run]]:
    """Each route assigned in analysis `a` (one local day) with its run, by first scheduled time."""
    tr, keep = a.track, a.keep
    found = [s for s in a.short_stops if s.end >= a.start and s.start < a.end]
    own = keep & (tr.t >= a.start) & (tr.t < a.end)
    path = (tr.t[own], tr.lat[own], tr.lon[own])
    out = [(r, evaluate(r.points, found, day, params.authorized_radius_m, path, params.gap_s, a.end)) for r in a.routes]
    return sorted(out, key=lambda x: (min([s for s in x[1].scheduled if s is not None], default=math.inf), x[0].code))
