"""The native JSON body a simulated tracker posts to /api/v1/fixes (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from telemetria.fix import Fix

_FIELDS = (
    "lat",
    "lon",
    "speed_kmh",
    "heading_deg",
    "altitude_m",
    "accuracy_m",
    "hdop",
    "satellites",
    "ignition",
    "odometer_m",
    "valid",
)


def rfc3339(ts: datetime) -> str:
    """'2026-11-30T10:00:00.000Z': UTC with milliseconds."""
    return ts.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def fix_json(fix: Fix) -> dict[str, Any]:
    """One fix as a JSON object; fields the tracker does not know are left out."""
    out: dict[str, Any] = {"ts": rfc3339(fix.ts)}
    for name in _FIELDS:
        value = getattr(fix, name)
        if value is not None:
            out[name] = value
    return out


def body(fixes: Sequence[Fix]) -> bytes:
    """A single fix as one object, several as {"fixes": [...]}."""
    if len(fixes) == 1:
        return orjson.dumps(fix_json(fixes[0]))
    return orjson.dumps({"fixes": [fix_json(f) for f in fixes]})
