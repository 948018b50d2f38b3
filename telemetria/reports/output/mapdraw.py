"""A map of a track drawn from the fixes themselves, for PDF documents: no tile server, nothing fetched.

`frame()` is the pure part: a local equidistant projection (metres east and north of the track's centre, exact to
well under 0.1 % across the tens of kilometres a document shows, anywhere on Earth), fitted into a box of points
with equal scale on both axes, and a scale bar of a round length. `drawing()` turns it into a reportlab Drawing
(a flowable): the whole track in grey, the part inside the highlighted span in red, start and end markers, the
occurrence's own point, the scale bar and a north arrow.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reportlab.graphics.shapes import Circle, Drawing, Line, Polygon, PolyLine, Rect, String
from reportlab.lib import colors

EARTH_RADIUS_M = 6_371_008.8  # IUGG mean radius
TRACK = colors.HexColor("#7a7f87")
HIGHLIGHT = colors.HexColor("#c62828")
START = colors.HexColor("#2e7d32")
END = colors.HexColor("#1a237e")
FRAME = colors.HexColor("#b0b4ba")


@dataclass(frozen=True, slots=True)
class Frame:
    """Points of a track placed in a width × height box (PDF points, origin bottom-left)."""

    width: float
    height: float
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    metres_per_pt: float  # 0.0 when the track is one point (no scale)
    lat0: float
    lon0: float

    def place(self, lat: float, lon: float) -> tuple[float, float]:
        """Where a point of the same projection falls in the box."""
        return _place(self, *_metres(lat, lon, self.lat0, self.lon0))


def _metres(lat: float, lon: float, lat0: float, lon0: float) -> tuple[float, float]:
    east = math.radians(lon - lon0) * EARTH_RADIUS_M * math.cos(math.radians(lat0))
    north = math.radians(lat - lat0) * EARTH_RADIUS_M
    return east, north


def _place(f: Frame, east: float, north: float) -> tuple[float, float]:
    if f.metres_per_pt == 0.0:
        return f.width / 2, f.height / 2
    return f.width / 2 + east / f.metres_per_pt, f.height / 2 + north / f.metres_per_pt


def frame(lats: Sequence[float], lons: Sequence[float], width: float, height: float, margin: float = 14.0) -> Frame:
    """Fit the points into the box, equal scale on both axes, centred, `margin` points free on every side."""
    if not lats or len(lats) != len(lons):
        raise ValueError("frame needs one or more points, as many latitudes as longitudes")
    lat0 = (min(lats) + max(lats)) / 2
    lon0 = (min(lons) + max(lons)) / 2
    metres = [_metres(a, o, lat0, lon0) for a, o in zip(lats, lons, strict=True)]
    span_e = max(m[0] for m in metres) - min(m[0] for m in metres)
    span_n = max(m[1] for m in metres) - min(m[1] for m in metres)
    usable_w, usable_h = max(width - 2 * margin, 1.0), max(height - 2 * margin, 1.0)
    scale = max(span_e / usable_w, span_n / usable_h)  # metres per point: the tighter axis decides
    f = Frame(width, height, (), (), scale, lat0, lon0)
    placed = [_place(f, e, n) for e, n in metres]
    return Frame(width, height, tuple(p[0] for p in placed), tuple(p[1] for p in placed), scale, lat0, lon0)


def scale_bar(metres_per_pt: float, max_pt: float) -> tuple[float, float]:
    """A round length (1, 2 or 5 × 10^k metres) whose bar is at most `max_pt` long: (metres, points)."""
    if metres_per_pt <= 0:
        return 0.0, 0.0
    limit = metres_per_pt * max_pt
    best = 0.0
    exp = math.floor(math.log10(limit))
    for k in (exp - 1, exp):
        for step in (1, 2, 5):
            length = step * 10.0**k
            if length <= limit:
                best = max(best, length)
    return best, best / metres_per_pt


def _distance_label(metres: float) -> str:
    if metres >= 1000:
        km = metres / 1000
        return f"{km:g} km".replace(".", ",")
    return f"{metres:g} m"


def drawing(
    lats: Sequence[float],
    lons: Sequence[float],
    highlight: Sequence[bool],
    *,
    width: float,
    height: float,
    point: tuple[float, float] | None = None,
) -> Drawing:
    """The track as a reportlab Drawing; `highlight[i]` marks fix i as inside the occurrence; `point` = (lat, lon)."""
    d = Drawing(width, height)
    d.add(_rect(0, 0, width, height, strokeColor=FRAME, fillColor=colors.white, strokeWidth=0.6))
    all_lats = [*lats, *([point[0]] if point else [])]
    all_lons = [*lons, *([point[1]] if point else [])]
    f = frame(all_lats, all_lons, width, height, margin=18)
    xy = list(zip(f.xs[: len(lats)], f.ys[: len(lats)], strict=True))
    if len(xy) >= 2:
        d.add(PolyLine([c for p in xy for c in p], strokeColor=TRACK, strokeWidth=1.2))
    for run in _runs(highlight):
        seg = xy[run[0] : run[1]]
        if len(seg) >= 2:
            d.add(PolyLine([c for p in seg for c in p], strokeColor=HIGHLIGHT, strokeWidth=2.6))
        elif seg:
            d.add(Circle(seg[0][0], seg[0][1], 2.5, fillColor=HIGHLIGHT, strokeColor=HIGHLIGHT))
    if xy:
        d.add(Circle(xy[0][0], xy[0][1], 4, fillColor=START, strokeColor=colors.white, strokeWidth=0.8))
        d.add(_rect(xy[-1][0] - 3.5, xy[-1][1] - 3.5, 7, 7, fillColor=END, strokeColor=colors.white, strokeWidth=0.8))
    if point is not None:
        px, py = f.place(*point)
        d.add(Polygon([px, py, px - 5, py + 10, px + 5, py + 10], fillColor=HIGHLIGHT, strokeColor=colors.white))
    scale(d, f)
    north(d, width, height)
    return d


def _rect(x: float, y: float, w: float, h: float, **style: Any) -> Rect:
    # types-reportlab declares Rect's keywords as `**kw: _SolidShapeKwArgs` (without Unpack): set them afterwards.
    r = Rect(x, y, w, h)
    for name, value in style.items():
        setattr(r, name, value)
    return r


def _runs(mask: Sequence[bool]) -> list[tuple[int, int]]:
    """[start, stop) index ranges where mask is true."""
    runs: list[tuple[int, int]] = []
    start: int | None = None
    for i, m in enumerate([*mask, False]):
        if m and start is None:
            start = i
        elif not m and start is not None:
            runs.append((start, i))
            start = None
    return runs


def scale(d: Drawing, f: Frame) -> None:
    """A scale bar of a round length, bottom left."""
    metres, pts = scale_bar(f.metres_per_pt, f.width / 4)
    if pts <= 0:
        return
    x, y = 10.0, 10.0
    d.add(_rect(x - 3, y - 3, pts + 6, 17, fillColor=colors.white, strokeColor=None, fillOpacity=0.8))
    d.add(Line(x, y, x + pts, y, strokeColor=colors.black, strokeWidth=1.5))
    d.add(Line(x, y - 2, x, y + 3, strokeColor=colors.black))
    d.add(Line(x + pts, y - 2, x + pts, y + 3, strokeColor=colors.black))
    d.add(String(x + pts / 2, y + 4, _distance_label(metres), fontName="Helvetica", fontSize=7, textAnchor="middle"))


def north(d: Drawing, width: float, height: float) -> None:
    """A north arrow, top right."""
    x, y = width - 16, height - 30
    d.add(Polygon([x, y + 16, x - 5, y, x + 5, y], fillColor=colors.black, strokeColor=None))
    d.add(String(x, y + 18, "N", fontName="Helvetica-Bold", fontSize=8, textAnchor="middle"))
