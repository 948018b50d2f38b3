"""The PDF's map, drawn from the data itself (no tile server): a report's lines (trips, days, routes) and places.

`collect()` reads a Drawing's segments once, keeping only their coordinates (two floats a position, in arrays);
`chart()` fits them into a box (mapdraw.frame: local equidistant projection, equal scale on both axes) and
draws each line, thinned to the points at least THIN_PT apart on paper, so that a month of positions is a few
thousand points in the file, and each place as a dot coloured by its kind, with a scale bar and a north arrow.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable
from dataclasses import dataclass, field

from reportlab.graphics.shapes import Circle, Drawing, PolyLine, Rect
from reportlab.lib import colors

from telemetria.reports.output import mapdraw
from telemetria.reports.output.csv import as_async
from telemetria.reports.output.document import Drawing as DrawingSource
from telemetria.reports.output.gis import Place

THIN_PT = 0.6  # a line's point closer than this (points on paper) to the last one drawn is left out
LINES = [colors.HexColor(c) for c in ("#1565c0", "#c62828", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#4e342e")]
PLACES = {
    "stop": "#ef6c00", "boarding": "#2e7d32", "school": "#1565c0", "garage": "#4e342e",
    "start": "#2e7d32", "end": "#1a237e", "left": "#c62828", "rejoined": "#2e7d32", "occurrence": "#c62828",
}  # fmt: skip
OTHER_PLACE = "#555555"


@dataclass
class Line:
    name: str
    lat: array[float] = field(default_factory=lambda: array("d"))
    lon: array[float] = field(default_factory=lambda: array("d"))


@dataclass
class Chart:
    """What a map shows: its lines and places (drawable coordinates only)."""

    lines: list[Line]
    places: list[Place]

    def empty(self) -> bool:
        return not self.places and not any(len(x.lat) for x in self.lines)


async def collect(source: DrawingSource) -> Chart:
    """The segments and places of a report's drawing, their positions read once and kept as coordinates."""
    segments, places = await source()
    lines = []
    async for seg in as_async(segments):
        line = Line(seg.name)
        async for p in as_async(seg.positions):
            if math.isfinite(p.lat) and math.isfinite(p.lon):
                line.lat.append(p.lat)
                line.lon.append(p.lon)
        if len(line.lat):
            lines.append(line)
    marks = [p async for p in as_async(places) if math.isfinite(p.lat) and math.isfinite(p.lon)]
    return Chart(lines, marks)


def chart(c: Chart, width: float, height: float) -> Drawing:
    """The map as a reportlab Drawing `width` × `height` points; the chart must not be empty."""
    lats = [x for line in c.lines for x in (min(line.lat), max(line.lat))] + [p.lat for p in c.places]
    lons = [x for line in c.lines for x in (min(line.lon), max(line.lon))] + [p.lon for p in c.places]
    # The box's corners frame everything: the projection's centre and spans depend on the extremes only.
    f = mapdraw.frame([min(lats), max(lats)], [min(lons), max(lons)], width, height, margin=18)
    d = Drawing(width, height)
    box = Rect(0, 0, width, height)
    box.strokeColor, box.fillColor, box.strokeWidth = mapdraw.FRAME, colors.white, 0.6
    d.add(box)
    for i, line in enumerate(c.lines):
        pts = thin((f.place(a, o) for a, o in zip(line.lat, line.lon, strict=True)), THIN_PT)
        color = LINES[i % len(LINES)]
        if len(pts) >= 2:
            d.add(PolyLine([v for p in pts for v in p], strokeColor=color, strokeWidth=1.1))
        else:
            d.add(Circle(pts[0][0], pts[0][1], 1.8, fillColor=color, strokeColor=color))
    for p in c.places:
        x, y = f.place(p.lat, p.lon)
        fill = colors.HexColor(PLACES.get(p.kind, OTHER_PLACE))
        d.add(Circle(x, y, 2.6, fillColor=fill, strokeColor=colors.white, strokeWidth=0.5))
    mapdraw.scale(d, f)
    mapdraw.north(d, width, height)
    return d


def thin(points: Iterable[tuple[float, float]], min_pt: float) -> list[tuple[float, float]]:
    """The points at least `min_pt` (on either axis) from the last kept one; the first and the last always kept."""
    out: list[tuple[float, float]] = []
    last: tuple[float, float] | None = None
    for p in points:
        last = p
        if not out or abs(p[0] - out[-1][0]) >= min_pt or abs(p[1] - out[-1][1]) >= min_pt:
            out.append(p)
    if last is not None and out[-1] is not last:
        out.append(last)
    return out


def legend(c: Chart) -> str:
    """A line under the map saying what it shows."""
    names = [line.name for line in c.lines]
    shown = ", ".join(names[:12]) + (f" e mais {len(names) - 12}" if len(names) > 12 else "")
    parts = [f"{len(names)} linha(s): {shown}" if names else "", f"{len(c.places)} local(is) marcado(s)"]
    return "; ".join(p for p in parts if p) + ". Desenhado das próprias posições e cadastros (sem mapa de fundo)."
