"""Where an import keeps roads: a --bbox W,S,E,N or a --polygon GeoJSON file (pure, shapely)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import shapely
from shapely.geometry import shape

from telemetria.roads.errors import RoadsError

BBox = tuple[float, float, float, float]  # W, S, E, N degrees


@dataclass(frozen=True, slots=True)
class Clip:
    """A way is kept when any of its vertices lies inside (its whole geometry is kept, not cut at the edge)."""

    bbox: BBox | None = None
    polygon: dict[str, Any] | None = None  # the GeoJSON geometry as given, stored with the network
    _shape: Any = None  # the prepared shapely geometry of `polygon`

    def keeps(self, lat: tuple[float, ...], lon: tuple[float, ...]) -> bool:
        """Whether a way with these vertices (degrees) has one inside the box or polygon."""
        if self.bbox is not None:
            w, s, e, n = self.bbox
            if not any(s <= la <= n and w <= lo <= e for la, lo in zip(lat, lon, strict=True)):
                return False
        if self._shape is not None:
            return bool(shapely.intersects_xy(self._shape, lon, lat).any())
        return True

    def describe(self) -> str:
        if self.bbox is not None:
            return "the bbox " + ",".join(f"{v:g}" for v in self.bbox)
        return "the polygon" if self.polygon is not None else "the whole file"


def parse_bbox(text: str) -> BBox:
    """'W,S,E,N' in degrees (west, south, east, north) → a tuple; RoadsError saying what is wrong."""
    parts = [p.strip() for p in text.split(",")]
    try:
        if len(parts) != 4:
            raise ValueError
        w, s, e, n = (float(p) for p in parts)
    except ValueError:
        raise RoadsError(
            f"--bbox {text!r} is not four numbers W,S,E,N (degrees west, south, east, north), "
            "e.g. --bbox=-62.9,-10.8,-62.0,-10.0"
        ) from None
    if not all(math.isfinite(v) for v in (w, s, e, n)):
        raise RoadsError(f"--bbox {text!r} holds a value that is not a finite number")
    if not (-180 <= w <= 180 and -180 <= e <= 180):
        raise RoadsError(f"--bbox {text!r}: longitudes W and E must lie within -180..180")
    if not (-90 <= s <= 90 and -90 <= n <= 90):
        raise RoadsError(f"--bbox {text!r}: latitudes S and N must lie within -90..90")
    if not w < e:
        raise RoadsError(f"--bbox {text!r}: west ({w:g}) must be less than east ({e:g})")
    if not s < n:
        raise RoadsError(f"--bbox {text!r}: south ({s:g}) must be less than north ({n:g})")
    return w, s, e, n


def load_polygon(path: Path) -> Clip:
    """A Clip from a GeoJSON file holding a Polygon or MultiPolygon (bare, a Feature, or a one-feature collection)."""
    try:
        doc = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise RoadsError(f"the polygon file {path} does not exist") from None
    except OSError as e:
        raise RoadsError(f"cannot read the polygon file {path}: {e.strerror or e}") from None
    except orjson.JSONDecodeError:
        raise RoadsError(f"the polygon file {path} is not GeoJSON (it is not valid JSON)") from None
    geometry = _geometry(doc, path)
    try:
        geom = shape(geometry)
    except Exception as e:  # shapely raises several kinds on bad coordinates
        raise RoadsError(f"the polygon in {path} is malformed: {e}") from None
    if geom.is_empty or not geom.is_valid:
        geom = geom.buffer(0)  # repairs a self-touching ring; an empty result is refused below
    if geom.is_empty or geom.area == 0:
        raise RoadsError(f"the polygon in {path} encloses no area")
    west, south, east, north = geom.bounds
    if not (-180 <= west <= east <= 180 and -90 <= south <= north <= 90):
        raise RoadsError(f"the polygon in {path} has coordinates outside longitude -180..180, latitude -90..90")
    shapely.prepare(geom)
    return Clip(polygon=geometry, _shape=geom)


def _geometry(doc: Any, path: Path) -> dict[str, Any]:
    if isinstance(doc, dict) and doc.get("type") == "FeatureCollection":
        feats = doc.get("features") or []
        if len(feats) != 1:
            raise RoadsError(f"the polygon file {path} holds {len(feats)} features; give it exactly one")
        doc = feats[0]
    if isinstance(doc, dict) and doc.get("type") == "Feature":
        doc = doc.get("geometry")
    if not (isinstance(doc, dict) and doc.get("type") in ("Polygon", "MultiPolygon")):
        raise RoadsError(f"the polygon file {path} holds no GeoJSON Polygon or MultiPolygon")
    return doc
