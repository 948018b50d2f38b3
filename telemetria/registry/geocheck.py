"""Checks shared by route and zone geometries: numbers, positions inside Brazil, lines, stops, polygons (pure).

Errors name a field: 'geometry' (the line or polygon as a whole), 'coordinates[i]' or 'coordinates[i].lat'
(point i, counted from 0 across the whole file), 'stops[n].kind' and so on.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import time
from typing import Any

import numpy as np
from shapely.geometry import MultiPolygon, Polygon
from shapely.geometry.polygon import orient
from shapely.validation import explain_validity

from telemetria.geo.geodesic import GEOD, distance_m, line_length_m

LAT_RANGE = (-34.0, 6.0)  # Brazil's bounding box, islands included (Trindade is at lon -28.8)
LON_RANGE = (-74.5, -28.0)
MAX_POINTS = 100_000
MAX_JUMP_M = 20_000.0
MAX_LENGTH_M = 1_000_000.0
JOIN_M = 30.0  # lines of one file join when each starts within this distance of the previous one's end
MAX_ZONE_KM2 = 2000.0

Coord = tuple[float, float]  # (lon, lat) degrees, WGS84, as in GeoJSON
Parsed = tuple[list[list[Coord]], list["StopIn"], str | None]  # line parts, stops, name, as a file gives them


@dataclass(frozen=True)
class StopIn:
    name: str
    lat: float
    lon: float
    kind: str  # 'boarding' | 'school' | 'garage'
    scheduled_time: time | None = None


@dataclass(frozen=True)
class RouteGeometry:
    coords: list[Coord]
    length_m: float
    stops: list[StopIn]
    name: str | None = None  # the name found in the file, if any


class RouteFileError(ValueError):
    """A file or geometry that cannot be a route (or zone); `field` says where, the message says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def show(v: object) -> str:
    s = repr(v)
    return s if len(s) <= 40 else s[:37] + "..."


def num(v: object, field: str, text: bool = False) -> float:
    # GeoJSON coordinates must be JSON numbers; XML attributes and KML tuples are text by nature.
    if v is None or isinstance(v, bool) or not isinstance(v, int | float | str) or (isinstance(v, str) and not text):
        raise RouteFileError(field, "missing" if v is None else f"{show(v)} is not a number")
    try:
        f = float(v)
    except ValueError:
        raise RouteFileError(field, f"{show(v)} is not a number") from None
    except OverflowError:
        f = math.inf
    if not math.isfinite(f):
        raise RouteFileError(field, f"{show(v)} is not a finite number")
    return f


def in_box(lon: float, lat: float) -> bool:
    return LAT_RANGE[0] <= lat <= LAT_RANGE[1] and LON_RANGE[0] <= lon <= LON_RANGE[1]


def place(lon: float, lat: float, field: str, label: str) -> Coord:
    for axis, v, lim in (("lon", lon, 180.0), ("lat", lat, 90.0)):
        if not -lim <= v <= lim:
            raise RouteFileError(f"{field}.{axis}", f"{label}: {axis} {v:g} is outside -{lim:g}..{lim:g}")
    if not in_box(lon, lat):
        where = f"{label}: (lon {lon:g}, lat {lat:g}) is outside Brazil (lat -34..6, lon -74.5..-28)"
        if in_box(lat, lon):
            raise RouteFileError(field, f"{where}; latitude and longitude look swapped (GeoJSON and KML write lon,lat)")
        raise RouteFileError(f"{field}.{'lat' if not LAT_RANGE[0] <= lat <= LAT_RANGE[1] else 'lon'}", where)
    return lon, lat


def check_point(lon: float, lat: float, field: str = "point", label: str = "point") -> Coord:
    """(lon, lat) degrees checked finite, in range and inside Brazil's bounding box; `field` names it in errors."""
    return place(num(lon, f"{field}.lon"), num(lat, f"{field}.lat"), field, label)


def position(p: object, field: str, label: str) -> Coord:
    if not isinstance(p, list | tuple) or not 2 <= len(p) <= 3:
        raise RouteFileError(field, f"{label}: expected [lon, lat] or [lon, lat, alt], got {show(p)}")
    if len(p) == 3:
        num(p[2], f"{field}.alt")  # accepted and dropped, but it must still be a number
    return place(num(p[0], f"{field}.lon"), num(p[1], f"{field}.lat"), field, label)


def too_many(n: int) -> None:
    if n > MAX_POINTS:
        raise RouteFileError("geometry", f"{n} points is more than the {MAX_POINTS} a route may have")


def points(raw: object, base: str) -> list[Coord]:
    if not isinstance(raw, list):
        raise RouteFileError(base, f"expected an array of [lon, lat] positions, got {show(raw)}")
    too_many(len(raw))
    return [position(p, f"{base}[{i}]", f"point {i}") for i, p in enumerate(raw)]


def join_parts(parts: list[list[Coord]]) -> list[Coord]:
    parts = [p for p in parts if p]
    if not parts:
        raise RouteFileError("geometry", "no line found: a route needs a LineString (GeoJSON, KML) or a track (GPX)")
    out = list(parts[0])
    for k, part in enumerate(parts[1:], start=1):
        gap = float(distance_m(*out[-1], *part[0]))
        if gap > JOIN_M:
            msg = f"line {k + 1} begins {gap:.0f} m from the end of line {k} (at most {JOIN_M:g} m)"
            raise RouteFileError("geometry", f"the file holds {len(parts)} lines that do not join end to start: {msg}")
        out.extend(part)
    return out


