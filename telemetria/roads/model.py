"""What the roads domain passes around (pure): ways as imported, a network's summary, a matched stretch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Protocol

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

# OSM `surface` values counted as paved; anything else known counts as unpaved; no tag falls back on `highway`.
PAVED_SURFACES = frozenset(
    {"paved", "asphalt", "concrete", "concrete:plates", "concrete:lanes", "paving_stones", "sett", "chipseal",
     "metal", "wood", "cobblestone", "bricks", "unhewn_cobblestone"}
)  # fmt: skip
# Without a `surface` tag: these highway kinds are taken as paved (trunks, primaries...), the rest as unpaved.
PAVED_HIGHWAYS = frozenset({"motorway", "motorway_link", "trunk", "trunk_link", "primary", "primary_link"})


def is_paved(surface: str | None, highway: str) -> bool:
    """Whether a way counts as paved: by its `surface` tag when it has one, else by its `highway` kind."""
    if surface:
        return surface.strip().lower() in PAVED_SURFACES
    return highway in PAVED_HIGHWAYS


@dataclass(frozen=True, slots=True)
class Way:
    """An OSM way kept for vehicles: its id, tags we use, and its vertices in order with their OSM node ids.

    Ways meet where they share a node id (that is how OSM says two roads connect); a way's vertices are
    (lat, lon) degrees WGS 84. `label` is what a report names the road by: the name, else the ref, else None.
    """

    osm_id: int
    highway: str
    name: str | None
    ref: str | None
    surface: str | None
    oneway: bool
    node_ids: tuple[int, ...]
    lat: tuple[float, ...]
    lon: tuple[float, ...]
    # Paved as the import decided (road_ways.paved): a stored network keeps its split even if the rules change.
    paved_as_imported: bool | None = None

    @property
    def label(self) -> str | None:
        return self.name or self.ref

    @property
    def paved(self) -> bool:
        if self.paved_as_imported is not None:
            return self.paved_as_imported
        return is_paved(self.surface, self.highway)


def in_force_on(networks: Sequence[tuple[date, int]], day: date) -> int | None:
    """The network in force on local date `day` among (first day, network id) in ascending order: the last one
    whose first day is on or before it; None when none is."""
    found = None
    for first, network in networks:
        if first <= day:
            found = network
    return found


# OSM `place` values that name where people live or gather, from a city to a farm: what a report says a road is
# near ("Linha 625, Tarilândia"). Regions, states, islands and the like name areas, not a place one passes.
LOCALITY_KINDS = frozenset(
    {"city", "town", "village", "hamlet", "suburb", "quarter", "neighbourhood", "locality", "isolated_dwelling",
     "farm"}
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Locality:
    """A named place of the extract (an OSM node tagged place=*), by which reports say where a road runs."""

    osm_id: int
    kind: str  # the `place` value (LOCALITY_KINDS)
    name: str
    lat: float
    lon: float


@dataclass(frozen=True, slots=True)
class Network:
    """One imported road network, as `telemetria roads status` and the reports name it."""

    id: int
    source: str  # the file's name as given
    sha256: str  # of the file's bytes
    bbox: tuple[float, float, float, float] | None  # W, S, E, N the import was clipped to, None: the whole file
    imported_at: datetime
    ways: int
    km: float  # length of every way kept
    named_km: float  # of them, with a name or ref
    paved_km: float
    effective_from: date | None = None  # the first local day it is in force (roads/inforce.py)
    localities: int = 0  # named places imported with it (Locality)


@dataclass(frozen=True, slots=True)
class Step:
    """How the vehicle went from fix i-1 to fix i of a matched stretch.

    method: 'road' when both fixes matched and a road path joins them (km along it), 'chord' when not (km straight);
    road/paved describe where fix i lies (its matched way), None when it did not match.
    """

    km: float
    method: str  # 'road' | 'chord'
    paved_km: float  # of km, on paved ways (0 for a chord)
    unpaved_km: float  # of km, on unpaved ways (0 for a chord)


@dataclass(frozen=True, slots=True)
class Matched:
    """A stretch of fixes matched to the roads: for each fix its way (index into the graph's ways, -1 when it did
    not match), its road label (None when unmatched or unnamed), and for each fix after the first the Step from
    the one before (len(steps) == len(fixes) - 1)."""

    way: tuple[int, ...]
    road: tuple[str | None, ...]
    steps: tuple[Step, ...] = field(default_factory=tuple)

    @property
    def road_km(self) -> float:
        return sum(s.km for s in self.steps if s.method == "road")

    @property
    def chord_km(self) -> float:
        return sum(s.km for s in self.steps if s.method == "chord")


@dataclass(frozen=True, slots=True)
class RoadStep:
    """The road path a vehicle took between two fixes: metres along it, of them on paved and on unpaved ways, and
    the way each fix lies on (indexes into the network's ways)."""

    length_m: float
    paved_m: float
    unpaved_m: float
    way_from: int
    way_to: int


@dataclass(frozen=True, slots=True)
class Place:
    """Where a fix may lie: on `edge`, `at_m` metres from its first vertex, `off_m` metres from the fix."""

    edge: int
    at_m: float
    off_m: float
    bearing_deg: float = math.nan  # the edge's direction there (its first vertex to its last), degrees from north
    forward: bool | None = None  # driven along the edge's direction (True), against it (False), either (None)

    @property
    def travel_deg(self) -> float:
        """The direction of travel there, degrees from north (NaN when the place is not directed)."""
        if self.forward is None:
            return math.nan
        return self.bearing_deg if self.forward else (self.bearing_deg + 180.0) % 360.0


@dataclass(frozen=True, slots=True, eq=False)
class Links:
    """The road paths between the places of two fixes (roads.model.Roads.links), each place directed (a two-way
    road's place twice): per pair (i of `froms`, j of `tos`), the metres of the shortest path leaving froms[i]
    and reaching tos[j] each in its direction (inf where none lies within reach), and its paved metres."""

    froms: tuple[Place, ...]
    tos: tuple[Place, ...]
    length_m: FloatArray  # (len(froms), len(tos))
    paved_m: FloatArray


class Roads(Protocol):
    """A road network as the reports use it (roads/steps.py builds one from an imported network's ways)."""

    @property
    def network_id(self) -> int: ...

    @property
    def ways(self) -> Sequence[Way]:
        """The network's ways; indexes are `road_ways.idx`."""
        ...

    def nearest(self, lat: FloatArray, lon: FloatArray, radius_m: float) -> IntArray:
        """Per point, the index of the nearest way within radius_m, -1 where none."""
        ...

    def locality(self, lat: float, lon: float) -> tuple[str, float] | None:
        """(name, metres) of the network's locality nearest the point within LOCALITY_M, None when none is."""
        ...

    def links(self, lat0: float, lon0: float, lat1: float, lon1: float, reach_m: float) -> Links:
        """The road paths from each place the first point may lie on to each the second may, up to reach_m."""
        ...

    def prepare(self, lat: FloatArray, lon: FloatArray) -> None:
        """Find the places of many points at once, ahead of the `links` that will ask for them (a cost, not a
        result: links answers the same with or without it)."""
        ...

    def edge_way(self, edge: int) -> int:
        """The way an edge (Place.edge) is a stretch of."""
        ...

    def step(
        self, lat0: float, lon0: float, lat1: float, lon1: float, low_m: float, high_m: float, expected_m: float
    ) -> RoadStep | None:
        """The road path from the first point to the second (each taken where it projects on a way within the
        matching radius) whose length lies in [low_m - both offsets, high_m + both offsets], the one closest to
        expected_m (NaN: the shortest); None when no road path is plausible (off-road, disconnected, too long)."""
        ...
