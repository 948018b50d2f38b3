"""Simulated bus drives on a road network, with their truth (pure, seeded): what the matcher is measured against.

A drive follows shortest paths (oneway respected) between junctions chained until it is long enough, or given
waypoints; it runs at bus speeds (a cruise speed by the road's kind, slower through turns, 1.0 m/s² up and 1.3
m/s² down), halts at stops about every STOP_EVERY_M (dwell 15-45 s, or the stops asked for) and stands a minute at
each end. Fixes are sampled every `interval_s` with a random phase; positions carry correlated GPS noise (an AR(1)
of σ 5-10 m and 60 s correlation in east and north), speeds the receiver's Doppler noise (σ 0.3 m/s; 0 when
standing), headings 5° of noise (none while standing). The truth: the metres driven (along the edges' geodesic
lengths, as the matcher measures), every stop's true start and end, and the path's points in time.
"""

from __future__ import annotations

import heapq
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from telemetria.fix import Fix
from telemetria.roads.model import FloatArray
from telemetria.roads.steps import RoadNet

CRUISE_KMH = {"motorway": 70.0, "trunk": 60.0, "primary": 50.0, "secondary": 50.0, "tertiary": 40.0,
              "service": 20.0, "track": 25.0, "living_street": 15.0}  # fmt: skip
DEFAULT_CRUISE_KMH = 35.0  # residential, unclassified and the rest
ACCEL, DECEL = 1.0, 1.3  # m/s²
STOP_EVERY_M = 1200.0
DWELL_S = (15.0, 45.0)
END_WAIT_S = 60.0
GRID_M = 2.0  # the speed profile's step along the path


@dataclass(frozen=True, slots=True)
class TrueStop:
    start_s: float  # epoch s the bus came to a halt
    end_s: float  # ... and moved off

    @property
    def duration_s(self) -> float:
        return self.end_s - self.start_s


@dataclass(frozen=True, slots=True)
class Drive:
    fixes: list[Fix]
    length_m: float  # metres truly driven
    stops: list[TrueStop]  # the halts along the way (the waits at both ends excluded)
    t: FloatArray  # epoch s of the truth's samples
    s_m: FloatArray  # metres along the path at t
    x: FloatArray  # network-metric coordinates at t
    y: FloatArray


def shortest_path(net: RoadNet, u: int, v: int) -> list[tuple[int, bool]] | None:
    """The edges (index, forward) of a shortest path from junction u to junction v, None when v is unreachable."""
    dist = {u: 0.0}
    back: dict[int, tuple[int, int, bool]] = {}
    heap = [(0.0, u)]
    done: set[int] = set()
    while heap:
        d, n = heapq.heappop(heap)
        if n in done:
            continue
        done.add(n)
        if n == v:
            break
        for m, e, fwd in net.adjacent(n):
            nd = d + net.edges[e].length_m
            if nd < dist.get(m, math.inf):
                dist[m], back[m] = nd, (n, e, fwd)
                heapq.heappush(heap, (nd, m))
    if v not in done:
        return None
    out: list[tuple[int, bool]] = []
    n = v
    while n != u:
        p, e, fwd = back[n]
        out.append((e, fwd))
        n = p
    return out[::-1]


def chain(net: RoadNet, rnd: random.Random, length_m: float) -> list[tuple[int, bool]]:
    """Shortest paths chained to length_m, each towards a random junction ahead (within 90° of the way the last
    one ended, as a bus line runs on rather than doubling back; a leg never starts straight back along the last
    edge unless it ended in a dead end)."""
    junctions = net.junction_count()
    core = _core(net)
    jx = np.array([np.nan] * junctions)
    jy = np.array([np.nan] * junctions)
    for e in net.edges:
        jx[e.u], jy[e.u], jx[e.v], jy[e.v] = e.x[0], e.y[0], e.x[-1], e.y[-1]
    for _ in range(200):
        here = rnd.choice(core)
        path: list[tuple[int, bool]] = []
        total = 0.0
        tries = behind = back = 0
        while total < length_m and tries < 4000 + length_m / 10:
            tries += 1
            there = rnd.choice(core)
            if path and behind < 50:  # at the extract's edge nothing lies ahead: then anywhere will do
                last, fwd = path[-1]
                edge = net.edges[last]
                hx, hy = (
                    (edge.x[-1] - edge.x[-2], edge.y[-1] - edge.y[-2])
                    if fwd
                    else (edge.x[0] - edge.x[1], edge.y[0] - edge.y[1])
                )
                if (jx[there] - jx[here]) * hx + (jy[there] - jy[here]) * hy <= 0:
                    behind += 1
                    continue
            behind = 0
            leg = shortest_path(net, here, there)
            if not leg or (path and leg[0][0] == path[-1][0] and back < 20):  # a dead end: back at last
                back += 1
                continue
            back = 0
            path += leg
            total += sum(net.edges[e].length_m for e, _ in leg)
            here = net.edge_end(*leg[-1])
        if total >= length_m:
            return path
    raise ValueError("no drive that long on this network")


