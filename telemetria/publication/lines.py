"""A route's line as published: simplified, and its ends on the boarding places' grid (pure).

The map needs the line's shape, not every vertex the tracing tool made: Douglas-Peucker on its UTM zone's plane with a
tolerance of a few tens of metres keeps the roads recognisable and the answer small. A line often begins or ends
at a boarding place (the first child's home), so when boarding places are rounded the line's two ends are moved
to the same grid: the line would otherwise point at the place the grid hides. For the same reason the vertices
within one cell of a boarding place are dropped: a spur out to a farm gate and back keeps its tip under
Douglas-Peucker (an extreme point), and that tip is the place itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import shapely

from telemetria.geo.metric import plane_of
from telemetria.publication.grid import PLACES, snap

TOLERANCE_M = 20.0


def public_line(
    lon: Sequence[float],
    lat: Sequence[float],
    cell_m: float,
    tolerance_m: float = TOLERANCE_M,
    hide: Sequence[tuple[float, float]] = (),
) -> list[list[float]]:
    """The line as [[lat, lon], ...] degrees: simplified within `tolerance_m`, ends on the `cell_m` grid, no
    vertex but the ends within `cell_m` of a place in `hide` ((lon, lat) degrees: the boarding places)."""
    if len(lon) < 2:
        return []
    plane = plane_of(lon)
    x, y = plane.to_metric(lon, lat)
    simple = shapely.LineString(np.column_stack([x, y])).simplify(tolerance_m, preserve_topology=False)
    xy = np.asarray(simple.coords, dtype=float)
    if cell_m > 0 and len(hide) and len(xy) > 2:
        hx, hy = plane.to_metric([h[0] for h in hide], [h[1] for h in hide])
        inner = xy[1:-1]
        near = np.hypot(inner[:, None, 0] - np.asarray(hx)[None, :], inner[:, None, 1] - np.asarray(hy)[None, :])
        keep = np.concatenate([[True], near.min(axis=1) > cell_m, [True]])
        xy = xy[keep]
    glon, glat = plane.to_lonlat(xy[:, 0], xy[:, 1])
    out = [[round(float(a), PLACES), round(float(o), PLACES)] for a, o in zip(glat, glon, strict=True)]
    if cell_m > 0:
        # The ends on the boarding places' grid, each on its own zone's plane as grid.snap puts the places
        # (Douglas-Peucker keeps a line's ends where they were).
        first, last = snap([lat[0], lat[-1]], [lon[0], lon[-1]], cell_m)
        out[0], out[-1] = list(first), list(last)
    return out
