"""The simulated world: a grid of rural roads ("linhas") around Jaru/RO and school routes along it (pure)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from telemetria.sim.polyline import GEOD, Polyline, offset

JARU = (-10.43, -62.47)  # lat, lon of the town, where the grid's central linha and travessão cross

# Unit moves on the grid (east, north) and their azimuths, degrees.
_ARMS: dict[tuple[int, int], float] = {(0, 1): 0.0, (1, 0): 90.0, (0, -1): 180.0, (-1, 0): 270.0}


@dataclass(frozen=True, slots=True, eq=False)
class Grid:
    """N-S linhas at `lons` and E-W travessões at `lats` (degrees, ascending); index `origin` runs through Jaru."""

    lats: np.ndarray
    lons: np.ndarray
    origin: int

    def node(self, i: int, j: int) -> tuple[float, float]:
        """(lat, lon) of the crossing i linhas east and j travessões north of Jaru."""
        return float(self.lats[self.origin + j]), float(self.lons[self.origin + i])

    def off_grid_m(self, lat: np.ndarray, lon: np.ndarray) -> np.ndarray:
        """Distance from each point to the nearest grid road, metres."""
        lat = np.asarray(lat, dtype=float)
        lon = np.asarray(lon, dtype=float)
        near_lat = _nearest(self.lats, lat)
        near_lon = _nearest(self.lons, lon)
        _, _, d_ns = GEOD.inv(lon, lat, lon, near_lat)  # to the nearest travessão
        _, _, d_ew = GEOD.inv(lon, lat, near_lon, lat)  # to the nearest linha
        nearest: np.ndarray = np.minimum(np.asarray(d_ns), np.asarray(d_ew))
        return nearest


def _nearest(lines: np.ndarray, x: np.ndarray) -> np.ndarray:
    k = np.clip(np.searchsorted(lines, x), 1, len(lines) - 1)
    lo, hi = lines[k - 1], lines[k]
    return np.where(np.abs(x - lo) <= np.abs(hi - x), lo, hi)


def make_grid(
    seed: int,
    *,
    centre: tuple[float, float] = JARU,
    half_lines: int = 12,
    linha_spacing_m: tuple[float, float] = (3800.0, 4200.0),
    travessao_spacing_m: tuple[float, float] = (4000.0, 5000.0),
) -> Grid:
    """A road grid of 2*half_lines+1 roads each way around `centre`, spacings drawn uniformly, metres."""
    rng = np.random.default_rng([seed, 0x9121D])
    lat0, lon0 = centre

    def axis(spacing: tuple[float, float], az_pos: float, pick: int) -> np.ndarray:
        pos = np.cumsum(rng.uniform(*spacing, size=half_lines))
        neg = np.cumsum(rng.uniform(*spacing, size=half_lines))
        # Offsets measured along meridian / parallel through the centre; the grid is only ~100 km wide.
        ahead = [offset(lat0, lon0, az_pos, float(d))[pick] for d in pos]
        behind = [offset(lat0, lon0, az_pos + 180.0, float(d))[pick] for d in neg]
        return np.asarray([*behind[::-1], (lat0, lon0)[pick], *ahead])

    lats = axis(travessao_spacing_m, 0.0, 0)
    lons = axis(linha_spacing_m, 90.0, 1)
    return Grid(np.sort(lats), np.sort(lons), half_lines)


@dataclass(frozen=True, slots=True)
class RouteStop:
    """A planned stop: kind is 'boarding' or 'school'; dist_m is its distance along the route."""

    kind: str
    dist_m: float
    lat: float
    lon: float


@dataclass(frozen=True, slots=True, eq=False)
class Route:
    """A planned run garage → boarding points → school → same points → garage, along grid roads."""

    line: Polyline
    is_node: np.ndarray  # per vertex: a grid crossing, where a vehicle could leave the route
    stops: tuple[RouteStop, ...]  # in route order

    @property
    def length_m(self) -> float:
        """Planned length of the whole run, metres."""
        return self.line.length_m


def make_route(
    grid: Grid,
    rng: np.random.Generator,
    *,
    length_m: tuple[float, float] = (15_000.0, 60_000.0),
    boarding: tuple[int, int] = (3, 8),
) -> Route:
    """A random staircase route on the grid from a garage to a school in Jaru and back, length within range."""
    for _ in range(200):
        out = _outbound(grid, rng)
        if length_m[0] <= 2 * out.length_m <= length_m[1]:
            break
    else:
        raise ValueError(f"no route of {length_m} m fits this grid")
    stops_out = _boarding_points(out, rng, int(rng.integers(boarding[0], boarding[1] + 1)))
    half = out.length_m
    lat = np.concatenate([out.lat, out.lat[-2::-1]])
    lon = np.concatenate([out.lon, out.lon[-2::-1]])
    is_node = np.ones(len(out.lat), dtype=bool)
    is_node[[0, -1]] = False  # garage and school sit along roads, not at crossings
    line = Polyline.of(lat, lon)
    # Pupils are dropped on the way back at the points where they boarded.
    dists = [*stops_out, half, *(2 * half - s for s in reversed(stops_out))]
    kinds = ["boarding"] * len(stops_out) + ["school"] + ["boarding"] * len(stops_out)
    la, lo, _ = line.at(np.asarray(dists))
    stops = tuple(RouteStop(k, float(d), float(a), float(b)) for k, d, a, b in zip(kinds, dists, la, lo, strict=True))
    return Route(line, np.concatenate([is_node, is_node[-2::-1]]), stops)


def _outbound(grid: Grid, rng: np.random.Generator) -> Polyline:
    """Garage on a road beyond a crossing 2–6 blocks from town, a staircase to Jaru, the school past it."""
    blocks = int(rng.integers(2, 7))
    east = int(rng.integers(0, blocks + 1))
    si, sj = (int(x) for x in rng.choice([-1, 1], size=2))
    moves = [(-si, 0)] * east + [(0, -sj)] * (blocks - east)
    order = rng.permutation(len(moves))
    moves = [moves[k] for k in order]
    nodes = [(si * east, sj * (blocks - east))]
    for di, dj in moves:
        nodes.append((nodes[-1][0] + di, nodes[-1][1] + dj))
    # The garage lies up a road leaving the first crossing away from the route; the school past the last.
    garage_arm = _pick_arm(rng, avoid={moves[0]})
    school_arm = _pick_arm(rng, avoid={(-moves[-1][0], -moves[-1][1])})
    pts = [grid.node(i, j) for i, j in nodes]
    garage = offset(*pts[0], _ARMS[garage_arm], float(rng.uniform(300.0, 2500.0)))
    school = offset(*pts[-1], _ARMS[school_arm], float(rng.uniform(200.0, 900.0)))
    lat, lon = zip(garage, *pts, school, strict=True)
    return Polyline.of(np.asarray(lat), np.asarray(lon))


def _pick_arm(rng: np.random.Generator, avoid: set[tuple[int, int]]) -> tuple[int, int]:
    arms = [a for a in _ARMS if a not in avoid]
    return arms[int(rng.integers(len(arms)))]


def _boarding_points(out: Polyline, rng: np.random.Generator, n: int) -> list[float]:
    """Distances along the outbound leg of n boarding points, clear of corners and of each other, metres."""
    lo, hi = 400.0, out.length_m - 800.0
    chosen: list[float] = []
    for _ in range(50 * n):
        if len(chosen) == n:
            break
        s = float(rng.uniform(lo, hi))
        # 80 m from any crossing keeps stops off corner arcs; 300 m apart keeps them distinct.
        if np.min(np.abs(out.cum_m - s)) >= 80.0 and all(abs(s - c) >= 300.0 for c in chosen):
            chosen.append(s)
    return sorted(chosen)


def arm_azimuths(route: Route, k: int) -> list[float]:
    """Azimuths of the roads leaving vertex k of the route that the route itself does not use, degrees."""
    line = route.line
    back, _, _ = GEOD.inv(line.lon[k], line.lat[k], line.lon[k - 1], line.lat[k - 1])
    used = [float(back) % 360.0, float(line.az[k]) % 360.0]
    return [a for a in _ARMS.values() if all(_angle(a, u) > 30.0 for u in used)]


def _angle(a: float, b: float) -> float:
    return abs((a - b + 180.0) % 360.0 - 180.0)
