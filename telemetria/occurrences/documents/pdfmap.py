"""The occurrence list's map for its PDF (Document.drawing): each occurrence where it happened, as a point.

The tracks around each occurrence are left out: they are each occurrence's evidence (its Termo draws them),
and reading them for a list of hundreds would cost a query per occurrence.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from telemetria.occurrences.model import KIND_NAMES, Kind
from telemetria.reports.output import gis
from telemetria.reports.output.document import Drawing

KINDS = {k.value for k in Kind}


def places(items: Iterable[Mapping[str, Any]]) -> list[gis.Place]:
    """The occurrences with a position, as places named by plate and kind (kind "occurrence")."""
    out = []
    for r in items:
        lat, lon = r.get("lat"), r.get("lon")
        if isinstance(lat, int | float) and isinstance(lon, int | float):
            kind = KIND_NAMES[Kind(r["kind"])] if r.get("kind") in KINDS else str(r.get("kind") or "")
            name = f"{r.get('plate') or ''} {kind}".strip()
            out.append(gis.Place(name, "occurrence", float(lat), float(lon), r.get("start")))
    return out


def drawing(items: Iterable[Mapping[str, Any]]) -> Drawing:
    """The Document's drawing of a list of occurrences (rows as the list's CSV takes them)."""
    marks = places(items)

    async def draw() -> tuple[list[gis.Segment], list[gis.Place]]:
        return [], marks

    return draw
