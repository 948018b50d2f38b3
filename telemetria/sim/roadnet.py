"""The simulated grid as the road network OpenStreetMap would show (pure): named, numbered and surfaced ways.

One way per block (between two neighbouring crossings), so tags can change along a road as they do on the map:
- the E-W road through Jaru is the federal highway (ref BR-364, trunk, asphalt) its whole length;
- within `town_blocks` of the centre the other roads are town streets (residential, asphalt, "Rua ..."/"Avenida");
- beyond, N-S roads are linhas ("Linha 6xx") and E-W roads travessões ("Travessão Bxx"), unclassified and unpaved
  (surface unpaved, gravel or ground by block), except every fourth linha, which has only a ref ("RO-4xx").
Each crossing is one OSM node shared by the ways that meet there (id 1 + column * rows + row), and each block
carries `extra_vertices` intermediate vertices on its straight line (nodes of their own), as digitised roads do.
`grid_localities` names the town and some hamlets at crossings, as OSM's place nodes do.
"""

from __future__ import annotations

from telemetria.roads.model import Locality, Way
from telemetria.sim.roads import Grid

_UNPAVED = ("unpaved", "gravel", "ground")


def grid_ways(grid: Grid, *, town_blocks: int = 1, extra_vertices: int = 2) -> list[Way]:
    """The grid's roads as OSM-like ways, block by block (see the module's text)."""
    rows, cols = len(grid.lats), len(grid.lons)
    o = grid.origin
    next_id = 1 + rows * cols  # ids of intermediate nodes follow the crossings'

    def crossing(c: int, r: int) -> int:
        return 1 + c * rows + r

    ways: list[Way] = []
    way_id = 1
    for kind, n_lines, n_blocks in (("ns", cols, rows - 1), ("ew", rows, cols - 1)):
        for line in range(n_lines):
            for b in range(n_blocks):
                if kind == "ns":  # linha at column `line`, block from row b to b+1
                    ends = (
                        (crossing(line, b), grid.lats[b], grid.lons[line]),
                        (crossing(line, b + 1), grid.lats[b + 1], grid.lons[line]),
                    )
                    off_centre = max(abs(line - o), min(abs(b - o), abs(b + 1 - o)))
                else:  # travessão at row `line`, block from column b to b+1
                    ends = (
                        (crossing(b, line), grid.lats[line], grid.lons[b]),
                        (crossing(b + 1, line), grid.lats[line], grid.lons[b + 1]),
                    )
                    off_centre = max(abs(line - o), min(abs(b - o), abs(b + 1 - o)))
                (n0, la0, lo0), (n1, la1, lo1) = ends
                ids, lat, lon = [n0], [float(la0)], [float(lo0)]
                for k in range(1, extra_vertices + 1):
                    f = k / (extra_vertices + 1)
                    ids.append(next_id)
                    next_id += 1
                    lat.append(float(la0 + f * (la1 - la0)))
                    lon.append(float(lo0 + f * (lo1 - lo0)))
                ids.append(n1)
                lat.append(float(la1))
                lon.append(float(lo1))
                highway, name, ref, surface = _tags(kind, line - o, off_centre, town_blocks, way_id)
                ways.append(Way(way_id, highway, name, ref, surface, False, tuple(ids), tuple(lat), tuple(lon)))
                way_id += 1
    return ways  # fmt: skip


def _tags(
    kind: str, index: int, off_centre: int, town_blocks: int, way_id: int
) -> tuple[str, str | None, str | None, str]:
    """(highway, name, ref, surface) of a block of road `index` lines from the centre, `off_centre` blocks out."""
    if kind == "ew" and index == 0:
        return "trunk", None, "BR-364", "asphalt"
    if off_centre <= town_blocks:
        name = f"Avenida {index + 20}" if kind == "ns" else f"Rua {index + 20}"
        return "residential", name, None, "asphalt"
    if kind == "ns":
        if index % 4 == 0:
            return "secondary", None, f"RO-{400 + 4 * abs(index)}", "unpaved"
        return "unclassified", f"Linha {600 + 5 * (index + 12)}", None, _UNPAVED[way_id % 3]
    return "unclassified", f"Travessão B{index + 20:02d}", None, _UNPAVED[way_id % 3]


# (name, place kind, crossing east, crossing north of Jaru): the town and hamlets of the simulated municipality.
_LOCALITIES = (
    ("Jaru", "town", 0, 0), ("Tarilândia", "village", 5, 3), ("Bom Jardim", "hamlet", -4, 2),
    ("Santa Cruz", "hamlet", 3, -4), ("Nova Colina", "hamlet", -3, -3), ("Jaru-Uaru", "village", -6, 6),
)  # fmt: skip
LOCALITY_IDS = 10**9  # above every node id of grid_ways (no clash in the OSM file)


def grid_localities(grid: Grid) -> list[Locality]:
    """The simulated municipality's town and hamlets, each 300 m north-east of its crossing (as a village's node
    sits beside the road, not on it); those off the grid are left out."""
    half = min(grid.origin, len(grid.lats) - 1 - grid.origin, len(grid.lons) - 1 - grid.origin)
    out = []
    for k, (name, kind, i, j) in enumerate(_LOCALITIES):
        if max(abs(i), abs(j)) <= half:
            lat, lon = grid.node(i, j)
            out.append(Locality(LOCALITY_IDS + k, kind, name, lat + 300 / 111_320, lon + 300 / 109_500))
    return out
