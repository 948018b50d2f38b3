"""The seals' canonical serialization and digests: pure, the one definition docs/verification.md explains.

A vehicle-day's fixes become one line each, in fix-time order:

    2026-03-02T10:15:30Z;-10.437512;-62.466830;41.0

- the fix time in UTC, truncated to the second (what every export shows), ISO 8601 with `Z`;
- latitude and longitude with exactly 6 decimals, `.` as the decimal separator: exactly the digits the exports
  show (telemetria/formats.py rounds half away from zero on the stored value, `-0` written `0`);
- the speed in km/h with exactly 1 decimal as the exports show it, or nothing when the tracker sent none;
- fields separated by `;`, each line ended by `\\n` (LF), UTF-8 (the lines are ASCII).

The day's digest is the SHA-256 of the concatenated lines, as 64 lowercase hex digits (an empty day: the SHA-256
of nothing). A seal's Merkle leaf is the SHA-256 of the text
`vehicle_id;yyyy-mm-dd;version;fixes;sha256;previous_sha256` (previous empty when none); the day's fleet root is the
Merkle root over the leaves sorted by vehicle id: pairs hashed as SHA-256 of the two 32-byte digests concatenated,
an odd last node carried up unchanged; one leaf is its own root; no leaves: the SHA-256 of nothing.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime

from telemetria import formats

EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


def _fixed(value: float, places: int) -> str:
    # Exactly as the exports write it (telemetria/formats.py: half away from zero on the exact value, no -0),
    # with `.` for the decimal comma.
    return formats.number(float(value), places).replace(",", ".")


def utc_second(ts: datetime | float) -> str:
    """The fix time as the line shows it: UTC, truncated to the second, `Z`."""
    moment = ts if isinstance(ts, datetime) else datetime.fromtimestamp(float(ts), UTC)
    if moment.tzinfo is None:
        raise ValueError(f"naive datetime in a seal: {moment!r}")
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def line(ts: datetime | float, lat: float, lon: float, speed_kmh: float | None) -> str:
    """One fix's canonical line, `\\n` included."""
    # The track's rows round the speed to 0.1 km/h before it is written (reports/kinds/track.py): the same here.
    speed = "" if speed_kmh is None or not math.isfinite(speed_kmh) else _fixed(round(float(speed_kmh), 1), 1)
    return f"{utc_second(ts)};{_fixed(lat, 6)};{_fixed(lon, 6)};{speed}\n"


def digest(lines: Iterable[str]) -> str:
    """The SHA-256 of the lines in the order given (each already ends with `\\n`)."""
    h = hashlib.sha256()
    for text in lines:
        h.update(text.encode("utf-8"))
    return h.hexdigest()


def leaf(vehicle_id: int, day: date, version: int, fixes: int, sha256: str, previous_sha256: str | None) -> str:
    """A seal's Merkle leaf: everything the seal states, so that a changed chain link changes the root."""
    text = f"{vehicle_id};{day.isoformat()};{version};{fixes};{sha256};{previous_sha256 or ''}"
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def merkle_root(leaves: Sequence[str]) -> str:
    """The Merkle root over hex leaves already in order (by vehicle id)."""
    if not leaves:
        return EMPTY_SHA256
    level = [bytes.fromhex(x) for x in leaves]
    while len(level) > 1:
        nxt = [hashlib.sha256(level[i] + level[i + 1]).digest() for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0].hex()


def merkle_path(leaves: Sequence[str], index: int) -> list[tuple[str, str]]:
    """The proof that leaves[index] is under the root: (side, sibling hex) from the leaf up, side 'L' or 'R'
    being where the sibling sits; carried-up odd nodes add no step."""
    if not 0 <= index < len(leaves):
        raise IndexError(index)
    level = [bytes.fromhex(x) for x in leaves]
    path: list[tuple[str, str]] = []
    i = index
    while len(level) > 1:
        sibling = i ^ 1
        if sibling < len(level):
            path.append(("L" if sibling < i else "R", level[sibling].hex()))
        nxt = [hashlib.sha256(level[k] + level[k + 1]).digest() for k in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level, i = nxt, i // 2
    return path
