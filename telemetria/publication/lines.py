"""A route's line as published: simplified, and its ends on the boarding places' grid (pure).

The map needs the line's shape, not every vertex the tracing tool made: Douglas-Peucker in the UTM plane with a
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

from telemetria.geo.metric import to_lonlat, to_metric
from telemetria.publication.grid import PLACES, snap_xy

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
    x, y = to_metric(lon, lat)
    simple = shapely.LineString(np.column_stack([x, y])).simplify(tolerance_m, preserve_topology=False)
    xy = np.asarray(simple.coords, dtype=float)
    if cell_m > 0 and len(hide) and len(xy) > 2:
        hx, hy = to_metric([h[0] for h in hide], [h[1] for h in hide])
        inner = xy[1:-1]
        near = np.hypot(inner[:, None, 0] - np.asarray(hx)[None, :], inner[:, None, 1] - np.asarray(hy)[None, :])
        keep = np.concatenate([[True], near.min(axis=1) > cell_m, [True]])
        xy = xy[keep]
    if cell_m > 0:
        ends = [0, len(xy) - 1]
        ex, ey = snap_xy(xy[ends, 0], xy[ends, 1], cell_m)
        xy[ends, 0], xy[ends, 1] = ex, ey
    glon, glat = to_lonlat(xy[:, 0], xy[:, 1])
    return [[round(float(a), PLACES), round(float(o), PLACES)] for a, o in zip(glat, glon, strict=True)]
