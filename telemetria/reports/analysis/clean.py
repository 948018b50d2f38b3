"""Which fixes a derivation may use, and which stand still (pure, vectorized over a Track).

Every decision about a fix looks at no more than SPIKE_REACH usable fixes on each side of it, never at a chain
of earlier decisions: a report over a window computed with a few context fixes on each side then makes the same
decisions as the whole track does. Context a window needs: its first fix's previous kept fix and two usable
fixes before that, and two usable fixes after its last fix (six fixes each side when spikes are isolated).
"""

from __future__ import annotations

import numpy as np

from telemetria.geo.geodesic import GEOD
from telemetria.reports.analysis.track import BoolArray, FloatArray, IntArray, Track
from telemetria.reports.knobs import ReportParams

# How many usable fixes on each side a spike test consults: catches runs of up to two bad fixes in a row.
SPIKE_REACH = 2


def usable_mask(track: Track) -> BoolArray:
    """Fixes the tracker marked valid with finite, in-range coordinates that are not the (0, 0) null island."""
    lat, lon = track.lat, track.lon
    with np.errstate(invalid="ignore"):
        in_range = (np.abs(lat) <= 90.0) & (np.abs(lon) <= 180.0)
    usable: BoolArray = track.valid & np.isfinite(track.t) & in_range & ~((lat == 0.0) & (lon == 0.0))
    return usable


def keep_mask(track: Track, params: ReportParams) -> BoolArray:
    """Usable fixes that are not spikes: see usable_mask and spike_mask."""
    keep = usable_mask(track)
    idx = np.flatnonzero(keep)
    keep[idx[spike_mask(track.take(idx), params)]] = False
    return keep


def spike_mask(track: Track, params: ReportParams) -> BoolArray:
    """Spikes among fixes that are all usable: fixes a vehicle could not have visited between two neighbours.

    Fix j is a spike when p → q is plausible and either
    (a) for some p < j < q at most SPIKE_REACH usable fixes away, p → j and j → q both imply more than
        max_jump_kmh (slack per fix: max(accuracy, jitter_floor_m)); or
    (b) with p, q its immediate neighbours, the path p → j → q is longer than the reported speeds allow
        (see _allowed_m) and its detour d(p,j) + d(j,q) - d(p,q) is the largest of j-1, j, j+1: next to a
        spike, a good fix's path through the spike is too long as well, but its detour is shorter.
    """
    n = len(track)
    out = np.zeros(n, dtype=bool)
    # Geodesic metres from each fix to the one `lag` places later, for every lag the tests below need.
    lags = {lag: _dist(track, np.arange(n - lag), np.arange(lag, n)) for lag in range(1, 2 * SPIKE_REACH + 1)}

    def dist(x: IntArray, y: IntArray) -> FloatArray:
        return lags[int(y[0] - x[0])][x] if len(x) else np.zeros(0)

    hard = params.max_jump_kmh / 3.6
    for back in range(1, SPIKE_REACH + 1):
        for ahead in range(1, SPIKE_REACH + 1):
            j = np.arange(back, n - ahead)
            p, q = j - back, j + ahead
            far_in = dist(p, j) > _slack(track, params, p, j) + hard * _dt(track, p, j)
            far_out = dist(j, q) > _slack(track, params, j, q) + hard * _dt(track, j, q)
            out[j] |= far_in & far_out & (dist(p, q) <= _allowed_m(track, params, p, q))
    if n >= 3:
        j = np.arange(1, n - 1)
        d_in, d_out, d_pq = dist(j - 1, j), dist(j, j + 1), dist(j - 1, j + 1)
        detour = np.concatenate([[-np.inf], d_in + d_out - d_pq, [-np.inf]])
        worst = (detour[1:-1] >= detour[:-2]) & (detour[1:-1] >= detour[2:])
        too_long = d_in + d_out > _allowed_m(track, params, j - 1, j + 1, j)
        out[j] |= too_long & worst & (d_pq <= _allowed_m(track, params, j - 1, j + 1))
    return out


def stationary_mask(track: Track, params: ReportParams, keep: BoolArray | None = None) -> BoolArray:
    """Fixes standing still: reported speed ≤ stationary_kmh, or without speed, moved under the jitter radius.

    The jitter radius is max(jitter_floor_m, accuracy) metres from the previous fix in `keep` (default: all).
    """
    n = len(track)
    idx = np.arange(n) if keep is None else np.flatnonzero(keep)
    speed = track.speed_kmh
    out = speed <= params.stationary_kmh
    unknown = idx[np.isnan(speed[idx])]
    if len(unknown):
        pos = np.searchsorted(idx, unknown)
        has_prev = pos > 0
        cur, prev = unknown[has_prev], idx[pos[has_prev] - 1]
        radius = np.fmax(track.accuracy_m[cur], params.jitter_floor_m)
        out[cur] = _dist(track, prev, cur) <= radius
    return out


def _dist(track: Track, a: IntArray, b: IntArray) -> FloatArray:
    """Geodesic metres between fixes a and b (index arrays)."""
    if len(a) == 0:
        return np.zeros(0)
    _, _, d = GEOD.inv(track.lon[a], track.lat[a], track.lon[b], track.lat[b])
    return np.asarray(d, dtype=float)


def _dt(track: Track, a: IntArray, b: IntArray) -> FloatArray:
    return track.t[b] - track.t[a]


def _slack(track: Track, params: ReportParams, *fixes: IntArray) -> FloatArray:
    """Sum over the fixes of max(accuracy, jitter_floor_m): how far their positions may be off, metres."""
    # jitter_floor_m is the least position error we assume for any fix, stationary or not.
    slack: FloatArray = np.sum([np.fmax(track.accuracy_m[f], params.jitter_floor_m) for f in fixes], axis=0)
    return slack


def _allowed_m(track: Track, params: ReportParams, p: IntArray, q: IntArray, j: IntArray | None = None) -> FloatArray:
    """Most metres a vehicle can cover from p to q: max_jump_kmh, tightened by the reported speeds when all known.

    With the speeds of p, q (and j) known, the cap is spike_speed_factor × their maximum + spike_speed_margin_kmh:
    a bus does not average far above every speed it reported around that time.
    """
    fixes = (p, q) if j is None else (p, q, j)
    speeds = np.stack([track.speed_kmh[f] for f in fixes])
    top = speeds.max(axis=0)  # NaN when any is unknown
    cap = np.fmin(params.max_jump_kmh, params.spike_speed_factor * top + params.spike_speed_margin_kmh)
    ends = (p, q) if j is None else (p, j, j, q)  # a path through j carries j's error twice
    allowed: FloatArray = _slack(track, params, *ends) + cap / 3.6 * _dt(track, p, q)
    return allowed
