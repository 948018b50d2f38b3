"""Episodes over a track: runs of a per-fix condition, speeding (CTB Art. 218) and route deviation (Art. 26) (pure).

Every function takes plain arrays in fix-time order (a `Track`'s columns) and a `keep` mask of usable fixes;
fixes outside `keep` are skipped as if never sent: they neither extend, break nor merge an episode.

Instants without the one-interval bias (issue 34), as for stops (stops.py): an episode began somewhere between
the last kept fix before it that is known outside the condition and its first fix in it, and ended between its
last fix in it and the first such fix after it. Its `start` and `end` are the midpoints of those two intervals
(the unbiased estimate: first-to-last fix in the condition reads one fix interval short on average), and
`start_min`..`start_max`, `end_min`..`end_max` the bounds, the inner ones being what was observed (the first and
last fixes in the condition, which an inspector checks against the raw fixes). A neighbouring fix further than
gap_s away (a silence, the track's start or end, a fix not yet received) or whose condition is unknown (a
deviation's fix with no route) bounds nothing: that side keeps the observed instant, never time nobody saw.

One rule for "long enough", shared by speeding and deviation: a run qualifies when it has at least `min_fixes`
fixes in the condition AND its estimated duration (from `start` to `end`, the midpoints) is at least `min_s`
seconds. "Or" would make `min_s` inert: any run that spans more than 0 s already has 2 fixes, so with
`min_fixes` = 2 only the count would ever decide. With both, the count decides at sparse reporting (30 s: 2 fixes
above = 30 s observed, 60 s estimated ≥ 20 s) and the time at dense reporting (1 s: 20 fixes, 19 s observed,
20 s estimated), so a single fix is never an episode at any rate.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from telemetria.reports.analysis.track import BoolArray, FloatArray, IntArray
from telemetria.reports.knobs import DEFAULT, ReportParams

# CTB Art. 218: up to 20 % over the limit is "média", over 20 % up to 50 % "grave", over 50 % "gravíssima".
TIERS: tuple[tuple[float, str], ...] = ((20.0, "media"), (50.0, "grave"), (math.inf, "gravissima"))


@dataclass(frozen=True, slots=True, eq=False)
class Run:
    """Fixes (track indexes, ascending) of one episode of a condition; a merged dip fix is not among them."""

    members: IntArray
    seen0: float = math.nan  # fix time of the first member (start_max)
    seen1: float = math.nan  # fix time of the last member (end_min)
    before: float | None = None  # fix time of the kept fix before it, known outside the condition, within max_gap_s
    after: float | None = None  # likewise the fix after it

    @property
    def first(self) -> int:
        return int(self.members[0])

    @property
    def last(self) -> int:
        return int(self.members[-1])

    @property
    def start(self) -> float:
        """The estimated start: midway between the fix before and the first member (module text)."""
        return self.seen0 if self.before is None else (self.before + self.seen0) / 2

    @property
    def end(self) -> float:
        """The estimated end: midway between the last member and the fix after."""
        return self.seen1 if self.after is None else (self.seen1 + self.after) / 2


def condition_runs(
    t: FloatArray,
    cond: BoolArray,
    keep: BoolArray | None = None,
    *,
    min_s: float = 0.0,
    min_fixes: int = 1,
    max_gap_s: float = math.inf,
    dip_ok: BoolArray | None = None,
) -> list[Run]:
    """Runs of `cond` over the kept fixes (t in epoch s), merged across single dips, long enough (module rule).

    Two runs separated by exactly one kept fix where `cond` is False (a dip) become one, if that fix is `dip_ok`
    (default: any). Consecutive kept fixes more than max_gap_s seconds apart end a run and are never merged across:
    what happened in a gap is unknown. The kept fixes just outside a run bound its start and end (Run.before,
    Run.after) when they are within max_gap_s and `dip_ok` (known outside the condition).
    """
    n = len(t)
    if len(cond) != n or (keep is not None and len(keep) != n) or (dip_ok is not None and len(dip_ok) != n):
        raise ValueError("t, cond, keep and dip_ok must have the same length")
    keep = np.ones(n, dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    k = np.flatnonzero(keep)
    if len(k) == 0:
        return []
    c = np.asarray(cond, dtype=bool)[k]
    ok = np.ones(len(k), dtype=bool) if dip_ok is None else np.asarray(dip_ok, dtype=bool)[k]
    linked = np.diff(t[k]) <= max_gap_s  # linked[j]: kept fixes j and j+1 belong to one stretch
    joined = c[:-1] & c[1:] & linked
    starts = np.flatnonzero(c & ~np.concatenate([[False], joined]))
    ends = np.flatnonzero(c & ~np.concatenate([joined, [False]]))
    spans: list[tuple[int, int]] = []
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        if spans:
            pa, pb = spans[-1]
            if a == pb + 2 and ok[pb + 1] and linked[pb] and linked[pb + 1]:
                spans[-1] = (pa, b)
                continue
        spans.append((a, b))
    tk = t[k]
    out: list[Run] = []
    for a, b in spans:
        members = k[a : b + 1][c[a : b + 1]]
        before = float(tk[a - 1]) if a > 0 and linked[a - 1] and ok[a - 1] else None
        after = float(tk[b + 1]) if b + 1 < len(k) and linked[b] and ok[b + 1] else None
        run = Run(members, float(tk[a]), float(tk[b]), before, after)
        if len(members) >= min_fixes and run.end - run.start >= min_s:
            out.append(run)
    return out


def tier(excess_pct: float) -> str:
    """CTB Art. 218 tier of a speed excess in percent over the limit: 'media', 'grave' or 'gravissima'."""
    return next(name for bound, name in TIERS if excess_pct <= bound)


@dataclass(frozen=True, slots=True)
class Speeding:
    """One speeding episode: first/last fix above the limit (indexes, epoch s), top speed km/h, CTB tier.

    limit_kmh is the limit that applied at the top speed's fix (i_max), excess_pct the excess there.
    """

    first: int
    last: int
    start: float  # estimated (module text: the midpoint with the fix before)
    end: float  # estimated
    n_fixes: int  # fixes above the limit
    i_max: int
    max_kmh: float
    limit_kmh: float
    excess_pct: float
    tier: str
    # Bounds (module text): the fix before (None: none within gap_s, or the track's start), the first and the last
    # fix above the limit (observed), the fix after (None likewise).
    start_min: float | None = None
    start_max: float | None = None
    end_min: float | None = None
    end_max: float | None = None

    @property
    def duration_s(self) -> float:
        """Seconds from the estimated start to the estimated end."""
        return self.end - self.start


def speeding(
    t: FloatArray,
    speed_kmh: FloatArray,
    limit_kmh: FloatArray,
    keep: BoolArray | None = None,
    params: ReportParams = DEFAULT,
) -> list[Speeding]:
    """Episodes of reported speed strictly above the per-fix limit (km/h), merged across one dip (module rule).

    Fixes with an unknown speed or limit (NaN) are skipped like unkept ones. No measuring tolerance is subtracted.
    """
    speed = np.asarray(speed_kmh, dtype=float)
    limit = np.broadcast_to(np.asarray(limit_kmh, dtype=float), speed.shape)
    usable = np.isfinite(speed) & np.isfinite(limit)
    if keep is not None:
        usable &= np.asarray(keep, dtype=bool)
    with np.errstate(invalid="ignore"):
        above = speed > limit
    found = condition_runs(
        t,
        above,
        usable,
        min_s=params.speeding_min_s,
        min_fixes=params.speeding_min_fixes,
        max_gap_s=params.gap_s,
    )
    out: list[Speeding] = []
    for run in found:
        m = run.members
        i = int(m[int(np.argmax(speed[m]))])  # the first fix at the top speed
        excess = (float(speed[i]) - float(limit[i])) / float(limit[i]) * 100.0
        out.append(
            Speeding(
                first=run.first,
                last=run.last,
                start=run.start,
                end=run.end,
                n_fixes=len(m),
                i_max=i,
                max_kmh=float(speed[i]),
                limit_kmh=float(limit[i]),
                excess_pct=excess,
                tier=tier(excess),
                start_min=run.before,
                start_max=run.seen0,
                end_min=run.seen1,
                end_max=run.after,
            )
        )
    return out


@dataclass(frozen=True, slots=True)
class Deviation:
    """One run of fixes farther than the tolerance from the assigned route: indexes, epoch s, metres.

    left: the last on-route fix before it (where the vehicle left the route), rejoined: the first on-route fix
    after it; None when the neighbouring kept fix is off any route (NaN distance), or there is none.
    """

    first: int
    last: int
    start: float  # estimated (module text: the midpoint with the fix before)
    end: float  # estimated
    n_fixes: int
    i_max: int
    max_distance_m: float
    left: int | None
    rejoined: int | None
    # Bounds, as Speeding's: the last fix known on a route before it (None: none within gap_s), its first and last
    # fixes off the route, the first fix known on a route after it.
    start_min: float | None = None
    start_max: float | None = None
    end_min: float | None = None
    end_max: float | None = None

    @property
    def duration_s(self) -> float:
        """Seconds from the estimated start to the estimated end."""
        return self.end - self.start


def deviations(
    t: FloatArray,
    offset_m: FloatArray,
    tolerance_m: float | npt.ArrayLike,
    keep: BoolArray | None = None,
    params: ReportParams = DEFAULT,
) -> list[Deviation]:
    """Episodes of fixes farther than tolerance_m (scalar or per fix) from the route line, metres (module rule).

    offset_m is NaN where no route applies: such a fix is neither off nor on the route, so it ends an episode
    and is no dip to merge across.
    """
    off = np.asarray(offset_m, dtype=float)
    tol = np.broadcast_to(np.asarray(tolerance_m, dtype=float), off.shape)
    known = np.isfinite(off)
    with np.errstate(invalid="ignore"):
        away = known & (off > tol)
    kept = np.ones(len(t), dtype=bool) if keep is None else np.asarray(keep, dtype=bool)
    k = np.flatnonzero(kept)
    pos = np.full(len(t), -1, dtype=np.int64)
    pos[k] = np.arange(len(k))  # position of each kept fix among the kept ones
    found = condition_runs(
        t,
        away,
        kept,
        min_s=params.deviation_min_s,
        min_fixes=params.deviation_min_fixes,
        max_gap_s=params.gap_s,
        dip_ok=known,
    )

    def on_route(j: int) -> int | None:
        if not 0 <= j < len(k):
            return None
        i = int(k[j])
        return i if known[i] and not away[i] else None

    out: list[Deviation] = []
    for run in found:
        m = run.members
        i = int(m[int(np.argmax(off[m]))])
        out.append(
            Deviation(
                first=run.first,
                last=run.last,
                start=run.start,
                end=run.end,
                n_fixes=len(m),
                i_max=i,
                max_distance_m=float(off[i]),
                left=on_route(int(pos[run.first]) - 1),
                rejoined=on_route(int(pos[run.last]) + 1),
                start_min=run.before,
                start_max=run.seen0,
                end_min=run.seen1,
                end_max=run.after,
            )
        )
    return out
