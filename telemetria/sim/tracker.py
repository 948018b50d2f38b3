"""What a tracker makes of the ground truth: noisy fixes at an interval, uploaded live or in late batches (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

import numpy as np

from telemetria.fix import Fix
from telemetria.sim.polyline import GEOD
from telemetria.sim.truth import Truth

Range = tuple[float, float]


@dataclass(frozen=True, slots=True)
class TrackerParams:
    """How a tracker reports: times s, distances m, speeds km/h; ranges are uniform draws."""

    noise_m: float = 5.0  # 1-σ GPS error along each axis (east, north)
    noise_tau_s: float = 60.0  # GPS error wanders rather than jumps: Gauss-Markov correlation time
    speed_noise_kmh: float = 1.0
    heading_noise_deg: float = 3.0
    latency_s: Range = (0.3, 2.5)  # from fix time to upload on a working link
    loss_per_hour: float = 1.0  # signal-loss windows start as a Poisson process
    loss_s: Range = (120.0, 900.0)
    resend_max: int = 5  # a batch re-sends up to this many fixes that were already acknowledged
    shuffle_batches: bool = False  # batches arrive out of order
    outlier: bool = False  # one fix jumps far away
    outlier_m: Range = (800.0, 3000.0)
    silent_gap: bool = False  # the tracker is off for a while: no fixes at all
    silent_gap_s: Range = (300.0, 1200.0)
    odometer_start_m: float = 0.0
    altitude_m: float = 180.0  # ground level around Jaru


@dataclass(frozen=True, slots=True)
class Upload:
    """One HTTP post: when it is sent (UTC), its fixes, and how many of them were acknowledged before."""

    sent_at: datetime
    fixes: list[Fix]
    resent: int = 0


@dataclass(frozen=True, slots=True, eq=False)
class TrackerLog:
    """The tracker's own ground truth; offsets in seconds from the truth's start, windows half-open [a, b)."""

    t_s: np.ndarray  # when each fix was produced
    error_east_m: np.ndarray  # GPS error put into each fix (the outlier's jump not included)
    error_north_m: np.ndarray
    loss: tuple[tuple[float, float], ...]  # no link: fixes made inside are buffered and sent at b
    silent: tuple[float, float] | None  # tracker off: no fixes made inside
    outlier_t_s: float | None


def track(
    truth: Truth, rng: np.random.Generator, interval_s: int = 30, p: TrackerParams = TrackerParams()
) -> tuple[list[Upload], TrackerLog]:
    """Fixes every interval_s seconds (whole seconds ≥ 1) and the uploads that carry them, ordered by send time."""
    if interval_s < 1 or interval_s != int(interval_s):
        raise ValueError(f"interval_s must be a whole number of seconds ≥ 1, got {interval_s}")
    # Independent streams: changing the interval or the noise does not move the loss windows, and vice versa.
    noise_rng, link_rng, outlier_rng = rng.spawn(3)
    idx = np.arange(0, len(truth.t_s), int(interval_s))
    gap = _silent_gap(truth, link_rng, p)  # drawn even when unused, so the loss windows stay put
    silent = gap if p.silent_gap else None
    if silent:
        t = truth.t_s[idx]
        idx = idx[(t < silent[0]) | (t >= silent[1])]
    t = truth.t_s[idx]
    east = _gauss_markov(t, p.noise_m, p.noise_tau_s, noise_rng)
    north = _gauss_markov(t, p.noise_m, p.noise_tau_s, noise_rng)
    jump_e = np.zeros(len(t))
    jump_n = np.zeros(len(t))
    outlier_t = None
    moving = np.flatnonzero(truth.speed_kmh[idx] > 10.0)
    if p.outlier and len(moving) > 2:
        k = int(moving[outlier_rng.integers(1, len(moving) - 1)])
        az = outlier_rng.uniform(0, 2 * math.pi)
        far = outlier_rng.uniform(*p.outlier_m)
        jump_e[k], jump_n[k] = far * math.sin(az), far * math.cos(az)
        outlier_t = float(t[k])
    fixes = _fixes(truth, idx, east + jump_e, north + jump_n, noise_rng, p)
    loss = _loss_windows(truth.duration_s, silent, link_rng, p)
    uploads = _uploads(truth, t, fixes, loss, link_rng, p)
    return uploads, TrackerLog(t, east, north, loss, silent, outlier_t)


def _gauss_markov(t: np.ndarray, sigma: float, tau: float, rng: np.random.Generator) -> np.ndarray:
    """A stationary first-order Gauss-Markov error of standard deviation sigma sampled at times t."""
    w = rng.standard_normal(len(t)) * sigma
    if len(t) == 0:
        return w
    rho = np.exp(-np.diff(t) / tau) if tau > 0 else np.zeros(len(t) - 1)
    out = np.empty(len(t))
    out[0] = w[0]
    for k in range(1, len(t)):
        out[k] = rho[k - 1] * out[k - 1] + math.sqrt(1.0 - rho[k - 1] ** 2) * w[k]
    return out


def _fixes(
    truth: Truth, idx: np.ndarray, east: np.ndarray, north: np.ndarray, rng: np.random.Generator, p: TrackerParams
) -> list[Fix]:
    n = len(idx)
    lon, lat, _ = GEOD.fwd(truth.lon[idx], truth.lat[idx], np.degrees(np.arctan2(east, north)), np.hypot(east, north))
    v = truth.speed_kmh[idx]
    still = v <= 0.0
    # Standing still, GPS still reports a little speed and a wandering heading.
    speed = np.where(still, np.abs(rng.normal(0, 0.4, n)), np.maximum(0.0, v + rng.normal(0, p.speed_noise_kmh, n)))
    heading = (truth.heading_deg[idx] + rng.normal(0, 1, n) * np.where(still, 15.0, p.heading_noise_deg)) % 360.0
    sats = np.clip(np.round(10 + 2 * _gauss_markov(truth.t_s[idx], 1.0, 300.0, rng)), 5, 16).astype(int)
    hdop = np.clip(0.5 + 5.0 / sats + rng.normal(0, 0.05, n), 0.6, 3.0)
    terrain = p.altitude_m + 20 * np.sin(truth.lon[idx] * 90.0) + 15 * np.cos(truth.lat[idx] * 120.0)
    alt = terrain + rng.normal(0, 1.5 * p.noise_m, n)  # vertical error is larger than horizontal
    odo = p.odometer_start_m + truth.dist_m[idx]
    return [
        Fix(
            ts=truth.time(float(truth.t_s[i])),
            lat=round(float(lat[k]), 7),
            lon=round(float(lon[k]), 7),
            speed_kmh=round(float(speed[k]), 1),
            heading_deg=round(float(heading[k]), 1),
            altitude_m=round(float(alt[k]), 1),
            accuracy_m=round(max(1.0, 1.5 * p.noise_m * float(hdop[k])), 1),
            hdop=round(float(hdop[k]), 1),
            satellites=int(sats[k]),
            ignition=bool(truth.ignition[i]),
            odometer_m=round(float(odo[k]), 1),
        )
        for k, i in enumerate(idx)
    ]


def _silent_gap(truth: Truth, rng: np.random.Generator, p: TrackerParams) -> tuple[float, float]:
    """A window in the middle of the run when the tracker is off, seconds."""
    length = float(rng.uniform(*p.silent_gap_s))
    a = float(np.floor(rng.uniform(0.2, 0.8) * max(0.0, truth.duration_s - length)))
    return a, a + round(length)


def _loss_windows(
    duration: float, silent: tuple[float, float] | None, rng: np.random.Generator, p: TrackerParams
) -> tuple[tuple[float, float], ...]:
    """Signal-loss windows over the run, not overlapping each other or the silent gap, seconds."""
    if p.loss_per_hour <= 0:
        return ()
    out: list[tuple[float, float]] = []
    a = float(rng.exponential(3600.0 / p.loss_per_hour))
    while a < duration:
        b = a + float(rng.uniform(*p.loss_s))
        if not (silent and a < silent[1] and silent[0] < b):
            out.append((float(np.floor(a)), float(np.floor(b))))
        a = b + float(rng.exponential(3600.0 / p.loss_per_hour))
    return tuple(out)


def _uploads(
    truth: Truth,
    t: np.ndarray,
    fixes: list[Fix],
    loss: tuple[tuple[float, float], ...],
    rng: np.random.Generator,
    p: TrackerParams,
) -> list[Upload]:
    uploads: list[Upload] = []
    latency = rng.uniform(*p.latency_s, size=len(fixes) + len(loss))
    again = rng.integers(0, p.resend_max + 1, size=len(loss))
    shuffle_rng = rng.spawn(1)[0]  # shuffling or not leaves every other draw where it was
    starts = np.asarray([a for a, _ in loss])
    w = np.searchsorted(starts, t, side="right") - 1
    inside = (w >= 0) & (t < np.asarray([b for _, b in loss] or [0.0])[np.maximum(w, 0)])
    for k, fix in enumerate(fixes):
        if not inside[k]:
            uploads.append(Upload(fix.ts + timedelta(seconds=float(latency[k])), [fix]))
    for j, (a, b) in enumerate(loss):
        held = [f for k, f in enumerate(fixes) if inside[k] and w[k] == j]
        if not held:
            continue
        before = int(np.searchsorted(t, a))  # fixes made before the link went down
        n_again = min(before, int(again[j]))
        # Trackers keep acknowledged fixes a while and often send part of them again.
        batch = [replace(f) for f in fixes[before - n_again : before]] + held
        if p.shuffle_batches:
            batch = [batch[i] for i in shuffle_rng.permutation(len(batch))]
        uploads.append(Upload(truth.time(b + float(latency[len(fixes) + j])), batch, n_again))
    uploads.sort(key=lambda u: u.sent_at)
    return uploads