def _core(net: RoadNet) -> list[int]:
    """The junctions of the network's largest strongly connected part (every one reachable from every other, one-ways
    respected): a drive between them never asks for a path that does not exist."""
    n = net.junction_count()
    fwd = [[m for m, _, _ in net.adjacent(j)] for j in range(n)]
    rev: list[list[int]] = [[] for _ in range(n)]
    for j, out in enumerate(fwd):
        for m in out:
            rev[m].append(j)

    def reach(start: int, adj: list[list[int]]) -> set[int]:
        seen, todo = {start}, [start]
        while todo:
            for m in adj[todo.pop()]:
                if m not in seen:
                    seen.add(m)
                    todo.append(m)
        return seen

    best: set[int] = set()
    left = set(range(n))
    while left and len(best) < len(left):
        j = min(left)
        part = reach(j, fwd) & reach(j, rev)
        left -= part
        if len(part) > len(best):
            best = part
    return sorted(best)


def through(net: RoadNet, junctions: Sequence[int]) -> list[tuple[int, bool]]:
    """The shortest paths through the given junctions in order."""
    path: list[tuple[int, bool]] = []
    for u, v in itertools.pairwise(junctions):
        leg = shortest_path(net, u, v)
        if leg is None:
            raise ValueError(f"junction {v} cannot be reached from {u}")
        path += leg
    return path


