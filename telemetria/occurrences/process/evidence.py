"""The evidence an occurrence's process rests on, frozen at confirmation: canonical JSON bytes and their SHA-256.

Shape (docs/occ-spec, what the Termo renders and the SHA covers):
`{"occurrence": {the detail fields, without history}, "fixes": [{"ts", "lat", "lon", "speed_kmh", "received_at"}]
(the occurrence's span ± 10 min), "facts": {...}, "registry": [{"kind", "item_id", "valid_from", "version",
"digest"}] (the versions in force on its day), "frozen_at", "frozen_by"}`.

Canonical: keys sorted, no whitespace, UTF-8, instants as ISO 8601 in UTC, dates ISO, decimals as strings — so
the same evidence always gives the same bytes, and anyone holding the bytes can recompute the digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import orjson

from telemetria.db import Conn
from telemetria.occurrences.model import Kind
from telemetria.occurrences.process import queries as q

MARGIN = timedelta(minutes=10)  # fixes before and after the occurrence's span, for context on the map
NOT_EVIDENCE = frozenset({"history", "attachments", "evidence_sha256"})


def plain(value: Any) -> Any:
    """`value` as JSON-able plain data: aware datetimes → ISO UTC, dates → ISO, Decimal → str, records → dicts."""
    if isinstance(value, datetime):
        if value.tzinfo is None:
            raise ValueError(f"naive datetime in evidence: {value!r}")
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, Mapping) or hasattr(value, "items"):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [plain(v) for v in value]
    return value


def canonical(obj: Any) -> bytes:
    """The canonical JSON bytes of `obj` (see the module's docstring)."""
    return orjson.dumps(plain(obj), option=orjson.OPT_SORT_KEYS)


def sha256(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


def span(start: datetime, end: datetime | None) -> tuple[datetime, datetime]:
    """The fixes' period: the occurrence's [start, end] widened by MARGIN (a live one: start only)."""
    return start - MARGIN, (end or start) + MARGIN


def build(
    occurrence: Mapping[str, Any],
    fixes: Sequence[Mapping[str, Any]],
    registry: Sequence[Mapping[str, Any]],
    *,
    frozen_by: str,
    frozen_at: datetime,
) -> dict[str, Any]:
    """The evidence document (pure): the occurrence without its history, the fixes, facts and registry versions."""
    return {
        "occurrence": {k: v for k, v in occurrence.items() if k not in NOT_EVIDENCE},
        "fixes": [{k: f[k] for k in ("ts", "lat", "lon", "speed_kmh", "received_at")} for f in fixes],
        "facts": occurrence.get("facts") or {},
        "registry": [
            {
                "kind": r["kind"],
                "item_id": r["item_id"],
                "valid_from": r["valid_from"],
                "version": r["id"],
                "digest": sha256(canonical(r["data"])),
            }
            for r in registry
        ],
        "frozen_at": frozen_at,
        "frozen_by": frozen_by,
    }


async def gather(
    conn: Conn, occurrence: Mapping[str, Any], *, frozen_by: str, frozen_at: datetime
) -> tuple[bytes, str]:
    """Read what the occurrence rests on now and freeze it: (canonical bytes, their SHA-256 hex)."""
    since, until = span(occurrence["start"], occurrence["end"])
    fixes = await conn.fetch(q.EVIDENCE_FIXES, occurrence["vehicle_id"], since, until)
    registry = await conn.fetch(
        q.EVIDENCE_REGISTRY,
        occurrence["day"],
        occurrence["vehicle_id"],
        occurrence["route_id"],
        occurrence["kind"] == Kind.SPEEDING,
    )
    doc = build(
        occurrence, [dict(f) for f in fixes], [dict(r) for r in registry], frozen_by=frozen_by, frozen_at=frozen_at
    )
    content = canonical(doc)
    return content, sha256(content)
