"""Pure steps of a flush: which vehicle each fix belongs to, the rows to write, who gets credit."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from telemetria import fix as reasons
from telemetria.fix import Fix, Rejected

NOT_INSTALLED = "tracker was not installed in any vehicle at the fix's time"
TRACKER_INACTIVE = "tracker is inactive"

Row = tuple[Any, ...]  # in the order of queries.FIX_COLUMNS


@dataclass(slots=True)
class IngestResult:
    """What became of a request's fixes: stored, already stored, or rejected (by request position)."""

    accepted: int = 0
    duplicates: int = 0
    rejected: list[Rejected] = field(default_factory=list)
    tracker_inactive: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "accepted": self.accepted,
            "duplicates": self.duplicates,
            "rejected": [r.as_json() for r in self.rejected],
        }


@dataclass(slots=True)
class Request:
    """One request's part of a flush: its tracker and its valid fixes with their request positions."""

    tracker_id: int
    indexes: list[int]
    fixes: list[Fix]


@dataclass(frozen=True, slots=True)
class Installation:
    vehicle_id: int
    since: datetime | None  # None: no lower bound
    until: datetime | None  # None: still installed

    @property
    def unbounded(self) -> bool:
        return self.since is None and self.until is None

    def covers(self, ts: datetime) -> bool:
        return (self.since is None or self.since <= ts) and (self.until is None or ts < self.until)


@dataclass(slots=True)
class Plan:
    rows: list[Row]
    owners: list[int]  # position in the flush of the request each row came from
    results: list[IngestResult]


def plan(requests: Sequence[Request], active: dict[int, bool], installs: dict[int, list[Installation]]) -> Plan:
    """Rows for the fixes that have a vehicle at their own time; the others rejected with the reason."""
    out = Plan([], [], [IngestResult() for _ in requests])
    rows, owners = out.rows, out.owners
    for pos, req in enumerate(requests):
        result = out.results[pos]
        if not active.get(req.tracker_id, False):
            result.tracker_inactive = True
            result.rejected = [Rejected(i, TRACKER_INACTIVE, reasons.TRACKER_INACTIVE) for i in req.indexes]
            continue
        spans = installs.get(req.tracker_id, [])
        # The common case, one installation with no bounds, needs no search per fix.
        always = spans[0].vehicle_id if len(spans) == 1 and spans[0].unbounded else None
        tid = req.tracker_id
        if always is not None:
            # Each row's tuple is the COPY record itself, built once from the fix's fields.
            rows.extend([
                (
                    always, tid, f.ts, f.lat, f.lon, f.speed_kmh, f.heading_deg, f.altitude_m, f.accuracy_m,
                    f.hdop, f.satellites, f.ignition, f.odometer_m, f.driver_id, f.valid, f.attributes,
                )
                for f in req.fixes
            ])  # fmt: skip
            owners.extend([pos] * len(req.fixes))
            continue
        for i, f in zip(req.indexes, req.fixes, strict=True):
            vid = next((s.vehicle_id for s in spans if s.covers(f.ts)), None)
            if vid is None:
                result.rejected.append(Rejected(i, NOT_INSTALLED, reasons.NOT_INSTALLED))
                continue
            owners.append(pos)
            rows.append((
                vid, tid, f.ts, f.lat, f.lon, f.speed_kmh, f.heading_deg, f.altitude_m,
                f.accuracy_m, f.hdop, f.satellites, f.ignition, f.odometer_m, f.driver_id, f.valid,
                f.attributes,
            ))  # fmt: skip
    return out


def credit_all(p: Plan) -> None:
    """Every row was stored."""
    for pos in p.owners:
        p.results[pos].accepted += 1


def credit(p: Plan, inserted: set[tuple[int, datetime]]) -> None:
    """Count stored and duplicate rows per request, given the (vehicle, ts) keys the insert stored.

    The insert took rows in (vehicle, ts, flush order), so a key's first occurrence in the flush
    is the one stored and credited; a later copy (a re-send racing its original) is a duplicate,
    so the accepted counts always add up to the rows stored.
    """
    for row, pos in zip(p.rows, p.owners, strict=True):
        key = (row[0], row[2])
        if key in inserted:
            p.results[pos].accepted += 1
            inserted.discard(key)
        else:
            p.results[pos].duplicates += 1


def newest_stored(rows: Sequence[Row], stored: set[tuple[int, datetime]] | None = None) -> list[list[Any]]:
    """Per vehicle, its newest stored row and its newest stored valid row, as note_latest_fixes' ten arrays.

    `stored`: the (vehicle, ts) keys the insert stored, of which a key's first row is the one stored;
    None when every row was. Two rows per vehicle at most, whatever the flush's size, so noting them
    costs the database little more than for a single fix.
    """
    newest: dict[int, Row] = {}
    newest_valid: dict[int, Row] = {}
    seen: set[tuple[int, datetime]] = set()
    for r in rows:
        v, ts = r[0], r[2]
        if stored is not None:
            if (v, ts) not in stored or (v, ts) in seen:
                continue
            seen.add((v, ts))
        if v not in newest or ts > newest[v][2]:
            newest[v] = r
        if r[14] and (v not in newest_valid or ts > newest_valid[v][2]):
            newest_valid[v] = r
    picked = [*newest.values(), *(r for v, r in newest_valid.items() if newest[v] is not r)]
    # vehicle_id, ts, valid, received_at (NULL: now()), lat, lon, speed_kmh, heading_deg, ignition, driver_id
    return [
        [r[0] for r in picked], [r[2] for r in picked], [r[14] for r in picked], [None] * len(picked),
        [r[3] for r in picked], [r[4] for r in picked], [r[5] for r in picked], [r[6] for r in picked],
        [r[11] for r in picked], [r[13] for r in picked],
    ]  # fmt: skip
