"""Km accuracy on real OSM extracts: simulated bus drives (telemetria/roads/drives.py) measured as the service does.

    .venv/bin/python -m bench.road_accuracy            # full: 30 paths of 5-40 km per extract, 30 s and 60 s
    .venv/bin/python -m bench.road_accuracy --quick    # what tests/unit/test_road_accuracy.py runs in CI
    .venv/bin/python -m bench.road_accuracy --losses   # where the km are lost (the quick drives)

For each extract of tests/data/osm and each sampling interval, the error of the day's km against the truth for
- *road*: the service (reports' distance.segments with the network, no registered route): the matcher of
  roads/match.py;
- *road, before*: the rule it replaced (issue 20's, kept here to compare): each segment's path decided from its
  two fixes, the one closest to the reported speeds × time, 4 candidates a fix;
- *chords*: no network (straight lines between fixes);
- *no speeds*: the service with a tracker that sends no speed nor heading;
as mean error, mean |error|, worst |error| and the share of paths within 1 %. No database.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from telemetria.reports.analysis import distance
from telemetria.reports.analysis.clean import keep_mask
from telemetria.reports.analysis.distance import segments
from telemetria.reports.analysis.roads import RoadSegments, along_roads
from telemetria.reports.analysis.track import BoolArray, FloatArray, IntArray, Track
from telemetria.reports.knobs import DEFAULT, ReportParams
from telemetria.roads import drives, steps
from telemetria.roads.model import Roads
from telemetria.roads.osmread import read_ways

EXTRACTS = Path(__file__).resolve().parent.parent / "tests" / "data" / "osm"
NAMES = {"porto-alegre": "Porto Alegre (BR)", "sao-paulo": "São Paulo (BR)", "aguascalientes": "Aguascalientes (MX)"}
METHODS = ("road", "road, before", "chords", "no speeds")


@cache
def network(name: str) -> steps.RoadNet:
    return steps.build(1, list(read_ways(EXTRACTS / f"{name}.osm.pbf")))


# A drive "turns round" (turn_arounds): passes a junction again within TURN_LAP_M, or reverses its way of travel by
# more than TURN_DEG within TURN_WITHIN_M.
TURN_LAP_M, TURN_DEG, TURN_WITHIN_M = 1000.0, 150.0, 100.0


@dataclass(frozen=True, slots=True)
class Row:
    extract: str
    interval_s: float
    method: str
    errors: tuple[float, ...]  # per path, percent
    ms: float  # mean time per path

    @property
    def mean(self) -> float:
        return float(np.mean(self.errors))

    @property
    def mean_abs(self) -> float:
        return float(np.mean(np.abs(self.errors)))

    @property
    def worst(self) -> float:
        return float(np.max(np.abs(self.errors)))

    @property
    def within_1(self) -> int:
        return int(np.sum(np.abs(self.errors) <= 1.0))


def km_of(net: steps.RoadNet | None, track: Track) -> float:
    return float(np.sum(segments(track, keep_mask(track, DEFAULT), [], [], DEFAULT, roads=net).length_m))


def _pairwise_roads(
    roads: Roads | None, track: Track, a: IntArray, b: IntArray, dt: FloatArray, chord: FloatArray, todo: BoolArray,
    params: ReportParams,
) -> RoadSegments:  # fmt: skip
    """distance._roads as issue 20 had it: per segment, the plausible path closest to the speeds × time."""
    m = len(a)
    if roads is None or not todo.any():
        return RoadSegments(np.full(m, np.nan), np.zeros(m), np.zeros(m), np.full(m, -1, dtype=np.int64))
    low = chord * (1 - distance.SHORT_SLACK) - distance.SHORT_SLACK_M
    high = np.minimum(
        params.max_jump_kmh / 3.6 * dt + distance.SHORT_SLACK_M, distance.ROAD_DETOUR * chord + distance.ROAD_DETOUR_M
    )
    v = track.speed_kmh / 3.6
    expected = np.where(dt > params.gap_s, np.nan, (v[a] + v[b]) / 2 * dt)
    return along_roads(roads, track, a, b, chord, todo, low, high, expected)


def km_before(net: steps.RoadNet, track: Track) -> float:
    """The km by the rule the matcher replaced (4 candidates a fix, as then)."""
    saved, saved_n = distance._roads, steps.CANDIDATES
    distance._roads, steps.CANDIDATES = _pairwise_roads, 4  # type: ignore[assignment]
    try:
        return km_of(net, track)
    finally:
        distance._roads, steps.CANDIDATES = saved, saved_n  # type: ignore[assignment]


def paths(name: str, count: int, lo_m: float, hi_m: float, seed: int = 34) -> list[list[tuple[int, bool]]]:
    net = network(name)
    rnd = random.Random(f"{name}-{seed}")
    return [drives.chain(net, rnd, rnd.uniform(lo_m, hi_m)) for _ in range(count)]


def rows(name: str, interval_s: float, count: int, lo_m: float, hi_m: float) -> list[Row]:
    net = network(name)
    errs: dict[str, list[float]] = {m: [] for m in METHODS}
    spent: dict[str, float] = {m: 0.0 for m in METHODS}
    for k, path in enumerate(paths(name, count, lo_m, hi_m)):
        seed = 1000 * k + int(interval_s)
        d = drives.drive(net, path, seed, interval_s)
        bare = drives.drive(net, path, seed, interval_s, speeds=False)
        runs = (("road", net, d.fixes), ("road, before", net, d.fixes), ("chords", None, d.fixes),
                ("no speeds", net, bare.fixes))  # fmt: skip
        for method, roads, fixes in runs:
            track = Track.of(fixes)
            if roads is not None:
                roads.forget()
            t = time.perf_counter()
            km = km_before(net, track) if method == "road, before" else km_of(roads, track)
            spent[method] += time.perf_counter() - t
            errs[method].append((km / d.length_m - 1) * 100)
    return [Row(name, interval_s, m, tuple(errs[m]), spent[m] / count * 1000) for m in METHODS]


def table(extracts: list[str], intervals: list[float], count: int, lo_m: float, hi_m: float) -> list[Row]:
    return [r for name in extracts for dt in intervals for r in rows(name, dt, count, lo_m, hi_m)]


def turn_arounds(net: steps.RoadNet, path: list[tuple[int, bool]]) -> list[tuple[float, float]]:
    """Where a drive turns round, as (from, to) metres along it: a junction passed again within TURN_LAP_M (a lap
    round a block), or the way of travel reversed (over TURN_DEG) within TURN_WITHIN_M (a U-turn across a median,
    in a dead end or at a retorno). A shortest path never passes a junction twice."""
    cum = np.concatenate([[0.0], np.cumsum([net.edges[e].length_m for e, _ in path])])
    found: list[tuple[float, float]] = []
    last: dict[int, int] = {}
    for j, (e, fwd) in enumerate(path):
        n = net.edge_end(e, fwd)
        if n in last and cum[j + 1] - cum[last[n] + 1] < TURN_LAP_M:
            found.append((float(cum[last[n] + 1]), float(cum[j + 1])))
        last[n] = j
        out = _travel_deg(net, e, fwd, at_end=True)
        for jj in range(j + 1, len(path)):
            if cum[jj] - cum[j + 1] > TURN_WITHIN_M:
                break
            turn = abs(out - _travel_deg(net, *path[jj], at_end=False)) % 360.0
            if min(turn, 360.0 - turn) > TURN_DEG:
                found.append((float(cum[j + 1]), float(cum[jj])))
                break
    return found


def _travel_deg(net: steps.RoadNet, e: int, fwd: bool, at_end: bool) -> float:
    """The way of travel along edge e driven forward (or not) at its start or at its end, degrees from north."""
    x, y = net.edges[e].x, net.edges[e].y
    i, j = ((-2, -1) if at_end else (0, 1)) if fwd else ((1, 0) if at_end else (-1, -2))
    return math.degrees(math.atan2(float(x[j] - x[i]), float(y[j] - y[i])))


def losses(name: str, interval_s: float, count: int, lo_m: float, hi_m: float) -> tuple[float, float, float, float]:
    """Where the km go, in percent of the metres driven: (the matcher's error, the part of it the shortest road
    path between the true places of each pair of kept fixes already has, the part on segments whose two fixes
    move with no stop between them, the part on segments whose true path turns round between their two fixes).
    The second is what no matcher over shortest paths gets back: the bus drove a longer path between two fixes
    (round a block, across a median and back) than the shortest one."""
    net = network(name)
    driven = error = shortest = moving = turning = 0.0
    for k, path in enumerate(paths(name, count, lo_m, hi_m)):
        d = drives.drive(net, path, 1000 * k + int(interval_s), interval_s)
        turns = turn_arounds(net, path)
        track = Track.of(d.fixes)
        keep = keep_mask(track, DEFAULT)
        seg = segments(track, keep, [], [], DEFAULT, roads=net)
        idx = np.flatnonzero(keep)
        s_at = np.interp(track.t, d.t, d.s_m)
        cum = np.concatenate([[0.0], np.cumsum([net.edges[e].length_m for e, _ in path])])
        for a, b in zip(idx[:-1].tolist(), idx[1:].tolist(), strict=True):
            true = float(s_at[b] - s_at[a])
            err = float(seg.length_m[b]) - true
            error += err
            stopped = any(track.t[a] < st.start_s < track.t[b] for st in d.stops)
            if track.speed_kmh[a] > 3 and track.speed_kmh[b] > 3 and not stopped:
                moving += err
            if any(lo < s_at[b] and hi > s_at[a] for lo, hi in turns):
                turning += err
            if true < 1.0:
                continue
            ends = []
            for s in (float(s_at[a]), float(s_at[b])):
                j = min(max(int(np.searchsorted(cum, s, side="right")) - 1, 0), len(path) - 1)
                lon, lat = net.to_lonlat([np.interp(s, d.s_m, d.x)], [np.interp(s, d.s_m, d.y)])
                ends.append((path[j], float(lat[0]), float(lon[0])))
            (ea, lat0, lon0), (eb, lat1, lon1) = ends
            links = net.links(lat0, lon0, lat1, lon1, true + 500.0)
            best = [float(links.length_m[i, j]) for i, p in enumerate(links.froms) for j, q in enumerate(links.tos)
                    if (p.edge, p.forward) == ea and (q.edge, q.forward) == eb]  # fmt: skip
            if best and math.isfinite(best[0]):
                shortest += best[0] - true
        driven += d.length_m
    return error / driven * 100, shortest / driven * 100, moving / driven * 100, turning / driven * 100


def markdown(found: list[Row]) -> str:
    out = ["| extract | fixes every | method | mean error | mean abs error | worst | within 1 % | ms a path |",
           "|---|---:|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in found:
        out.append(
            f"| {NAMES.get(r.extract, r.extract)} | {r.interval_s:.0f} s | {r.method} | {r.mean:+.2f} % | "
            f"{r.mean_abs:.2f} % | {r.worst:.1f} % | {r.within_1} of {len(r.errors)} | {r.ms:.0f} |"
        )
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--extract", action="append")
    ap.add_argument("--losses", action="store_true")
    args = ap.parse_args()
    names = args.extract or sorted(p.name.removesuffix(".osm.pbf") for p in EXTRACTS.glob("*.osm.pbf"))
    if args.losses:
        print("| extract | fixes every | road error | of it, shortest path between the true places | "
              "of it, on moving segments with no stop between | of it, where the bus turns round between two fixes "
              "|\n|---|---:|---:|---:|---:|---:|")  # fmt: skip
        for name in names:
            for dt in (30.0, 60.0):
                err, short, moving, turning = losses(name, dt, 8, 3000.0, 8000.0)
                print(f"| {NAMES.get(name, name)} | {dt:.0f} s | {err:+.2f} % | {short:+.2f} % | {moving:+.2f} % "
                      f"| {turning:+.2f} % |")  # fmt: skip
    elif args.quick:
        print(markdown(table(names, [30.0, 60.0], 6, 3000.0, 8000.0)))
    else:
        print(markdown(table(names, [30.0, 60.0], 30, 5000.0, 40000.0)))


if __name__ == "__main__":
    main()
