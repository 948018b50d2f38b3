"""Limits on a fix's free fields, one set for every ingest path (JSON API, OsmAnd, the simulator).

The decoders only turn what a protocol sends into a `Fix`; these limits are checked afterwards, in
`validate`, so a driver id or an attributes object is held to the same rules whichever way it came.
"""

from __future__ import annotations

from typing import Any

from telemetria.ingest.storable import json_problem, text_problem

MAX_DEVICE_ID = 64  # a tracker's unique id: the registry takes none longer
MAX_DRIVER_ID = 64  # a driver card (RFID/iButton) code
MAX_ATTRIBUTES = 64  # keys of one fix's attributes object
MAX_ATTRIBUTE_DEPTH = 16  # the attributes object itself is level 1; trackers send flat ones
DEFAULT_MAX_ATTRIBUTES_BYTES = 4096  # one fix's attributes as JSON (TELEMETRIA_MAX_ATTRIBUTES_BYTES)


def driver_problem(driver_id: str) -> str | None:
    """Why `driver_id` cannot be stored as a fix's driver card code, or None."""
    if problem := text_problem(driver_id):
        return f"driver_id: {problem}"
    if len(driver_id) > MAX_DRIVER_ID:
        return f"driver_id: {len(driver_id)} characters, at most {MAX_DRIVER_ID}"
    return None


def attributes_problem(attributes: dict[str, Any], max_bytes: int = DEFAULT_MAX_ATTRIBUTES_BYTES) -> str | None:
    """Why `attributes` cannot be stored exactly in at most `max_bytes` of JSON, or None."""
    if len(attributes) > MAX_ATTRIBUTES:
        return f"attributes: {len(attributes)} keys, at most {MAX_ATTRIBUTES}"
    if problem := json_problem(attributes, MAX_ATTRIBUTE_DEPTH, max_bytes):
        return f"attributes: {problem}"
    return None
