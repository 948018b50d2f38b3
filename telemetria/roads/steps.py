"""A road network ready for the reports (pure): the ways split into edges at the nodes they share, a spatial
index of the edges, and the road paths between the places two fixes may lie on (roads.model.Roads).

A fix lies on a way when the way passes within the matching radius (CANDIDATES nearest edges); `links` gives the
shortest path between every directed place of one fix and every directed place of the next (a bounded Dijkstra
over the junctions, oneway respected), which the map matcher (roads/match.py) weighs; `step` is issue 20's
per-segment rule, kept for the accuracy bench. Lengths are geodesic metres (WGS 84); offsets are measured on
the network's own transverse Mercator plane, centred on its extent.
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import shapely

from telemetria.geo.geodesic import GEOD
from telemetria.geo.metric import Plane, plane_of_crs
from telemetria.roads.model import FloatArray, IntArray, Links, Locality, Place, RoadStep, Way

RADIUS_M = 40.0  # a fix lies on a way within this distance (GPS noise, the road's width, a stop on the verge)
CANDIDATES = 8  # nearest edges considered per fix
OFFSET_WEIGHT = 2.0  # metres of path one metre of a fix's offset from its road weighs
LOCALITY_M = 5000.0  # a road is said to be near a locality (a village, a hamlet) within this distance
CACHED_STEPS = 100_000  # steps remembered: the live detector recomputes the same day's segments every round
# A fix this far behind the previous one along a one-way road is noise around a vehicle that stood or crept, not
# a lap of the block: its path counts 0 m.
BEHIND_M = 25.0
# The plane's metres against the roads' geodesic ones (a transverse Mercator on the network's centre: far less than
# this over a municipality), for the search's goal-directed pruning.
PRUNE_SLACK, PRUNE_SLACK_M = 0.001, 1.0


@dataclass(frozen=True, slots=True)
class Edge:
    """A stretch of one way between two junctions: its vertices' cumulative geodesic metres and UTM coordinates."""

    way: int
    u: int  # junction index at the first vertex
    v: int  # ... at the last
    cum_m: FloatArray
    x: FloatArray
    y: FloatArray
    oneway: bool
    paved: bool

    @property
    def length_m(self) -> float:
        return float(self.cum_m[-1])


