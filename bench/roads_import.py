"""Roads import: an OpenStreetMap file of ~200,000 ways imported in < 5 minutes in bounded memory (issue 20), side by
side with the baseline of libosmium alone reading the same file.

    .venv/bin/python -m bench.roads_import            # ~20,000 and ~200,000 ways
    .venv/bin/python -m bench.roads_import --quick    # ~20,000 ways only

The file is the simulator's grid (sim/roadnet.py) made large: 317 roads each way 300-500 m apart, one way per block,
and beside each block a building of 4 nodes (an extract holds more than roads), written as .osm.pbf. Three steps,
each in a fresh process so its peak RSS is its own:
  osmium: pyosmium merely counting the file's highway ways, every node's location indexed (its usual one pass);
  osmread: telemetria.roads.osmread.read_ways (tags, access, oneway, the Way objects), counting them;
  import: the real `telemetria roads import FILE` into a throw-away database (COPY, totals, the atomic replace).
Exits 1 when a target is not met.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from bench.benchdb import BenchDb
from bench.table import num, render

TARGET_S = 300.0
BOUNDED_SLACK_MIB = 64.0  # 10x the ways may grow the import's peak RSS by at most this much
HALF_LINES = {"20k": 50, "200k": 158}  # 2 * n * (n - 1) ways for n = 2 * half + 1 roads each way


def write_file(half_lines: int, path: Path) -> int:
    """The large grid as .osm.pbf, with a building of 4 nodes beside every block (as an extract has more than
    roads: buildings, rivers, land use); returns its number of road ways."""
    import osmium
    import osmium.osm.mutable

    from telemetria.sim.osm import way_tags
    from telemetria.sim.roadnet import grid_ways
    from telemetria.sim.roads import make_grid

    grid = make_grid(1, half_lines=half_lines, linha_spacing_m=(300, 500), travessao_spacing_m=(300, 500))
    ways = grid_ways(grid)
    nodes = {n: (la, lo) for w in ways for n, la, lo in zip(w.node_ids, w.lat, w.lon, strict=True)}
    first_node, first_way = max(nodes) + 1, max(w.osm_id for w in ways) + 1
    with osmium.SimpleWriter(str(path), overwrite=True) as out:
        for n in sorted(nodes):
            out.add_node(osmium.osm.mutable.Node(id=n, version=1, location=(nodes[n][1], nodes[n][0])))
        for i, w in enumerate(ways):  # a 20 m square 30 m off each block's middle vertex
            la, lo = w.lat[1] + 0.0003, w.lon[1] + 0.0003
            for k, (dla, dlo) in enumerate(((0, 0), (0, 2e-4), (2e-4, 2e-4), (2e-4, 0))):
                out.add_node(
                    osmium.osm.mutable.Node(id=first_node + 4 * i + k, version=1, location=(lo + dlo, la + dla))
                )
        for w in ways:
            out.add_way(osmium.osm.mutable.Way(id=w.osm_id, version=1, nodes=w.node_ids, tags=way_tags(w)))
        for i in range(len(ways)):
            ring = [first_node + 4 * i + k for k in (0, 1, 2, 3, 0)]
            out.add_way(osmium.osm.mutable.Way(id=first_way + i, version=1, nodes=ring, tags={"building": "yes"}))
    return len(ways)


def count_osmium(path: Path) -> int:
    """The file's highway ways, every node's location indexed (pyosmium's usual one pass)."""
    import osmium
    import osmium.filter

    fp = (
        osmium.FileProcessor(str(path), osmium.osm.NODE | osmium.osm.WAY)
        .with_locations("flex_mem")
        .with_filter(osmium.filter.EntityFilter(osmium.osm.WAY))
        .with_filter(osmium.filter.KeyFilter("highway"))
    )
    return sum(1 for _ in fp)


def count_osmread(path: Path) -> int:
    from telemetria.roads.osmread import read_ways

    return sum(1 for _ in read_ways(path))


STEPS = {"osmium": count_osmium, "osmread": count_osmread}


def run_step(step: str, path: Path, env: dict[str, str] | None = None) -> dict[str, Any]:
    if step == "import":
        cmd = [sys.executable, "-m", "telemetria.cli", "roads", "import", str(path), "--progress-every", "100000"]
    else:
        cmd = [sys.executable, "-m", "bench.roads_import", "--one", step, str(path)]
    with tempfile.TemporaryFile() as errors:
        t = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=errors)
        stdout = proc.stdout.read() if proc.stdout else b""
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own rusage: its peak RSS, its CPU
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        if status != 0:
            errors.seek(0)
            raise RuntimeError(f"{' '.join(cmd)} failed: {errors.read().decode()}")
    ways = orjson.loads(stdout)["ways"]
    return {"s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "peak_mib": usage.ru_maxrss / 1024, "ways": ways}


def floor_mib() -> float:
    proc = subprocess.Popen(["/bin/true"])
    return os.wait4(proc.pid, 0)[2].ru_maxrss / 1024


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="the ~20,000-way file only")
    ap.add_argument("--one", nargs=2, metavar=("STEP", "FILE"), help=argparse.SUPPRESS)
    ap.add_argument("--make", nargs=2, metavar=("SIZE", "FILE"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(orjson.dumps({"ways": STEPS[args.one[0]](Path(args.one[1]))}).decode())
        return 0
    if args.make:
        print(orjson.dumps({"ways": write_file(HALF_LINES[args.make[0]], Path(args.make[1]))}).decode())
        return 0

    from telemetria.settings import Settings

    sizes = ["20k"] if args.quick else ["20k", "200k"]
    print(f"bench.roads_import: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; a fresh process per step")
    db = BenchDb.for_this_run(Settings())
    asyncio.run(db.create())
    env = {**os.environ, "TELEMETRIA_DATABASE_URL": db.dsn}
    found: dict[tuple[str, str], dict[str, Any]] = {}
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for size in sizes:
                path = Path(tmp) / f"grid-{size}.osm.pbf"
                # In a process of its own: a child's peak RSS starts from its parent's at the fork, so the parent
                # stays small and never holds the ways.
                t = time.perf_counter()
                made_by = [sys.executable, "-m", "bench.roads_import", "--make", size, str(path)]
                ways = orjson.loads(subprocess.run(made_by, capture_output=True, check=True).stdout)["ways"]
                made = time.perf_counter() - t
                print(f"{size}: {num(ways)} ways, {num(path.stat().st_size / 1024)} KiB written in {made:.1f} s")
                for step in ("osmium", "osmread", "import"):
                    r = found[(size, step)] = run_step(step, path, env)
                    assert r["ways"] == ways, (step, r["ways"], ways)
                    rows.append([step, num(ways), f"{r['s']:.1f}", f"{r['cpu_s']:.1f}", num(ways / r["s"]),
                                 num(r["peak_mib"], 1)])  # fmt: skip
    finally:
        asyncio.run(db.drop())
    print(render(["step", "ways", "s", "CPU s", "ways/s", "peak RSS MiB"], rows))
    print(f"peak RSS of an empty process started from here (the floor, inherited at the fork): {floor_mib():.1f} MiB")
    print("CPU s: the process's own (all threads; libosmium decodes PBF blocks on a thread pool); on a shared,")
    print("loaded machine wall time grows with the load, CPU time much less")
    if args.quick:
        return 0
    big, small = found[("200k", "import")], found[("20k", "import")]
    fast = big["s"] < TARGET_S
    grew = big["peak_mib"] - small["peak_mib"]
    bounded = grew <= BOUNDED_SLACK_MIB
    print(f"target: {num(big['ways'])} ways imported in < {TARGET_S:.0f} s: {big['s']:.1f} s, "
          f"{'met' if fast else 'NOT met'}")  # fmt: skip
    print(f"target: bounded memory, 10x the ways within {BOUNDED_SLACK_MIB:.0f} MiB more peak: {grew:+.1f} MiB, "
          f"{'met' if bounded else 'NOT met'}")  # fmt: skip
    base = found[("200k", "osmium")]["peak_mib"] - found[("20k", "osmium")]["peak_mib"]
    print(f"beside: the one-pass baseline, indexing every node, grew {base:+.1f} MiB over the same 10x")
    return 0 if fast and bounded else 1


if __name__ == "__main__":
    sys.exit(main())
