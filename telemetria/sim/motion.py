"""How a vehicle drives a route: a 1 Hz speed controller over a planned path, giving the ground truth (pure)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from telemetria.sim.polyline import Polyline, offset, round_corners
from telemetria.sim.roads import Route, arm_azimuths
from telemetria.sim.truth import Detour, Stop, Truth, speeding_episodes

Range = tuple[float, float]


@dataclass(frozen=True, slots=True)
class MotionParams:
    """How one run is driven: speeds km/h, accelerations m/s², durations s, lengths m; ranges are uniform draws."""

    cruise_kmh: Range = (40.0, 55.0)  # kept below the limit so that every speeding episode is a planned one
    corner_kmh: Range = (15.0, 22.0)
    corner_radius_m: float = 15.0
    accel_ms2: float = 1.2  # from standstill; falls linearly to zero at top_kmh, like a loaded bus
    top_kmh: float = 100.0
    brake_ms2: float = 1.3  # planned braking for corners and stops
    ease_ms2: float = 0.8  # slowing down to a lower cruise speed
    speed_limit_kmh: float = 60.0
    speeding: bool = True
    speeding_kmh: Range = (66.0, 85.0)
    speeding_s: Range = (15.0, 150.0)  # time at the high speed; the episode above the limit is ~10 s longer
    boarding_s: Range = (30.0, 180.0)
    first_boarding_s: Range | None = None  # the first boarding stop's dwell instead (None: boarding_s)
    school_s: Range = (180.0, 480.0)
    halt: bool = True
    halt_s: Range = (20.0, 120.0)
    detour: bool = False
    detour_m: Range = (1000.0, 3000.0)
    turnaround_s: Range = (10.0, 40.0)
    parked_s: Range = (30.0, 120.0)  # ignition off at the garage, before and after the run
    warmup_s: Range = (60.0, 180.0)  # engine running before moving off
    cooldown_s: Range = (20.0, 90.0)  # engine running after arriving


@dataclass(frozen=True, slots=True)
class _Stop:
    s: float
    dwell: int
    kind: str
    engine_off: bool = False


@dataclass(frozen=True, slots=True)
class _Zone:
    s0: float
    s1: float
    v: float  # m/s: cap inside a corner, target inside a speeding stretch


def drive(route: Route, start: datetime, rng: np.random.Generator, p: MotionParams = MotionParams()) -> Truth:
    """The 1 Hz ground truth of one run of `route` starting (ignition still off) at `start`."""
    nodes, stops_at, detour_at = _with_detour(route, rng, p)
    rounded = round_corners(nodes, p.corner_radius_m)
    path = rounded.line

    def dwell(r: Range) -> int:
        return round(float(rng.uniform(*r)))

    first = next((i for i, (k, _) in enumerate(stops_at) if k == "boarding"), None)

    def wait(i: int, kind: str) -> Range:
        if kind == "school":
            return p.school_s
        return p.first_boarding_s if i == first and p.first_boarding_s else p.boarding_s

    stops = [_Stop(rounded.remap(s), dwell(wait(i, k)), k, k == "school") for i, (k, s) in enumerate(stops_at)]
    if detour_at:
        stops.append(_Stop(rounded.remap(detour_at[1]), dwell(p.turnaround_s), "turnaround"))
    corners = [_Zone(a, b, float(rng.uniform(*p.corner_kmh)) / 3.6) for a, b in rounded.arcs]
    if p.halt:
        spur = (rounded.remap(detour_at[0]), rounded.remap(detour_at[2])) if detour_at else None
        stops.append(_halt(path.length_m, corners, stops, spur, rng, dwell(p.halt_s)))
    stops.sort(key=lambda x: x.s)
    boosts = _speeding_plan(path.length_m, corners, stops, rng, p) if p.speeding else []
    cruise = rng.uniform(*p.cruise_kmh, size=len(corners) + len(stops) + 1) / 3.6
    s, v, ign, events = _integrate(path.length_m, corners, stops, boosts, cruise, rng, p)

    lat, lon, heading = path.at(s)
    # Standing still, a vehicle keeps the heading it had when it stopped.
    last_moving = np.maximum.accumulate(np.where(v > 0, np.arange(len(v)), 0))
    heading = heading[last_moving]
    t = np.arange(len(s), dtype=float)
    speed_kmh = v * 3.6
    truth_stops = tuple(
        Stop(kind, float(a), float(b), float(s[a]), float(lat[a]), float(lon[a])) for kind, a, b in events
    )
    detour = None
    if detour_at:
        s_in, s_far, s_out = (rounded.remap(x) for x in detour_at[:3])
        i_in, i_far, i_out = np.searchsorted(s, [s_in, s_far, s_out])
        detour = Detour(float(i_in), float(i_out), s_in, s_out, detour_at[3], float(lat[i_far]), float(lon[i_far]))
    return Truth(
        start=start,
        t_s=t,
        lat=lat,
        lon=lon,
        speed_kmh=speed_kmh,
        heading_deg=heading,
        dist_m=s,
        ignition=ign,
        route=route,
        path=path,
        stops=truth_stops,
        speeding=speeding_episodes(t, speed_kmh, s, p.speed_limit_kmh),
        speed_limit_kmh=p.speed_limit_kmh,
        detour=detour,
    )


def _with_detour(
    route: Route, rng: np.random.Generator, p: MotionParams
) -> tuple[Polyline, list[tuple[str, float]], tuple[float, float, float, float] | None]:
    """The route's vertices with an optional out-and-back spur at a crossing; planned stops re-measured on it.

    The detour is (distance in, distance at the far end, distance out, reach), metres along the new polyline.
    """
    line = route.line
    stops = [(st.kind, st.dist_m) for st in route.stops]
    if not p.detour:
        return line, stops, None
    candidates = [k for k in np.flatnonzero(route.is_node) if 0 < k < len(line.lat) - 1]
    k = int(candidates[int(rng.integers(len(candidates)))])
    arms = arm_azimuths(route, k)
    az = arms[int(rng.integers(len(arms)))]
    reach = float(rng.uniform(*p.detour_m))
    far = offset(float(line.lat[k]), float(line.lon[k]), az, reach)
    lat = np.concatenate([line.lat[: k + 1], [far[0]], line.lat[k:]])
    lon = np.concatenate([line.lon[: k + 1], [far[1]], line.lon[k:]])
    s_in = float(line.cum_m[k])
    moved = [(kind, s + 2 * reach if s > s_in else s) for kind, s in stops]
    new = Polyline.of(lat, lon)
    return new, moved, (s_in, float(new.cum_m[k + 1]), float(new.cum_m[k + 2]), reach)


def _clear(s: float, corners: list[_Zone], stops: list[_Stop], margin: float) -> bool:
    return all(not (c.s0 - margin <= s <= c.s1 + margin) for c in corners) and all(
        abs(st.s - s) > margin for st in stops
    )


def _halt(
    length: float,
    corners: list[_Zone],
    stops: list[_Stop],
    spur: tuple[float, float] | None,
    rng: np.random.Generator,
    dwell: int,
) -> _Stop:
    """An unplanned traffic halt somewhere in the middle of the run, clear of corners, stops and the detour."""
    for _ in range(200):
        s = float(rng.uniform(0.3, 0.7)) * length
        if _clear(s, corners, stops, 150.0) and not (spur and spur[0] - 150.0 <= s <= spur[1] + 150.0):
            break
    return _Stop(s, dwell, "halt")


def _speeding_plan(
    length: float, corners: list[_Zone], stops: list[_Stop], rng: np.random.Generator, p: MotionParams
) -> list[_Zone]:
    """Stretches where the driver holds a speed above the limit, each on a straight with room to get there and stop."""
    walls = sorted([(c.s0, c.s1) for c in corners] + [(st.s, st.s) for st in stops] + [(length, length)])
    gaps: list[tuple[float, float]] = []
    prev = 0.0
    for a, b in walls:
        gaps.append((prev, a))
        prev = b
    out: list[_Zone] = []
    for _ in range(max(1, round(length / 25_000))):
        v = float(rng.uniform(*p.speeding_kmh)) / 3.6
        hold = float(rng.uniform(*p.speeding_s))
        ramp = 250.0  # metres to climb from cruise to v
        brake = v * v / (2 * p.brake_ms2) + 100.0
        room = max((b - a for a, b in gaps), default=0.0) - ramp - brake - 100.0
        hold = min(hold, room / v)
        if hold < p.speeding_s[0]:
            break
        need = ramp + hold * v + brake + 100.0
        # A hold cut to fit the widest gap needs exactly that gap, which rounding can make miss by a hair.
        fits = [g for g in gaps if g[1] - g[0] >= need - 1e-6]
        if not fits:
            break
        a, b = fits[int(rng.integers(len(fits)))]
        s0 = a + 50.0 + float(rng.uniform(0.0, max(0.0, b - a - need)))
        s1 = s0 + ramp + hold * v
        out.append(_Zone(s0, s1, v))
        gaps.remove((a, b))
        gaps += [(a, s0), (s1 + brake, b)]
    return sorted(out, key=lambda z: z.s0)


def _brake_cap(v: float, d: float, v_end: float, b: float) -> float:
    """Largest speed after one second such that braking at b m/s² still reaches v_end within d metres."""
    # Solve w² ≤ v_end² + 2b(d - (v + w)/2) for w, the distance of this second travelled at the mean speed.
    c = v_end * v_end + 2 * b * d - b * v
    return (-b + math.sqrt(b * b + 4 * c)) / 2 if c > 0 else 0.0


def _integrate(
    length: float,
    corners: list[_Zone],
    stops: list[_Stop],
    boosts: list[_Zone],
    cruise: np.ndarray,
    rng: np.random.Generator,
    p: MotionParams,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[tuple[str, int, int]]]:
    """Step the speed controller once a second: distance (m), speed (m/s), ignition and stop events by sample."""
    s_out: list[float] = []
    v_out: list[float] = []
    ign: list[bool] = []
    events: list[tuple[str, int, int]] = []
    top = p.top_kmh / 3.6
    s = v = 0.0

    def hold(n: int, on: bool) -> None:
        for _ in range(n):
            s_out.append(s)
            v_out.append(0.0)
            ign.append(on)

    hold(round(float(rng.uniform(*p.parked_s))), False)
    hold(round(float(rng.uniform(*p.warmup_s))), True)
    events.append(("garage", 0, len(s_out) - 1))
    wobble = float(rng.uniform(0, 2 * math.pi))
    ci = bi = leg = 0
    targets = [*stops, _Stop(length, 0, "garage")]
    for st in targets:
        while True:
            while ci < len(corners) and corners[ci].s1 < s:
                ci += 1
            while bi < len(boosts) and boosts[bi].s1 < s:
                bi += 1
            speeding = bi < len(boosts) and boosts[bi].s0 <= s
            base = boosts[bi].v if speeding else cruise[(ci + leg) % len(cruise)]
            target = base + 0.6 * math.sin(s / 150.0 + wobble)  # a ±2 km/h drift, as drivers do
            cap = max(_brake_cap(v, st.s - s, 0.0, p.brake_ms2), min(1.5, st.s - s))
            for c in corners[ci : ci + 3]:
                cap = min(cap, c.v if c.s0 <= s else _brake_cap(v, c.s0 - s, c.v, p.brake_ms2))
            accel = max(0.2, p.accel_ms2 * (1.0 - v / top))
            w = min(v + accel, target)
            w = min(max(w, v - p.ease_ms2), cap)
            step = (v + w) / 2
            if s + step >= st.s - 0.5:
                break
            s, v = s + step, w
            s_out.append(s)
            v_out.append(v)
            ign.append(True)
        s, v = st.s, 0.0
        arrive = len(s_out)
        if st.kind == "garage":
            hold(1 + round(float(rng.uniform(*p.cooldown_s))), True)
            hold(round(float(rng.uniform(*p.parked_s))), False)
        else:
            # The engine is switched off while pupils get off at school, not during short stops.
            for j in range(st.dwell + 1):
                hold(1, not (st.engine_off and 15 <= j <= st.dwell - 15))
        events.append((st.kind, arrive, len(s_out) - 1))
        leg += 1
    return np.asarray(s_out), np.asarray(v_out), np.asarray(ign, dtype=bool), events
