"""The public itineraries' answer as bytes, computed from the registry's data (pure: runs in the job queue's
worker process, telemetria/jobs.py, never on the event loop)."""

from __future__ import annotations

from datetime import date

import orjson

from telemetria.localtime import LOCAL_TZ
from telemetria.publication import tables
from telemetria.publication.itinerary import route_json
from telemetria.publication.store import Registered, itineraries


def itineraries_body(got: Registered, today: date, cell_m: int, fmt: str) -> bytes:
    """The itineraries of `got` as JSON or CSV (`fmt`), boarding places on a grid of `cell_m` metres."""
    it = itineraries(got, cell_m)
    if fmt == "csv":
        return tables.csv_bytes(tables.ITINERARY_COLUMNS, tables.itinerary_rows(it.year, it.routes), LOCAL_TZ)
    return orjson.dumps({
        "school_year": it.year, "start": it.start, "end": it.end, "as_of": today.isoformat(),
        "boarding_precision_m": cell_m, "routes": [route_json(r) for r in it.routes],
    })  # fmt: skip
