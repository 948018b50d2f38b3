"""Map matching: which road path a vehicle took between consecutive fixes, by a hidden-Markov model (pure).

The states of a fix are the places it may lie on (roads/steps.py: the CANDIDATES nearest edges within the matching
radius); a fix's *emission* weighs its distance from each (Gaussian, σ = SIGMA_M), and its reported heading
against the way the road runs there when it moves; a *transition* weighs the road path between two places as
Newson & Krumm (2009) do, by how far its length departs from the straight line between the fixes (exponential,
β = BETA_M), and adds soft evidence in metres of that same scale:

- speed: a vehicle reported at v0 and v1 km/h covers at least what braking from v0 to a halt and pulling away to
  v1 take (MIN_DECEL, MIN_ACCEL), whatever happened in between; a shorter path is short of that many metres (a
  loop round a block is not taken for standing still). It covers at most what the faster of the two speeds plus
  SPEED_ROOM_KMH allows in the time; a longer path is long by the excess. Between those bounds the speeds say
  nothing: a bus may stop between two fixes, so the path's length is never pulled towards speed × time;
- heading: each place is a state once per direction one may drive along its road (a two-way street twice);
  a direction against a moving fix's reported heading costs HEADING_M (the wrong carriageway, a U-turn that
  did not happen), and a path must leave and reach each place in its direction;
- one-ways are never driven against (the search respects them), and a path must be plausible as the route
  method's: at least the chord less the offsets, at most max_jump_kmh × time (steps.py bounds), else it is not
  a road segment.

**Context by fix order, bounded.** The path of the segment from kept fix p to p+1 is the one the Viterbi picks
over the kept fixes p-REACH .. p+1+REACH only (a fixed-lag smoother on both sides), so it depends on those fixes
and on no others: a window of the day computed with REACH kept fixes of context on each side (and the cleaning's
own) gives the same metres as the whole day, live or late, in any arrival order. A segment the routes explain,
standing jitter, an unlinked pair, or a pair with no plausible road path breaks the chain: the fixes on its two
sides are matched independently.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from telemetria.roads.model import FloatArray, IntArray, Links, Place, Roads
from telemetria.roads.steps import CANDIDATES, RADIUS_M

SIGMA_M = 10.0  # GPS noise and the road's half-width: emission σ
BETA_M = 30.0  # transition scale: metres of |road path − chord| (and of soft evidence) per unit of log-likelihood
HEADING_M = 150.0  # a moving fix's heading against the direction of travel: × (1 - cos angle) / 2, graded
MIN_DECEL, MIN_ACCEL = 2.5, 2.0  # m/s²: stronger than a bus brakes or pulls away, so the bound stays a bound
SPEED_ROOM_KMH = 25.0  # a vehicle may run this much faster between two fixes than the faster of the two reports
REACH = 3  # kept fixes of context on each side of a segment
IMPLAUSIBLE = -15.0  # log-likelihood of a transition the bounds exclude: a break in the chain, at a price
# (450 m of BETA_M: a detour costing more than that is less likely than a fix whose true road is not a candidate)
BREAK_M = -IMPLAUSIBLE * BETA_M  # at 30 s, metres beyond the chord at which a path costs as much as a break (× _beta)
ABSENT = -1.0e9  # ... of a state a fix does not have (fewer candidates than CANDIDATES)
# Newson & Krumm estimate β for each sampling interval, and it grows with it: at 60 s a bus's path departs from the
# chord by 100-160 m at the median on our extracts (30-40 m at 30 s), so β = BETA_M × dt / 30 s (dt ≤ 60 s).
BETA_REF_S, BETA_MAX_S = 30.0, 60.0
# Speed as soft evidence: a path's length over (mean of the two speeds × time) is, for a bus that did not stop
# between two moving fixes, about 1 (log-normal, GO_SPREAD: 5-95 % of 0.8-1.5 on our extracts); for one that
# stopped, anything up to 1 (uniform). A bus stops about every STOP_EVERY_S of driving (a stop every 1.2 km at
# ~25 km/h): the mixture's weight of a stop between two fixes. SPEED_FLOOR keeps a path past both from costing infinity.
GO_SPREAD = 0.25
STOP_EVERY_S = 180.0
SPEED_FLOOR = 1e-3
MOVING_KMH = 3.0  # both ends faster than this for the speeds to say how far the vehicle went


@dataclass(frozen=True, slots=True, eq=False)
class Matched:
    """Per segment k: the chosen road path's metres (NaN: no plausible road path, the segment stays the chord),
    its paved metres, and the way its end fix lies on (-1: none)."""

    length_m: FloatArray
    paved_m: FloatArray
    way_to: IntArray


def min_path_m(v0_kmh: FloatArray, v1_kmh: FloatArray, dt_s: FloatArray) -> FloatArray:
    """The least a vehicle covers between fixes reporting v0 and v1: braking to a halt and pulling away, never more
    than the mean of the two speeds × the time (0 where a speed is unknown)."""
    v0, v1 = v0_kmh / 3.6, v1_kmh / 3.6
    least = v0 * v0 / (2 * MIN_DECEL) + v1 * v1 / (2 * MIN_ACCEL)
    out = np.minimum(least, (v0 + v1) / 2 * dt_s)
    return np.where(np.isfinite(out), out, 0.0)


def max_path_m(v0_kmh: FloatArray, v1_kmh: FloatArray, dt_s: FloatArray) -> FloatArray:
    """The most the speeds allow between two fixes (inf where a speed is unknown)."""
    top = (np.fmax(v0_kmh, v1_kmh) + SPEED_ROOM_KMH) / 3.6 * dt_s
    return np.where(np.isfinite(v0_kmh) & np.isfinite(v1_kmh), top, np.inf)


def _angle(a: FloatArray, b: FloatArray) -> FloatArray:
    d = np.abs(a - b) % 360.0
    return np.minimum(d, 360.0 - d)


def match(
    roads: Roads, lat: FloatArray, lon: FloatArray, speed_kmh: FloatArray, heading_deg: FloatArray,
    moving: npt.NDArray[np.bool_], dt_s: FloatArray, chord_m: FloatArray, todo: npt.NDArray[np.bool_],
    low_m: FloatArray, high_m: FloatArray, speeds: npt.NDArray[np.bool_],
) -> Matched:  # fmt: skip
    """The road paths of the segments between consecutive points (segment k from point k to k+1).

    Per point: position, reported speed (NaN: none), heading (NaN: none) and whether it moves. Per segment: time,
    chord, whether it is to be matched (else a break), its plausible length bounds [low_m, high_m] before the
    offsets, and whether the speeds at its ends are evidence (no gap between them).
    """
    n = len(lat)
    m = n - 1
    out = Matched(np.full(max(m, 0), np.nan), np.zeros(max(m, 0)), np.full(max(m, 0), -1, dtype=np.int64))
    if m <= 0 or not todo.any():
        return out
    c = 2 * CANDIDATES  # each place once per direction
    way = np.full((n, c), -1, dtype=np.int64)
    least = min_path_m(speed_kmh[:-1], speed_kmh[1:], dt_s)
    most = max_path_m(speed_kmh[:-1], speed_kmh[1:], dt_s)
    ks = np.flatnonzero(todo)
    ends_of = np.unique(np.concatenate([ks, ks + 1]))
    roads.prepare(lat[ends_of], lon[ends_of])  # every fix's places in one query, not one query a fix
    # Each segment's road paths, gathered into (segment, place of its first fix, place of its second) arrays (inf
    # where a place is absent) so that the evidence is weighed for all segments at once, not by numpy calls per
    # segment; the same element-wise arithmetic as one segment at a time, so the same numbers to the last bit.
    beta = np.array([_beta(float(v)) for v in dt_s.tolist()])
    reach = high_m + 2 * RADIUS_M
    # Between fixes with no gap, a path longer than the chord by -IMPLAUSIBLE × β costs more than a break: the
    # search need not go that far (it was most of a day's cost), unless it then finds no plausible path at all (the
    # only one may be that long). Across a gap the shortest plausible path counts, however long: searched whole.
    near = np.where(speeds, np.minimum(reach, chord_m - IMPLAUSIBLE * beta), reach)
    off = np.full((n, c), np.nan)
    travel = np.full((n, c), np.nan)
    places_of: dict[int, tuple[Place, ...]] = {}
    L = np.full((m, c, c), np.inf)
    linked: list[Links | None] = [None] * m

    def fill(k: int, links: Links) -> None:
        linked[k] = links
        a, b = len(links.froms), len(links.tos)
        L[k] = np.inf
        L[k, :a, :b] = links.length_m
        for i, places in ((k, links.froms), (k + 1, links.tos)):
            if i not in places_of:
                places_of[i] = places
                off[i, : len(places)] = [p.off_m for p in places]
                travel[i, : len(places)] = [p.travel_deg for p in places]
                way[i, : len(places)] = [roads.edge_way(p.edge) for p in places]

    for k in ks.tolist():
        fill(k, roads.links(float(lat[k]), float(lon[k]), float(lat[k + 1]), float(lon[k + 1]), float(near[k])))
    ok = _plausible(L, off[:-1], off[1:], low_m, high_m)
    again = np.flatnonzero(todo & (near < reach) & ~ok.any(axis=(1, 2))).tolist()
    for k in again:
        fill(k, roads.links(float(lat[k]), float(lon[k]), float(lat[k + 1]), float(lon[k + 1]), float(reach[k])))
    if again:
        ok[again] = _plausible(L[again], off[again], off[np.asarray(again) + 1], low_m[again], high_m[again])
    have = np.array([x is not None and len(x.froms) > 0 and len(x.tos) > 0 for x in linked])
    seen = np.zeros(n, dtype=bool)
    seen[:-1] |= have
    seen[1:] |= have
    way[~seen] = -1
    placed = seen[:, None] & np.isfinite(off)
    with np.errstate(invalid="ignore"):
        weight = -0.5 * (off / SIGMA_M) ** 2 - _heading_cost(travel, heading_deg, moving) / BETA_M
    emis = np.where(placed, weight, ABSENT)
    slack = off[:-1, :, None] + off[1:, None, :]
    Lz = np.where(np.isfinite(L), L, 0.0)  # (excluded by ok)
    ll = -np.abs(Lz - chord_m[:, None, None]) / beta[:, None, None]
    sp = np.flatnonzero(speeds & have)
    if len(sp):
        Ls, sl = Lz[sp], slack[sp]
        bounds = np.maximum(0.0, least[sp, None, None] - sl - Ls) + np.maximum(0.0, Ls - most[sp, None, None] - sl)
        ll[sp] = ll[sp] - bounds / BETA_M + _speed_ll(Ls, speed_kmh[sp], speed_kmh[sp + 1], dt_s[sp])
    trans = np.where(ok, ll, IMPLAUSIBLE)
    length = np.where(ok, L, np.inf)
    paved = np.zeros((m, c, c))
    for k in np.flatnonzero(have).tolist():
        x = linked[k]
        assert x is not None
        paved[k, : len(x.froms), : len(x.tos)] = x.paved_m
    trans[~have | ~ok.any(axis=(1, 2))] = 0.0  # not matched, or nothing plausible: a break
    emis[~seen, 0] = 0.0  # a point no matched segment touches: one neutral state
    pick_a, pick_b = _viterbi_windows(emis, trans, REACH)
    rows = np.arange(m)
    chosen = length[rows, pick_a, pick_b]
    good = todo & np.isfinite(chosen) & np.isfinite(length[rows, pick_a, pick_b])
    out.length_m[good] = chosen[good]
    out.paved_m[good] = paved[rows, pick_a, pick_b][good]
    out.way_to[good] = way[rows + 1, pick_b][good]
    return out


def _beta(dt_s: float) -> float:
    """The transition's scale for fixes dt_s apart (Newson & Krumm's β, growing with the sampling interval)."""
    return BETA_M * max(1.0, min(dt_s, BETA_MAX_S) / BETA_REF_S)


def _speed_ll(L: FloatArray, v0_kmh: FloatArray, v1_kmh: FloatArray, dt: FloatArray) -> FloatArray:
    """Log-likelihood (0 at best) of road paths of L[k] metres (one row of L per segment) between two moving fixes
    reporting v0[k] and v1[k] km/h dt[k] seconds apart: a mixture of driving on (L about the speeds × time) and
    stopping in between (anything up to it). Zero where a fix stands: then only the bounds of min_path_m and
    max_path_m speak."""
    out: FloatArray = np.zeros_like(L)
    go_on = np.flatnonzero((v0_kmh > MOVING_KMH) & (v1_kmh > MOVING_KMH))
    if not len(go_on):
        return out
    shape = (len(go_on), *([1] * (L.ndim - 1)))
    v0, v1, t = v0_kmh[go_on], v1_kmh[go_on], dt[go_on]
    expect = ((v0 + v1) / 2 / 3.6 * t).reshape(shape)
    r = np.maximum(L[go_on] / expect, 1e-6)
    s = GO_SPREAD
    pi = np.array([1 - math.exp(-v / STOP_EVERY_S) for v in t.tolist()])
    go = np.exp(-0.5 * (np.log(r) / s) ** 2) / (r * s * math.sqrt(2 * math.pi))
    p = (1 - pi.reshape(shape)) * go + pi.reshape(shape) * (r <= 1.0) + SPEED_FLOOR
    top = np.array([(1 - v) / (s * math.sqrt(2 * math.pi)) + v + SPEED_FLOOR for v in pi.tolist()])
    out[go_on] = np.log(p / top.reshape(shape))
    return out


def _plausible(
    L: FloatArray, off_a: FloatArray, off_b: FloatArray, low: FloatArray, high: FloatArray
) -> npt.NDArray[np.bool_]:
    """Per segment and pair of places (L[k, i, j]: the road path's metres from place i of its first fix, off_a[k, i]
    metres from it, to place j of its second), whether it is one the vehicle may have driven: within [low[k],
    high[k]] give or take the two offsets, or standing (0 m)."""
    slack = off_a[:, :, None] + off_b[:, None, :]
    lo, hi = low[:, None, None], high[:, None, None]
    with np.errstate(invalid="ignore"):
        ok: npt.NDArray[np.bool_] = np.isfinite(L) & (((L >= lo - slack) & (L <= hi + slack)) | (L == 0))
    return ok


def _heading_m(places: tuple[Place, ...], heading: float, moving: bool) -> FloatArray:
    """HEADING_M for each directed place whose direction of travel is against the moving fix's reported heading."""
    travel = np.array([[p.travel_deg for p in places]])
    out: FloatArray = _heading_cost(travel, np.array([heading]), np.array([moving]))[0]
    return out


