"""The two ways of measuring km along the roads, side by side on the simulator's tracks (issue 20's comparison).

    .venv/bin/python -m bench.road_methods

No database. For the runs of tests/unit/test_road_km.py (a morning with corners, a morning with a silent gap), on
the simulator's grid as the network: km error against the truth and time per run of
- *pairwise*, what the service uses (telemetria/roads/steps.py via the reports' distance.segments): each segment's
  road path decided from its two fixes only;
- *HMM*, a hidden-Markov matcher in the style of Newson & Krumm (2009), written here over the same network and
  candidates: emission Gaussian on a fix's distance from its road (σ = 10 m), transition exponential on
  |road metres − chord| (β = 50 m), Viterbi over each chain of fixes, a chain broken where no transition is
  possible; km = road metres between the chosen places (chords across breaks; standing jitter and unlinked
  fixes count 0, as in the service);
and, for each, whether a window computed with 6 fixes of context on each side gives the whole track's per-segment
metres (the property every derived figure of the service keeps): the count of segments that differ.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from datetime import UTC, datetime
from itertools import pairwise

import numpy as np

from telemetria.geo.geodesic import GEOD
from telemetria.reports.analysis.clean import keep_mask
from telemetria.reports.analysis.distance import segments
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.roads import steps
from telemetria.roads.steps import Place, RoadNet
from telemetria.sim import SimRun, TrackerParams, simulate_vehicle
from telemetria.sim.roadnet import grid_ways
from telemetria.sim.roads import make_grid

T0 = datetime(2026, 3, 2, 10, 0, tzinfo=UTC)
SIGMA_M, BETA_M, CONTEXT = 10.0, 50.0, 6
MOVING_GAP_SEEDS = [0, 1, 2, 7, 10, 13, 15, 16, 19]  # tests/unit/test_road_km.py, less the school-in-the-gap ones


def pairwise_m(net: RoadNet, track: Track) -> np.ndarray:
    """Per fix, the metres of the segment ending at it, as the service measures them."""
    net.forget()
    return segments(track, keep_mask(track, DEFAULT), [], [], DEFAULT, roads=net).length_m


def hmm_m(net: RoadNet, track: Track) -> np.ndarray:
    """Per fix, the metres of the segment ending at it, by a Viterbi over the kept fixes (Newson & Krumm)."""
    idx = np.flatnonzero(keep_mask(track, DEFAULT))
    out = np.zeros(len(track))
    cands: list[list[Place]] = [net.places(float(track.lat[i]), float(track.lon[i])) for i in idx]
    chain: list[int] = []  # positions in idx of the current chain
    score: list[float] = []
    back: list[list[int]] = []
    dists: list[list[list[float]]] = []

    def close() -> None:
        if not chain:
            return
        k = int(np.argmax(score))
        picks = [k]
        for step in range(len(chain) - 1, 0, -1):
            k = back[step][k]
            picks.append(k)
        picks.reverse()
        for n in range(1, len(chain)):
            out[idx[chain[n]]] = dists[n - 1][picks[n - 1]][picks[n]]

    for p, i in enumerate(idx.tolist()):
        here = cands[p]
        emit = [-0.5 * (c.off_m / SIGMA_M) ** 2 for c in here]
        if chain and here:
            j = idx[chain[-1]]
            dt = float(track.t[i] - track.t[j])
            chord = float(GEOD.inv(track.lon[j], track.lat[j], track.lon[i], track.lat[i])[2])
            d = net.distances(cands[chain[-1]], here, DEFAULT.max_jump_kmh / 3.6 * dt + 100.0)
            new = [
                max((score[a] - abs(d[a][b] - chord) / BETA_M, a) for a in range(len(score))) for b in range(len(here))
            ]
            if all(math.isinf(v) for v, _ in new):  # no way through: break the chain, the segment is a chord
                close()
                out[i] = chord
                chain, score, back, dists = [p], emit, [[]], []
                continue
            chain.append(p)
            score = [v + e for (v, _), e in zip(new, emit, strict=True)]
            back.append([a for _, a in new])
            dists.append(d)
        else:
            close()
            if chain:
                j = idx[chain[-1]]
                out[i] = float(GEOD.inv(track.lon[j], track.lat[j], track.lon[i], track.lat[i])[2])
            chain, score, back, dists = ([p], emit, [[]], []) if here else ([], [], [], [])
    close()
    # The same rules as the service for what is not driving: jitter while standing and unlinked fixes count 0.
    idle = segments(track, keep_mask(track, DEFAULT), [], [], DEFAULT).length_m == 0
    out[idle] = 0.0
    return out


def windows_differing(measure: Callable[[RoadNet, Track], np.ndarray], net: RoadNet, track: Track) -> int:
    """Segments whose metres differ between the whole track and 8 windows with CONTEXT fixes of context."""
    whole = measure(net, track)
    rnd = random.Random(1)
    cuts = sorted(rnd.uniform(track.t[0], track.t[-1]) for _ in range(7))
    edges = [track.t[0], *cuts, track.t[-1] + 1.0]
    parts = []
    for t0, t1 in pairwise(edges):
        i0, i1 = np.searchsorted(track.t, [t0, t1])
        lo, hi = max(0, i0 - CONTEXT), min(len(track), i1 + CONTEXT)
        piece = track.take(np.arange(lo, hi))
        m = measure(net, piece)
        parts.append(m[(piece.t >= t0) & (piece.t < t1)])
    return int(np.sum(np.abs(np.concatenate(parts) - whole) > 1e-6))


def runs() -> list[tuple[str, SimRun]]:
    out = [(f"morning {s}", simulate_vehicle(s, T0)) for s in range(8)]
    gap = TrackerParams(silent_gap=True, silent_gap_s=(600.0, 600.0))
    return out + [(f"gap {s}", simulate_vehicle(s, T0, tracker=gap)) for s in MOVING_GAP_SEEDS]


def main() -> None:
    print(f"{'run':12} {'pairwise %':>11} {'HMM %':>8} {'pairwise ms':>12} {'HMM ms':>8} {'windows ≠ pw':>13} "
          f"{'windows ≠ HMM':>14}")  # fmt: skip
    errs: dict[str, list[float]] = {"pw": [], "hmm": []}
    for name, s in runs():
        seed = int(name.split()[-1])
        net = steps.build(seed + 1, grid_ways(make_grid(seed)))
        track = Track.of([f for u in s.uploads for f in u.fixes])
        truth = s.truth.distance_m
        row = []
        for key, fn in (("pw", pairwise_m), ("hmm", hmm_m)):
            t = time.perf_counter()
            m = float(np.sum(fn(net, track)))
            row.append((m / truth - 1) * 100)
            row.append((time.perf_counter() - t) * 1000)
            errs[key].append(abs(m / truth - 1) * 100)
        pw_w, hmm_w = windows_differing(pairwise_m, net, track), windows_differing(hmm_m, net, track)
        print(f"{name:12} {row[0]:>+11.2f} {row[2]:>+8.2f} {row[1]:>12.0f} {row[3]:>8.0f} {pw_w:>13} {hmm_w:>14}")
    print(f"worst |error|: pairwise {max(errs['pw']):.2f} %, HMM {max(errs['hmm']):.2f} %")


if __name__ == "__main__":
    main()
