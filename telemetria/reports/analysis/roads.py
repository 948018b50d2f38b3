"""Segments off the routes measured along the roads, and every segment's paved and unpaved metres (pure).

With a road network in force on the day (telemetria/roads), a segment the routes do not explain (a chord today)
is measured along the road path between its two fixes when one is plausible (roads.model.Roads.step: its length
within what the chord, the offsets and max_jump_kmh × dt allow, the one closest to what the reported speeds
imply, else the shortest); a gap is bridged by the shortest plausible road path. A segment along a route takes
its pavement from the roads under the route's line between its two measures (a profile sampled every
PROFILE_STEP_M along the line, kept per route geometry and network). Each decision looks at the segment's two
fixes only, as the route method does, so a window with context gives the same per-fix figures as the whole day.
"""

from __future__ import annotations

import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from telemetria.geo.routeline import RouteLine
from telemetria.reports.analysis.track import FloatArray, IntArray, Track
from telemetria.roads.model import Roads

PROFILE_STEP_M = 25.0  # a route line's pavement is read at this spacing along it
NEAR_ROAD_M = 30.0  # a route line's sample or a fix lies on the nearest way within this distance, else on none
# Kept per built network object (its id() checked through a weak reference, so a network rebuilt under a reused
# id, after a TRUNCATE or a restore, never gets another's profiles) and route geometry.
_PROFILES: OrderedDict[tuple[int, int, bytes, bytes], tuple[weakref.ref[Roads], Profile]] = OrderedDict()
_PROFILES_MAX = 1024
_LOCK = threading.Lock()


@dataclass(frozen=True, slots=True, eq=False)
class Profile:
    """A route line's pavement: per piece of PROFILE_STEP_M along it, cumulative paved and unpaved metres."""

    edges_m: FloatArray  # 0, step, 2·step, ..., length: the pieces' bounds (geodesic metres along the line)
    paved_cum: FloatArray  # paved metres from the start to each bound
    unpaved_cum: FloatArray

    def split(self, m0: float, m1: float) -> tuple[float, float]:
        """Paved and unpaved metres of the line between measures m0 and m1 (either order)."""
        lo, hi = min(m0, m1), max(m0, m1)
        p = np.interp([lo, hi], self.edges_m, self.paved_cum)
        u = np.interp([lo, hi], self.edges_m, self.unpaved_cum)
        return float(p[1] - p[0]), float(u[1] - u[0])


def profile(line: RouteLine, roads: Roads) -> Profile:
    """The pavement profile of a route line on a network, kept per (line, built network): ids restart (a test's
    TRUNCATE, a restore), so the network itself is the key, held weakly to keep no old network alive."""
    key = (id(roads), roads.network_id, line.lon.tobytes(), line.lat.tobytes())
    with _LOCK:  # analyses run in threads (reports/store/fetch.py)
        kept = _PROFILES.get(key)
        if kept is not None and kept[0]() is roads:
            _PROFILES.move_to_end(key)
            return kept[1]
    edges = np.unique(np.concatenate([np.arange(0.0, line.length_m, PROFILE_STEP_M), [line.length_m]]))
    mid = (edges[:-1] + edges[1:]) / 2
    lon, lat = line.point_at(mid)
    way = roads.nearest(lat, lon, NEAR_ROAD_M)
    paved_flag = np.array([roads.ways[w].paved if w >= 0 else False for w in way.tolist()], dtype=bool)
    known = way >= 0
    piece = np.diff(edges)
    paved = np.concatenate([[0.0], np.cumsum(np.where(known & paved_flag, piece, 0.0))])
    unpaved = np.concatenate([[0.0], np.cumsum(np.where(known & ~paved_flag, piece, 0.0))])
    got = Profile(edges, paved, unpaved)
    with _LOCK:
        _PROFILES[key] = (weakref.ref(roads), got)
        _PROFILES.move_to_end(key)
        if len(_PROFILES) > _PROFILES_MAX:
            _PROFILES.popitem(last=False)
    return got


@dataclass(frozen=True, slots=True, eq=False)
class RoadSegments:
    """Per segment k (from fix a[k] to fix b[k]): the road length (NaN where no plausible road path), its paved
    and unpaved metres, and the way the end fix lies on (-1: none)."""

    length_m: FloatArray
    paved_m: FloatArray
    unpaved_m: FloatArray
    way_to: IntArray


def along_roads(
    roads: Roads, track: Track, a: IntArray, b: IntArray, chord: FloatArray, todo: np.ndarray, low: FloatArray,
    high: FloatArray, expected: FloatArray,
) -> RoadSegments:  # fmt: skip
    """Road metres of the segments selected by `todo`, each between low[k] and high[k] metres, closest to
    expected[k] (NaN: the shortest); see the module's text."""
    m = len(a)
    length, paved, unpaved = np.full(m, np.nan), np.zeros(m), np.zeros(m)
    way_to = np.full(m, -1, dtype=np.int64)
    lat, lon = track.lat, track.lon
    for k in np.flatnonzero(todo).tolist():
        i, j = int(a[k]), int(b[k])
        found = roads.step(
            float(lat[i]), float(lon[i]), float(lat[j]), float(lon[j]), float(low[k]), float(high[k]),
            float(expected[k]),
        )  # fmt: skip
        if found is not None:
            length[k], paved[k], unpaved[k], way_to[k] = found.length_m, found.paved_m, found.unpaved_m, found.way_to
    return RoadSegments(length, paved, unpaved, way_to)