def finish(pts: list[Coord]) -> tuple[list[Coord], float]:
    too_many(len(pts))
    keep = [i for i in range(len(pts)) if i == 0 or pts[i] != pts[i - 1]]  # consecutive duplicates go
    line = [pts[i] for i in keep]
    if len(line) < 2:
        raise RouteFileError("geometry", f"a route needs at least 2 distinct points, got {len(line)}")
    xy = np.asarray(line, dtype=float)
    steps = np.asarray(distance_m(xy[:-1, 0], xy[:-1, 1], xy[1:, 0], xy[1:, 1]))
    jumps = np.flatnonzero(steps > MAX_JUMP_M)
    if len(jumps):
        j = int(jumps[0])
        b = keep[j + 1]  # the points between keep[j] and b repeat keep[j], so the jump is from b - 1
        raise RouteFileError(
            f"coordinates[{b}]",
            f"a route is traced by GPS coordinates; a jump of {steps[j] / 1000:.1f} km between points {b - 1} and "
            f"{b} is not a road (at most {MAX_JUMP_M / 1000:g} km between consecutive points)",
        )
    length = line_length_m(xy[:, 0], xy[:, 1])
    if length > MAX_LENGTH_M:
        raise RouteFileError("geometry", f"the line is {length / 1000:.0f} km long; a route is at most 1000 km")
    return line, length


def check_line(coords: object) -> list[Coord]:
    """Checked (lon, lat) degrees of a route line given as GeoJSON LineString coordinates, duplicates removed."""
    return finish(points(coords, "coordinates"))[0]


_KINDS = {"boarding": "boarding", "embarque": "boarding", "parada": "boarding", "ponto": "boarding"}
_KINDS |= {"school": "school", "escola": "school", "garage": "garage", "garagem": "garage"}
_HHMM = re.compile(r"([01]?\d|2[0-3]):([0-5]\d)(?::([0-5]\d))?")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # as the registry's text fields: NUL cannot be stored


def stop_from(n: int, where: Coord, props: Mapping[str, Any]) -> StopIn:
    field = f"stops[{n}]"
    name = next((str(props[k]).strip() for k in ("name", "desc", "description") if str(props.get(k) or "").strip()), "")
    if _CONTROL.search(name):
        raise RouteFileError(f"{field}.name", f"stop {n}: the name contains control characters (such as NUL)")
    if (explicit := props.get("kind")) is not None:
        kind = _KINDS.get(str(explicit).strip().lower())
        if kind is None:
            raise RouteFileError(f"{field}.kind", f"stop {n}: {show(explicit)} is not boarding, school or garage")
    else:  # 'type' and GPX 'sym' are free text: map only the obvious cases
        hint = f"{props.get('type') or ''} {props.get('sym') or ''}".lower()
        kind = "school" if "school" in hint or "escola" in hint else "garage" if "garag" in hint else "boarding"
    scheduled = None
    for key in ("scheduled_time", "time"):
        s = str(props.get(key) or "").strip()
        # A GPX <time> is a date-time when the waypoint was recorded, not a schedule.
        if not s or (key == "time" and re.match(r"\d{4}-\d\d-\d\d", s)):
            continue
        if not (m := _HHMM.fullmatch(s)):
            raise RouteFileError(f"{field}.scheduled_time", f"stop {n}: {show(s)} is not a time of day (HH:MM)")
        scheduled = time(int(m[1]), int(m[2]), int(m[3] or 0))
        break
    return StopIn(name or f"Ponto {n + 1}", where[1], where[0], kind, scheduled)


def check_polygon(obj: dict[str, Any]) -> Polygon | MultiPolygon:
    """A valid speed-zone (Multi)Polygon in (lon, lat) degrees inside Brazil and at most MAX_ZONE_KM2 km²."""
    geom = obj.get("geometry") if isinstance(obj, dict) and obj.get("type") == "Feature" else obj
    kind = geom.get("type") if isinstance(geom, dict) else None
    coords = geom.get("coordinates") if isinstance(geom, dict) else None
    if kind not in ("Polygon", "MultiPolygon") or not isinstance(coords, list) or not coords:
        raise RouteFileError("geometry", f"a zone is a GeoJSON Polygon or MultiPolygon, got {show(kind or geom)}")
    polys = []
    for k, rings in enumerate([coords] if kind == "Polygon" else coords):
        base = "coordinates" if kind == "Polygon" else f"coordinates[{k}]"
        if not isinstance(rings, list) or not rings:
            raise RouteFileError(base, "a polygon needs an exterior ring")
        checked = [points(ring, f"{base}[{r}]") for r, ring in enumerate(rings)]
        for r, ring in enumerate(checked):
            if len(ring) < 4 or ring[0] != ring[-1]:
                raise RouteFileError(f"{base}[{r}]", "a ring needs 4 or more positions, the last equal to the first")
        polys.append(Polygon(checked[0], checked[1:]))
    shape = polys[0] if kind == "Polygon" else MultiPolygon(polys)
    if not shape.is_valid:
        raise RouteFileError("geometry", f"invalid polygon: {explain_validity(shape)}")
    # Counter-clockwise shells and clockwise holes make pyproj's signed areas positive, holes subtracted.
    km2 = sum(GEOD.geometry_area_perimeter(orient(p, 1.0))[0] for p in polys) / 1e6
    if km2 > MAX_ZONE_KM2:
        raise RouteFileError("geometry", f"the zone covers {km2:.0f} km², more than the {MAX_ZONE_KM2:g} km² allowed")
    return shape
