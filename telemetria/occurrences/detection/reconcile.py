"""Stored occurrences of a window against the window's candidates → what to insert, update, withdraw or note (pure).

Matching: a candidate with a `key` matches the stored occurrence of the same kind and key; one without matches a
stored occurrence of the same kind and vehicle whose [start, end] overlaps its own (end None: still going on), the
closest start first. Both lists are sorted before matching, so the plan does not depend on their order, and
reconciling a window twice with the same candidates gives an empty plan the second time.

What happens to a match depends on the stored occurrence's status:
- `detected`: its data follows the candidate (an update when anything differs);
- `withdrawn` (by the detector): the complete data supports it again, so it is restored with the candidate's data;
- confirmed or later: its data is frozen with the evidence; a changed candidate adds a `note` instead, once per
  distinct change (the stored `last_note` is what the previous note said);
- `dismissed`: a servidor set it aside; nothing changes.
A stored occurrence no candidate matches is withdrawn while `detected` (with the reason) and noted once when
confirmed or later, but only if its start lies inside the window that was recomputed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from telemetria.occurrences.model import Candidate, Kind, Status

SILENCE_FILLED = "preenchido por dados que chegaram depois"
NOT_SUPPORTED = "os dados completos não sustentam mais esta ocorrência"
NOTE_CHANGED = "dados novos mudariam esta ocorrência; a evidência congelada foi mantida"
NOTE_VANISHED = "os dados completos não sustentam mais esta ocorrência; a evidência congelada foi mantida"

FROZEN = frozenset({Status.CONFIRMED, Status.NOTIFIED, Status.DEFENSE, Status.DECIDED, Status.CLOSED})
_FAR = datetime.max.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Stored:
    """An occurrence as stored, with what reconciling needs of it."""

    id: int
    kind: Kind
    vehicle_id: int
    start: datetime
    end: datetime | None
    status: Status
    key: str | None = None
    route_id: int | None = None
    run_no: int | None = None
    lat: float | None = None
    lon: float | None = None
    place: str | None = None
    facts: Mapping[str, Any] = field(default_factory=dict)
    last_note: Mapping[str, Any] | None = None  # data of the detector's latest note on it, if any


@dataclass(frozen=True, slots=True)
class Update:
    id: int
    candidate: Candidate
    restore: bool = False  # it was withdrawn: back to `detected`


@dataclass(frozen=True, slots=True)
class Withdrawal:
    id: int
    reason: str


@dataclass(frozen=True, slots=True)
class Note:
    id: int
    text: str
    data: Mapping[str, Any]  # signature() of the candidate it saw, or {"vanished": true}


@dataclass(frozen=True, slots=True)
class Plan:
    inserts: list[Candidate] = field(default_factory=list)
    updates: list[Update] = field(default_factory=list)
    withdrawals: list[Withdrawal] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.inserts or self.updates or self.withdrawals or self.notes)


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def signature(c: Candidate) -> dict[str, Any]:
    """The candidate's stored data as JSON-able values: what an update writes and a note records."""
    return {
        "start": _iso(c.start),
        "end": _iso(c.end),
        "route_id": c.route_id,
        "run_no": c.run_no,
        "lat": c.lat,
        "lon": c.lon,
        "place": c.place,
        "facts": dict(c.facts),
    }


def stored_signature(s: Stored) -> dict[str, Any]:
    return {
        "start": _iso(s.start),
        "end": _iso(s.end),
        "route_id": s.route_id,
        "run_no": s.run_no,
        "lat": s.lat,
        "lon": s.lon,
        "place": s.place,
        "facts": dict(s.facts),
    }


def _overlap(c: Candidate, s: Stored) -> bool:
    """[start, end] intervals meet (end None: open to the future). Instants are aware."""
    c_end = _FAR if c.end is None else c.end
    s_end = _FAR if s.end is None else s.end
    return c.start <= s_end and s.start <= c_end


def _match(
    candidates: Sequence[Candidate], stored: Sequence[Stored]
) -> tuple[list[tuple[Candidate, Stored]], list[Candidate], list[Stored]]:
    """Pairs, unmatched candidates, unmatched stored; independent of the input orders."""
    cands = sorted(candidates, key=lambda c: (c.kind, c.vehicle_id, c.key or "", c.start, c.end or c.start))
    pool = sorted(stored, key=lambda s: (s.kind, s.vehicle_id, s.start, s.id))
    taken: set[int] = set()
    pairs: list[tuple[Candidate, Stored]] = []
    new: list[Candidate] = []
    for c in cands:
        if c.key is not None:
            found = [s for s in pool if s.id not in taken and s.kind == c.kind and s.key == c.key]
        else:
            found = [
                s for s in pool
                if s.id not in taken and s.key is None and s.kind == c.kind and s.vehicle_id == c.vehicle_id
                and _overlap(c, s)
            ]  # fmt: skip
        if found:
            best = min(found, key=lambda s: (abs((s.start - c.start).total_seconds()), s.id))
            taken.add(best.id)
            pairs.append((c, best))
        else:
            new.append(c)
    return pairs, new, [s for s in pool if s.id not in taken]


def reconcile(
    stored: Sequence[Stored], candidates: Sequence[Candidate], window: tuple[datetime, datetime] | None = None
) -> Plan:
    """The plan that makes `stored` say what `candidates` say; stored ones starting outside `window` never vanish."""
    pairs, new, unmatched = _match(candidates, stored)
    plan = Plan(inserts=new)
    for c, s in pairs:
        sig = signature(c)
        if s.status is Status.DETECTED:
            if sig != stored_signature(s):
                plan.updates.append(Update(s.id, c))
        elif s.status is Status.WITHDRAWN:
            plan.updates.append(Update(s.id, c, restore=True))
        elif s.status in FROZEN:
            if sig != stored_signature(s) and sig != (dict(s.last_note) if s.last_note is not None else None):
                plan.notes.append(Note(s.id, NOTE_CHANGED, sig))
    for s in unmatched:
        if window is not None and not (window[0] <= s.start < window[1]):
            continue
        if s.status is Status.DETECTED:
            reason = SILENCE_FILLED if s.kind is Kind.TRACKER_SILENT else NOT_SUPPORTED
            plan.withdrawals.append(Withdrawal(s.id, reason))
        elif s.status in FROZEN and (s.last_note is None or not s.last_note.get("vanished")):
            plan.notes.append(Note(s.id, NOTE_VANISHED, {"vanished": True}))
    plan.updates.sort(key=lambda u: u.id)
    plan.withdrawals.sort(key=lambda w: w.id)
    plan.notes.sort(key=lambda n: n.id)
    return plan