class RoadNet:
    """roads.model.Roads over one imported network."""

    def __init__(self, network_id: int, ways: Sequence[Way], localities: Sequence[Locality] = ()) -> None:
        self.network_id = network_id
        self.ways = list(ways)
        self.localities = list(localities)
        self._loc_lat = np.array([p.lat for p in self.localities], dtype=float)
        self._loc_lon = np.array([p.lon for p in self.localities], dtype=float)
        self.edges: list[Edge] = []
        self._adj: list[list[tuple[int, int, bool]]] = []  # junction → (other junction, edge, along its direction)
        self._steps: OrderedDict[tuple[object, ...], RoadStep | Links | tuple[Place, ...] | None] = OrderedDict()
        self._lock = threading.Lock()
        self._plane = _local_plane(self.ways)
        self._build()

    def to_metric(self, lon: npt.ArrayLike, lat: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Metres east and north on the network's own plane (a transverse Mercator on its centre)."""
        return self._plane.to_metric(lon, lat)

    def to_lonlat(self, x: npt.ArrayLike, y: npt.ArrayLike) -> tuple[FloatArray, FloatArray]:
        """Degrees of points on the network's plane."""
        return self._plane.to_lonlat(x, y)

    def adjacent(self, junction: int) -> list[tuple[int, int, bool]]:
        """(other junction, edge, along the edge's direction) for each edge one may leave `junction` by."""
        return self._adj[junction]

    def edge_way(self, edge: int) -> int:
        """The way (index into `ways`) an edge is a stretch of."""
        return self.edges[edge].way

    def junction_count(self) -> int:
        return len(self._adj)

    def edge_end(self, edge: int, forward: bool) -> int:
        """The junction an edge driven forward (or backward) ends at."""
        e = self.edges[edge]
        return e.v if forward else e.u

    def _build(self) -> None:
        uses: dict[int, int] = {}
        for w in self.ways:
            for n in w.node_ids:
                uses[n] = uses.get(n, 0) + 1
        junction: dict[int, int] = {}  # OSM node id → junction index (where ways meet or end)
        self.junction_of = junction

        def node(osm: int) -> int:
            if osm not in junction:
                junction[osm] = len(junction)
                self._adj.append([])
            return junction[osm]

        seg_edge: list[int] = []
        seg_k: list[int] = []
        starts: list[tuple[float, float]] = []
        ends: list[tuple[float, float]] = []
        for wi, w in enumerate(self.ways):
            lat, lon = np.asarray(w.lat, dtype=float), np.asarray(w.lon, dtype=float)
            if len(lat) < 2:
                continue
            x, y = self.to_metric(lon, lat)
            _, _, d = GEOD.inv(lon[:-1], lat[:-1], lon[1:], lat[1:])
            cum = np.concatenate([[0.0], np.cumsum(np.asarray(d, dtype=float))])
            cut = [0] + [k for k in range(1, len(lat) - 1) if uses[w.node_ids[k]] > 1] + [len(lat) - 1]
            for a, b in itertools.pairwise(cut):
                e = len(self.edges)
                u, v = node(w.node_ids[a]), node(w.node_ids[b])
                edge = Edge(wi, u, v, cum[a : b + 1] - cum[a], x[a : b + 1], y[a : b + 1], w.oneway, w.paved)
                self.edges.append(edge)
                self._adj[u].append((v, e, True))
                if not w.oneway:
                    self._adj[v].append((u, e, False))
                for k in range(b - a):
                    seg_edge.append(e)
                    seg_k.append(k)
                    starts.append((float(edge.x[k]), float(edge.y[k])))
                    ends.append((float(edge.x[k + 1]), float(edge.y[k + 1])))
        self._seg_edge = np.asarray(seg_edge, dtype=np.int64)
        self._seg_k = np.asarray(seg_k, dtype=np.int64)
        lines = shapely.linestrings(np.stack([np.asarray(starts), np.asarray(ends)], axis=1)) if starts else []
        self._tree = shapely.STRtree(lines)
        self._lengths = [e.length_m for e in self.edges]
        self._paved = [e.length_m if e.paved else 0.0 for e in self.edges]
        jx, jy = [0.0] * len(self._adj), [0.0] * len(self._adj)
        for ed in self.edges:
            jx[ed.u], jy[ed.u], jx[ed.v], jy[ed.v] = float(ed.x[0]), float(ed.y[0]), float(ed.x[-1]), float(ed.y[-1])
        self._jx, self._jy = jx, jy
        self._lines = lines

    # --- Roads --------------------------------------------------------------------------------------------------

    def nearest(self, lat: FloatArray, lon: FloatArray, radius_m: float) -> IntArray:
        """Per point, the way nearest within radius_m, -1 where none (or where the point is not finite)."""
        lat, lon = np.asarray(lat, dtype=float), np.asarray(lon, dtype=float)
        out = np.full(len(lat), -1, dtype=np.int64)
        ok = np.flatnonzero(np.isfinite(lat) & np.isfinite(lon))
        if not len(ok) or not len(self._seg_edge):
            return out
        x, y = self.to_metric(lon[ok], lat[ok])
        pairs = self._tree.query_nearest(shapely.points(x, y), max_distance=radius_m, all_matches=False)
        edges = self._seg_edge[pairs[1]]
        out[ok[pairs[0]]] = [self.edges[e].way for e in edges.tolist()]
        return out

    def step(
        self, lat0: float, lon0: float, lat1: float, lon1: float, low_m: float, high_m: float, expected_m: float
    ) -> RoadStep | None:
        """See roads.model.Roads.step; results are remembered (same arguments, same answer)."""
        # NaN (no expected length) never equals itself: the key says it as -1 so such steps are remembered too
        key = (lat0, lon0, lat1, lon1, low_m, high_m, expected_m if expected_m == expected_m else -1.0)
        with self._lock:  # analyses run in threads (reports/store/fetch.py): one network serves them all
            if key in self._steps:
                self._steps.move_to_end(key)
                kept = self._steps[key]
                assert kept is None or isinstance(kept, RoadStep)
                return kept
        found = self._step(lat0, lon0, lat1, lon1, low_m, high_m, expected_m)
        with self._lock:
            self._steps[key] = found
            if len(self._steps) > CACHED_STEPS:
                self._steps.popitem(last=False)
        return found

    def locality(self, lat: float, lon: float) -> tuple[str, float] | None:
        """(name, metres) of the locality nearest the point within LOCALITY_M, None when none is (or none imported);
        of two at the same distance, the first imported."""
        # Only those in a box a little wider than LOCALITY_M get the geodesic: an extract may hold thousands.
        dlat = LOCALITY_M / 110_000.0
        dlon = dlat / max(0.01, math.cos(math.radians(lat)))
        near = np.flatnonzero((np.abs(self._loc_lat - lat) <= dlat) & (np.abs(self._loc_lon - lon) <= dlon))
        if not len(near):
            return None
        _, _, d = GEOD.inv(np.full(len(near), lon), np.full(len(near), lat), self._loc_lon[near], self._loc_lat[near])
        k = int(np.argmin(d))
        return (self.localities[int(near[k])].name, float(d[k])) if d[k] <= LOCALITY_M else None

    def forget(self) -> None:
        """Drop the remembered steps (a benchmark's first-time figure)."""
        with self._lock:
            self._steps.clear()

    # --- the search ---------------------------------------------------------------------------------------------

    def places(self, lat: float, lon: float, radius_m: float = RADIUS_M) -> list[Place]:
        """Where a fix may lie: per edge within radius_m, its nearest place; the CANDIDATES nearest edges."""
        if not len(self._seg_edge):
            return []
        x, y = (float(v[0]) for v in self.to_metric([lon], [lat]))
        p = shapely.Point(x, y)
        return self._places_at(x, y, self._tree.query(p, predicate="dwithin", distance=radius_m))

    def prepare(self, lat: FloatArray, lon: FloatArray) -> None:
        """Find the directed places of many points at once (one projection to the plane and one STRtree query for
        all of them, instead of one each) and remember them for `links`: the same places `places` gives one point
        at a time, to the last bit (the same hits, taken in the same order, measured with the same arithmetic)."""
        if not len(self._seg_edge):
            return
        lat, lon = np.asarray(lat, dtype=float), np.asarray(lon, dtype=float)
        with self._lock:
            todo = [
                i
                for i, key in enumerate(zip(lat.tolist(), lon.tolist(), strict=True))
                if math.isfinite(key[0]) and math.isfinite(key[1]) and ("places", *key) not in self._steps
            ]
        if not todo:
            return
        xs, ys = self.to_metric(lon[todo], lat[todo])
        pairs = self._tree.query(shapely.points(xs, ys), predicate="dwithin", distance=RADIUS_M)
        # query on an array gives its (point, segment) pairs by point; each point's hits in the order a query of that
        # point alone gives them
        cuts = np.searchsorted(pairs[0], np.arange(len(todo) + 1))
        hits = pairs[1]
        found = {}
        for j, i in enumerate(todo):
            key = ("places", float(lat[i]), float(lon[i]))
            found[key] = self._directed(self._places_at(float(xs[j]), float(ys[j]), hits[cuts[j] : cuts[j + 1]]))
        with self._lock:
            for key, hit in found.items():
                self._steps[key] = hit
            while len(self._steps) > CACHED_STEPS:
                self._steps.popitem(last=False)

    def _places_at(self, x: float, y: float, hits: IntArray) -> list[Place]:
        """places' answer for the point (x, y) on the plane, given the segments within the radius of it."""
        best: dict[int, Place] = {}
        for s in hits.tolist():
            e, k = int(self._seg_edge[s]), int(self._seg_k[s])
            edge = self.edges[e]
            ax, ay, bx, by = edge.x[k], edge.y[k], edge.x[k + 1], edge.y[k + 1]
            dx, dy = bx - ax, by - ay
            span = dx * dx + dy * dy
            f = 0.0 if span == 0 else min(1.0, max(0.0, ((x - ax) * dx + (y - ay) * dy) / span))
            off = math.hypot(ax + f * dx - x, ay + f * dy - y)
            at = float(edge.cum_m[k] + f * (edge.cum_m[k + 1] - edge.cum_m[k]))
            if e not in best or off < best[e].off_m:
                best[e] = Place(e, at, off, (math.degrees(math.atan2(dx, dy)) + 360.0) % 360.0)
        return sorted(best.values(), key=lambda c: (c.off_m, c.edge))[:CANDIDATES]

    def _step(
        self, lat0: float, lon0: float, lat1: float, lon1: float, low_m: float, high_m: float, expected_m: float
    ) -> RoadStep | None:
        froms, tos = self.places(lat0, lon0), self.places(lat1, lon1)
        if not froms or not tos:
            return None
        best: tuple[float, float, Place, Place, list[tuple[int, float, float]]] | None = None
        targets = {n for b in tos for n in (self.edges[b.edge].u, self.edges[b.edge].v)}
        for a in froms:
            reach = high_m + a.off_m + RADIUS_M
            dist, back = self._search(a, reach, targets)
            for b in tos:
                path = self._path(a, b, dist, back)
                if path is None:
                    continue
                length = sum(hi - lo for _, lo, hi in path)
                slack = a.off_m + b.off_m
                if not low_m - slack <= length <= high_m + slack:
                    continue
                fit = abs(length - expected_m) if math.isfinite(expected_m) else length
                score = fit + OFFSET_WEIGHT * slack
                if best is None or (score, length) < (best[0], best[1]):
                    best = (score, length, a, b, path)
        if best is None:
            return None
        _, length, a, b, path = best
        paved = sum(hi - lo for e, lo, hi in path if self.edges[e].paved)
        return RoadStep(length, paved, length - paved, self.edges[a.edge].way, self.edges[b.edge].way)

    def links(self, lat0: float, lon0: float, lat1: float, lon1: float, reach_m: float) -> Links:
        """The road paths from where the first point may lie to where the second may, each place taken once per way
        one may drive along it (Place.forward), up to reach_m long; remembered (same arguments, same answer).

        A place just behind another in the same direction of travel (BEHIND_M) is reached in 0 m: noise around a
        vehicle that stood or crept, not a lap of the block."""
        key = ("links", lat0, lon0, lat1, lon1, reach_m)
        with self._lock:
            if key in self._steps:
                self._steps.move_to_end(key)
                hit = self._steps[key]
                assert isinstance(hit, Links)
                return hit
        froms, tos = self._places_of(lat0, lon0), self._places_of(lat1, lon1)
        shape = (len(froms), len(tos))
        length, paved = np.full(shape, math.inf), np.zeros(shape)
        # the junction each place of the second point is entered by (its edge's first vertex driven forward)
        targets = {self.edges[b.edge].u if b.forward else self.edges[b.edge].v for b in tos}
        goal = self._goal(targets)
        for i, a in enumerate(froms):
            dist, pav = self._tree_from(a, reach_m + a.off_m, targets, goal) if tos else ({}, {})
            for k, b in enumerate(tos):
                path = self._directed_length(a, b, dist, pav)
                if path is not None:
                    length[i, k], paved[i, k] = path
        found = Links(froms, tos, length, paved)
        with self._lock:
            self._steps[key] = found
            if len(self._steps) > CACHED_STEPS:
                self._steps.popitem(last=False)
        return found

    def _places_of(self, lat: float, lon: float) -> tuple[Place, ...]:
        """The directed places of a point, remembered: each fix of a day ends one segment and starts the next."""
        key = ("places", lat, lon)
        with self._lock:
            hit = self._steps.get(key)
        if hit is None:
            hit = self._directed(self.places(lat, lon))
            with self._lock:
                self._steps[key] = hit
                if len(self._steps) > CACHED_STEPS:
                    self._steps.popitem(last=False)
        assert isinstance(hit, tuple)
        return hit

    def _goal(self, targets: set[int]) -> tuple[float, float, float]:
        """A circle (centre x, y and radius on the plane) holding the junctions of `targets`."""
        tx, ty = [self._jx[t] for t in targets], [self._jy[t] for t in targets]
        if not tx:
            return 0.0, 0.0, 0.0
        cx, cy = (min(tx) + max(tx)) / 2, (min(ty) + max(ty)) / 2
        return cx, cy, max(math.hypot(x - cx, y - cy) for x, y in zip(tx, ty, strict=True))

    def _tree_from(
        self, a: Place, limit_m: float, targets: set[int], goal: tuple[float, float, float]
    ) -> tuple[dict[int, float], dict[int, float]]:
        """Metres from directed place `a` to the junctions within limit_m (leaving along its edge its way, oneway
        respected) until every junction of `targets` is settled, and the paved metres of each one's shortest path:
        _search's tree, its lengths summed in the same order (so equal paths stay equal to the last bit), without
        the back pointers a path's pieces would need."""
        edge = self.edges[a.edge]
        lengths, paved_of = self._lengths, self._paved
        start, init = (edge.v, edge.length_m - a.at_m) if a.forward else (edge.u, a.at_m)
        dist: dict[int, float] = {}
        pav: dict[int, float] = {-1: init if edge.paved else 0.0}
        heap: list[tuple[float, int, int, int]] = [(init, start, -1, -1)]
        left = len(targets)
        # Goal-directed pruning: a junction from which even the straight line to the circle round the targets
        # leaves the limit is on no path that could reach one in time (the road is never shorter than the line on
        # the plane, PRUNE_SLACK aside), so it is not searched past; the junctions settled keep their metres.
        jx, jy = self._jx, self._jy
        cx, cy, rt = goal
        cut = limit_m * (1 + PRUNE_SLACK) + PRUNE_SLACK_M + rt
        hypot, push, pop, adj = math.hypot, heapq.heappush, heapq.heappop, self._adj
        # A junction is queued again only at no more metres than it already is (an entry beyond the limit, or longer
        # than one queued, could never be the one it is settled by: the same tree, fewer entries); an equal one is
        # still queued, so ties are settled by the same (metres, junction, previous, edge) order as ever.
        queued: dict[int, float] = {start: init}
        while heap and left:
            d, n, prev, e = pop(heap)
            if d > limit_m:
                break
            if n in dist:
                continue
            dist[n] = d
            pav[n] = pav[prev] + (paved_of[e] if e >= 0 else 0.0)
            left -= n in targets
            for m, e2, _ in adj[n]:
                if m not in dist:
                    nd = d + lengths[e2]
                    if nd <= limit_m and nd <= queued.get(m, nd) and nd + hypot(jx[m] - cx, jy[m] - cy) <= cut:
                        queued[m] = nd
                        push(heap, (nd, m, n, e2))
        return dist, pav

    def _directed_length(
        self, a: Place, b: Place, dist: dict[int, float], pav: dict[int, float]
    ) -> tuple[float, float] | None:
        """(metres, paved metres) of the shortest path leaving place a and reaching place b each in its direction of
        travel (_directed_path's, read off _tree_from's tree from a); None when b is out of reach."""
        ea, eb = self.edges[a.edge], self.edges[b.edge]
        options: list[tuple[float, float]] = []
        if a.edge == b.edge and a.forward == b.forward:
            ahead = b.at_m - a.at_m if a.forward else a.at_m - b.at_m
            if ahead >= 0:
                span = max(a.at_m, b.at_m) - min(a.at_m, b.at_m)
                options.append((ahead, span if ea.paved else 0.0))
            elif -ahead <= BEHIND_M:
                return 0.0, 0.0
        if a.forward and b.forward and eb.v == ea.u and eb.oneway and ea.oneway:
            if a.at_m + eb.length_m - b.at_m <= BEHIND_M:
                return 0.0, 0.0
        n, tail = (eb.u, b.at_m) if b.forward else (eb.v, eb.length_m - b.at_m)
        d = dist.get(n)
        if d is not None:
            options.append((d + tail, pav[n] + (tail if eb.paved else 0.0)))
        if not options:
            return None
        return min(options, key=lambda o: o[0])

    def _directed(self, places: Sequence[Place]) -> tuple[Place, ...]:
        """Each place once per direction one may drive along its edge."""
        out = []
        for p in places:
            out.append(Place(p.edge, p.at_m, p.off_m, p.bearing_deg, True))
            if not self.edges[p.edge].oneway:
                out.append(Place(p.edge, p.at_m, p.off_m, p.bearing_deg, False))
        return tuple(out)

    def _directed_path(
        self, a: Place, b: Place, dist: dict[int, float], back: dict[int, tuple[int, int]]
    ) -> list[tuple[int, float, float]] | None:
        """The shortest path leaving place a and reaching place b each in its direction of travel, as (edge, from
        m, to m) pieces; None when b is out of reach. `dist`, `back`: _search from a (its direction)."""
        eb = self.edges[b.edge]
        options: list[tuple[float, list[tuple[int, float, float]]]] = []
        if a.edge == b.edge and a.forward == b.forward:
            ahead = b.at_m - a.at_m if a.forward else a.at_m - b.at_m
            if ahead >= 0:
                options.append((ahead, [(a.edge, min(a.at_m, b.at_m), max(a.at_m, b.at_m))]))
            elif -ahead <= BEHIND_M:
                return [(a.edge, a.at_m, a.at_m)]
        if a.forward and b.forward and eb.v == self.edges[a.edge].u and eb.oneway and self.edges[a.edge].oneway:
            if a.at_m + eb.length_m - b.at_m <= BEHIND_M:
                return [(a.edge, a.at_m, a.at_m)]
        if b.forward and eb.u in dist:  # enter b's edge at its first vertex
            options.append((dist[eb.u] + b.at_m, [*self._pieces(a, eb.u, back), (b.edge, 0.0, b.at_m)]))
        if not b.forward and eb.v in dist:  # enter at its last vertex, travel backward
            options.append(
                (dist[eb.v] + eb.length_m - b.at_m, [*self._pieces(a, eb.v, back), (b.edge, b.at_m, eb.length_m)])
            )
        if not options:
            return None
        return min(options, key=lambda o: o[0])[1]

    def _behind_m(self, a: Place, b: Place) -> float:
        """Metres place b lies behind place a along a one-way road (b's stretch running into a's, or the same
        stretch), inf when it does not."""
        ea, eb = self.edges[a.edge], self.edges[b.edge]
        if a.edge == b.edge:
            return a.at_m - b.at_m if ea.oneway and b.at_m < a.at_m else math.inf
        if ea.oneway and eb.oneway and eb.v == ea.u:
            return a.at_m + eb.length_m - b.at_m
        return math.inf

    def distances(self, froms: Sequence[Place], tos: Sequence[Place], reach_m: float) -> list[list[float]]:
        """Road metres from each place of `froms` to each of `tos`, inf where no path lies within reach_m (what a
        whole-track matcher's transitions need: bench/road_methods.py compares one with the rule above)."""
        targets = {n for b in tos for n in (self.edges[b.edge].u, self.edges[b.edge].v)}
        out = []
        for a in froms:
            dist, back = self._search(a, reach_m + a.off_m, targets)
            row = []
            for b in tos:
                path = self._path(a, b, dist, back)
                row.append(math.inf if path is None else sum(hi - lo for _, lo, hi in path))
            out.append(row)
        return out

    def _search(
        self, a: Place, reach_m: float, targets: set[int]
    ) -> tuple[dict[int, float], dict[int, tuple[int, int]]]:
        """Metres from place `a` to junctions within reach_m (leaving along its edge, oneway respected), until every
        junction of `targets` is settled, and each junction's (previous junction or -1 for a's edge, edge taken)."""
        edge = self.edges[a.edge]
        lengths = self._lengths
        dist: dict[int, float] = {}
        back: dict[int, tuple[int, int]] = {}
        heap: list[tuple[float, int, int, int]] = []
        if a.forward is not False:
            heap.append((edge.length_m - a.at_m, edge.v, -1, a.edge))
        if not edge.oneway and a.forward is not True:
            heap.append((a.at_m, edge.u, -1, a.edge))
        heapq.heapify(heap)
        left = len(targets)
        while heap and left:
            d, n, prev, e = heapq.heappop(heap)
            if d > reach_m:
                break
            if n in dist:
                continue
            dist[n], back[n] = d, (prev, e)
            left -= n in targets
            for m, e2, _ in self._adj[n]:
                if m not in dist:
                    heapq.heappush(heap, (d + lengths[e2], m, n, e2))
        return dist, back

    def _path(
        self, a: Place, b: Place, dist: dict[int, float], back: dict[int, tuple[int, int]]
    ) -> list[tuple[int, float, float]] | None:
        """The shortest path from a to b as (edge, from m, to m) pieces, or None when b is out of reach."""
        eb = self.edges[b.edge]
        options: list[tuple[float, list[tuple[int, float, float]]]] = []
        if a.edge == b.edge and (b.at_m >= a.at_m or not eb.oneway):
            options.append((abs(b.at_m - a.at_m), [(a.edge, min(a.at_m, b.at_m), max(a.at_m, b.at_m))]))
        if eb.u in dist:  # enter b's edge at its first vertex, travel forward
            options.append((dist[eb.u] + b.at_m, [*self._pieces(a, eb.u, back), (b.edge, 0.0, b.at_m)]))
        if eb.v in dist and not eb.oneway:  # enter at its last vertex, travel backward
            pieces = [*self._pieces(a, eb.v, back), (b.edge, b.at_m, eb.length_m)]
            options.append((dist[eb.v] + eb.length_m - b.at_m, pieces))
        if not options:
            return None
        return min(options, key=lambda o: o[0])[1]

    def _pieces(self, a: Place, n: int, back: dict[int, tuple[int, int]]) -> list[tuple[int, float, float]]:
        """The edges from place a to junction n, in order, as (edge, from m, to m) along each."""
        out: list[tuple[int, float, float]] = []
        while True:
            prev, e = back[n]
            edge = self.edges[e]
            if prev < 0:  # a's own edge: from a's place to the end it left by
                out.append((e, a.at_m, edge.length_m) if n == edge.v else (e, 0.0, a.at_m))
                break
            out.append((e, 0.0, edge.length_m))
            n = prev
        return out[::-1]


def _local_plane(ways: Sequence[Way]) -> Plane:
    """A transverse Mercator (GRS 80) centred on the ways' extent: offsets in true metres wherever the network lies
    (a fixed UTM zone would stretch them by 1.5 % three degrees away from its meridian, by a quarter 40° away)."""
    lats = [v for w in ways if w.lat for v in (min(w.lat), max(w.lat))] or [0.0]
    lons = [v for w in ways if w.lon for v in (min(w.lon), max(w.lon))] or [0.0]
    lat0, lon0 = (min(lats) + max(lats)) / 2, (min(lons) + max(lons)) / 2
    plane = f"+proj=tmerc +lat_0={lat0:.6f} +lon_0={lon0:.6f} +k=1 +x_0=0 +y_0=0 +ellps=GRS80 +units=m +no_defs"
    return plane_of_crs(plane)


def build(network_id: int, ways: Sequence[Way], localities: Sequence[Locality] = ()) -> RoadNet:
    """The network `network_id` of `ways` (in the order of their idx) and its localities ready for the reports."""
    return RoadNet(network_id, ways, localities)
