"""Km accuracy on real OSM extracts: simulated bus drives (telemetria/roads/drives.py) measured as the service does.

    .venv/bin/python -m bench.road_accuracy            # full: 30 paths of 5-40 km per extract, 30 s and 60 s
    .venv/bin/python -m bench.road_accuracy --quick    # what tests/unit/test_road_accuracy.py runs in CI

For each extract of tests/data/osm and each sampling interval, the error of the day's km against the truth for
- *road*: the service (reports' distance.segments with the network, no registered route);
- *chords*: no network (straight lines between fixes);
- *no speeds*: the service with a tracker that sends no speed nor heading;
as mean error, mean |error|, worst |error| and the share of paths within 1 %. No database.
"""

from __future__ import annotations

import argparse
import random
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

from telemetria.reports.analysis.clean import keep_mask
from telemetria.reports.analysis.distance import segments
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.roads import drives, steps
from telemetria.roads.osmread import read_ways

EXTRACTS = Path(__file__).resolve().parent.parent / "tests" / "data" / "osm"
NAMES = {"porto-alegre": "Porto Alegre (BR)", "sao-paulo": "São Paulo (BR)", "aguascalientes": "Aguascalientes (MX)"}
METHODS = ("road", "chords", "no speeds")


@cache
def network(name: str) -> steps.RoadNet:
    return steps.build(1, list(read_ways(EXTRACTS / f"{name}.osm.pbf")))


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
        for method, roads, fixes in (("road", net, d.fixes), ("chords", None, d.fixes), ("no speeds", net, bare.fixes)):
            track = Track.of(fixes)
            if roads is not None:
                roads.forget()
            t = time.perf_counter()
            km = km_of(roads, track)
            spent[method] += time.perf_counter() - t
            errs[method].append((km / d.length_m - 1) * 100)
    return [Row(name, interval_s, m, tuple(errs[m]), spent[m] / count * 1000) for m in METHODS]


def table(extracts: list[str], intervals: list[float], count: int, lo_m: float, hi_m: float) -> list[Row]:
    return [r for name in extracts for dt in intervals for r in rows(name, dt, count, lo_m, hi_m)]


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
    args = ap.parse_args()
    names = args.extract or sorted(p.name.removesuffix(".osm.pbf") for p in EXTRACTS.glob("*.osm.pbf"))
    if args.quick:
        print(markdown(table(names, [30.0, 60.0], 6, 3000.0, 8000.0)))
    else:
        print(markdown(table(names, [30.0, 60.0], 30, 5000.0, 40000.0)))


if __name__ == "__main__":
    main()