def drive(
    net: RoadNet, path: Sequence[tuple[int, bool]], seed: int, interval_s: float, start: datetime | None = None,
    stops_at_m: Sequence[tuple[float, float]] | None = None, speeds: bool = True,
) -> Drive:  # fmt: skip
    """The fixes and truth of a bus driving `path` (edge, forward) sampled every interval_s.

    stops_at_m: (metres along the path, dwell s) of the halts; None: about every STOP_EVERY_M, dwell 15-45 s.
    speeds: False leaves speed and heading out of the fixes (trackers that send none).
    """
    rnd = random.Random(seed)
    xs: list[float] = []
    ys: list[float] = []
    ss: list[float] = []
    cap: list[float] = []
    base = 0.0
    for e, fwd in path:
        edge = net.edges[e]
        x, y, cum = (
            (edge.x, edge.y, edge.cum_m) if fwd else (edge.x[::-1], edge.y[::-1], edge.length_m - edge.cum_m[::-1])
        )
        v = CRUISE_KMH.get(net.ways[edge.way].highway.removesuffix("_link"), DEFAULT_CRUISE_KMH) / 3.6
        first = 1 if xs else 0
        xs += x[first:].tolist()
        ys += y[first:].tolist()
        ss += (base + cum[first:]).tolist()
        cap += [v] * (len(x) - first)
        base += edge.length_m
    X, Y, S, V = np.array(xs), np.array(ys), np.array(ss), np.array(cap)
    length = float(S[-1])
    grid = np.append(np.arange(0.0, length, GRID_M), length)
    # The cruise speed of the stretch each grid point lies on, then slower through turns (the angle between a
    # vertex's incoming and outgoing directions), at the vertex itself.
    vcap = V[np.clip(np.searchsorted(S, grid, side="right"), 1, len(S) - 1)]
    if len(X) > 2:
        a_in = np.arctan2(Y[1:-1] - Y[:-2], X[1:-1] - X[:-2])
        a_out = np.arctan2(Y[2:] - Y[1:-1], X[2:] - X[1:-1])
        turn = np.degrees(np.abs(np.angle(np.exp(1j * (a_out - a_in)))))
        slow = np.where(turn > 60, 15 / 3.6, np.where(turn > 25, 25 / 3.6, np.inf))
        np.minimum.at(vcap, np.minimum(np.searchsorted(grid, S[1:-1]), len(grid) - 1), slow)
    if stops_at_m is None:
        halts: list[tuple[float, float]] = []
        at = rnd.expovariate(1 / STOP_EVERY_M)
        while at < length - 100:
            if at > 100:
                halts.append((at, rnd.uniform(*DWELL_S)))
            at += max(300.0, rnd.expovariate(1 / STOP_EVERY_M))
    else:
        halts = list(stops_at_m)
    stop_idx = [int(np.searchsorted(grid, m)) for m, _ in halts]
    for i in stop_idx:
        vcap[i] = 0.0
    vcap[0] = vcap[-1] = 0.0
    vel = vcap.copy()
    for i in range(1, len(vel)):
        vel[i] = min(vel[i], math.sqrt(vel[i - 1] ** 2 + 2 * ACCEL * (grid[i] - grid[i - 1])))
    for i in range(len(vel) - 2, -1, -1):
        vel[i] = min(vel[i], math.sqrt(vel[i + 1] ** 2 + 2 * DECEL * (grid[i + 1] - grid[i])))
    ds = np.diff(grid)
    dt = 2 * ds / np.maximum(vel[:-1] + vel[1:], 1e-6)
    t_run = np.concatenate([[0.0], np.cumsum(dt)])
    # Dwell: at each stop the clock runs on while the bus stands (the point appears twice).
    t_list, s_list, v_list = [0.0, END_WAIT_S], [0.0, 0.0], [0.0, 0.0]
    shift = END_WAIT_S
    dwell = dict(zip(stop_idx, [d for _, d in halts], strict=True))
    true_stops: list[TrueStop] = []
    t0 = (start or datetime(2026, 3, 2, 10, 0, tzinfo=UTC)).timestamp()
    for i in range(1, len(grid)):
        t_list.append(t_run[i] + shift)
        s_list.append(float(grid[i]))
        v_list.append(float(vel[i]))
        if i in dwell:
            true_stops.append(TrueStop(t0 + t_run[i] + shift, t0 + t_run[i] + shift + dwell[i]))
            shift += dwell[i]
            t_list.append(t_run[i] + shift)
            s_list.append(float(grid[i]))
            v_list.append(0.0)
    t_list.append(t_list[-1] + END_WAIT_S)
    s_list.append(length)
    v_list.append(0.0)
    T, Sg, Vg = np.array(t_list), np.array(s_list), np.array(v_list)
    # Sample.
    phase = rnd.uniform(0, interval_s)
    ts = np.arange(phase, T[-1], interval_s)
    s_at = np.interp(ts, T, Sg)
    v_at = np.interp(ts, T, Vg)
    x_at, y_at = np.interp(s_at, S, X), np.interp(s_at, S, Y)
    ahead = np.minimum(s_at + 3.0, length)
    behind = np.maximum(s_at - 3.0, 0.0)
    hx, hy = np.interp(ahead, S, X) - np.interp(behind, S, X), np.interp(ahead, S, Y) - np.interp(behind, S, Y)
    heading = (np.degrees(np.arctan2(hx, hy)) + 360.0) % 360.0
    sigma = rnd.uniform(5.0, 10.0)
    rho = math.exp(-interval_s / 60.0)
    nrnd = np.random.default_rng(seed)
    ex = np.zeros(len(ts))
    ey = np.zeros(len(ts))
    for k in range(len(ts)):
        fresh = nrnd.normal(0, sigma, 2)
        if k == 0:
            ex[k], ey[k] = fresh
        else:
            ex[k] = rho * ex[k - 1] + math.sqrt(1 - rho * rho) * fresh[0]
            ey[k] = rho * ey[k - 1] + math.sqrt(1 - rho * rho) * fresh[1]
    lon, lat = net.to_lonlat(x_at + ex, y_at + ey)
    fixes = []
    for k in range(len(ts)):
        moving = v_at[k] > 0.5
        speed = max(0.0, v_at[k] + nrnd.normal(0, 0.3)) * 3.6 if moving else 0.0
        head = (heading[k] + nrnd.normal(0, 5.0)) % 360.0 if moving else None
        fixes.append(
            Fix(
                ts=datetime.fromtimestamp(t0 + float(ts[k]), UTC) + timedelta(0),
                lat=float(lat[k]),
                lon=float(lon[k]),
                speed_kmh=round(speed, 1) if speeds else None,
                heading_deg=round(head, 1) if speeds and head is not None else None,
            )
        )
    return Drive(fixes, length, true_stops, t0 + T, Sg, np.interp(Sg, S, X), np.interp(Sg, S, Y))