def _heading_cost(travel: FloatArray, heading: FloatArray, moving: npt.NDArray[np.bool_]) -> FloatArray:
    """Per point and directed place (travel[i, j], its direction of travel), HEADING_M × (1 - cos θ) / 2, θ the
    angle from the point's reported heading: 0 where the point stands or reports none."""
    speaks = moving & np.isfinite(heading)
    out: FloatArray = np.zeros_like(travel)
    rows = np.flatnonzero(speaks)
    angle = _angle(travel[rows], np.broadcast_to(heading[rows, None], travel[rows].shape))
    out[rows] = HEADING_M * (1 - np.cos(np.radians(angle))) / 2
    return out


def _viterbi_windows(emis: FloatArray, trans: FloatArray, reach: int) -> tuple[IntArray, IntArray]:
    """For each segment k, the states of points k and k+1 on the best path over points k-reach .. k+1+reach
    (all segments at once: the windows are padded with neutral points and breaks at the track's ends)."""
    n, c = emis.shape
    m = n - 1
    neutral = np.full((reach, c), ABSENT)
    neutral[:, 0] = 0.0
    e = np.concatenate([neutral, emis, neutral])  # padded point i ↔ point i - reach
    t = np.concatenate([np.zeros((reach, c, c)), trans, np.zeros((reach, c, c))])  # t[i] joins e[i] and e[i+1]
    width = 2 * reach + 2
    starts = np.arange(m)  # window of segment k: padded points k .. k + width - 1
    msg = e[starts]
    back = np.zeros((width, m, c), dtype=np.int64)
    for j in range(1, width):
        cand = msg[:, :, None] + t[starts + j - 1]
        back[j] = np.argmax(cand, axis=1)
        msg = np.take_along_axis(cand, back[j][:, None, :], axis=1)[:, 0, :] + e[starts + j]
    state = np.argmax(msg, axis=1)
    rows = np.arange(m)
    picks = np.zeros((width, m), dtype=np.int64)
    picks[width - 1] = state
    for j in range(width - 1, 0, -1):
        state = back[j][rows, state]
        picks[j - 1] = state
    return picks[reach], picks[reach + 1]
