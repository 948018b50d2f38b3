"""The speed limit that applies at each fix: speed zone, else route, else vehicle, else the default (pure)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import shapely
from shapely.geometry import shape

from telemetria.reports.analysis.track import FloatArray
from telemetria.reports.model import SpeedZone


def zone_limit_kmh(lat: npt.ArrayLike, lon: npt.ArrayLike, zones: Sequence[SpeedZone]) -> FloatArray:
    """Per fix, the lowest limit among the active zones containing it (boundary included), km/h; NaN outside all."""
    la = np.asarray(lat, dtype=float)
    lo = np.asarray(lon, dtype=float)
    out = np.full(la.shape, np.nan)
    for zone in zones:
        if not zone.active:
            continue
        geom = shape(zone.geometry)
        if geom.geom_type not in ("Polygon", "MultiPolygon"):
            raise ValueError(f"speed zone {zone.name!r} must be a Polygon or MultiPolygon, got {geom.geom_type}")
        shapely.prepare(geom)
        inside = shapely.intersects_xy(geom, lo, la)  # NaN coordinates are outside
        out = np.where(inside, np.fmin(out, zone.limit_kmh), out)  # fmin: NaN (no zone yet) loses
    return out


def applicable_limit_kmh(
    lat: npt.ArrayLike,
    lon: npt.ArrayLike,
    zones: Sequence[SpeedZone],
    route_limit_kmh: npt.ArrayLike | None,
    vehicle_limit_kmh: float | None,
    default_kmh: float,
) -> FloatArray:
    """The limit at each fix, km/h: the lowest active zone containing it, else its route's, else the vehicle's, else
    default_kmh (ReportParams.default_limit_kmh).

    route_limit_kmh is per fix: the limit of the vehicle's route the fix lies on, NaN where it is on none (or that
    route has no limit of its own); None when no route applies at all. A zone wins even when its limit is higher.
    """
    la = np.asarray(lat, dtype=float)
    fallback = default_kmh if vehicle_limit_kmh is None or not np.isfinite(vehicle_limit_kmh) else vehicle_limit_kmh
    out = np.full(la.shape, float(fallback))
    if route_limit_kmh is not None:
        route = np.broadcast_to(np.asarray(route_limit_kmh, dtype=float), la.shape)
        out = np.where(np.isfinite(route), route, out)
    zone = zone_limit_kmh(la, lon, zones)
    return np.where(np.isfinite(zone), zone, out)
