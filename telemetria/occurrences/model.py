"""The values fiscalização passes between its parts (pure): the kinds of occurrence and their legal classification,
the process's states, and a *candidate* — an occurrence as the rules derive it from the fixes.

Pipeline (docs/fiscalizacao.md): the detector takes the vehicle-days whose fixes changed → the rules
(`derive.py`, pure over the reports' Analysis, the day's runs and the gaps) give the candidates of a window →
`reconcile.py` (pure) compares them with what is stored for that window: new ones are inserted (marked late when
the fix that completed them arrived long after it was taken), changed ones updated while still `detected`,
vanished ones withdrawn with the reason (or, once confirmed, a note is added: confirmed evidence is frozen) →
the process (`process.py`, pure state machine) carries each one from `detected` to `closed`, with the
procedure of Lei 14.133/2021 (defence, decision, appeal) that Art. 41 points to.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from telemetria import words


class Kind(StrEnum):
    # Each kind: the duty its finding breaches, then the infraction (Art. 36–39) a servidor may open from it.
    SPEEDING = "speeding"  # above the limit in force (zone, route, vehicle): Art. 37 X (traffic law)
    ROUTE_DEVIATION = "route_deviation"  # off the route while carrying pupils: duty Art. 26; infraction Art. 37 X
    UNAUTHORIZED_STOP = "unauthorized_stop"  # a boarding-length stop off the authorized places on a run: Art. 38 IX
    SCHEDULE_DELAY = "schedule_delay"  # a stop reached late, or a run leaving early: Art. 37 XI
    RUN_NOT_MADE = "run_not_made"  # a due run with no (or too little) GPS evidence, not justified: Art. 39 I
    UNAUTHORIZED_VEHICLE = "unauthorized_vehicle"  # a run made by a vehicle not authorized for it: Art. 39 II
    OVER_2H_ON_BOARD = "over_2h_on_board"  # a leg with pupils on board of 2 h or more: duty Art. 9 §1, no infraction
    TRACKER_SILENT = "tracker_silent"  # no fix while a run is due: duty Art. 15 §1 XII, §2; infraction Art. 37 X


class Severity(StrEnum):
    LEVE = "leve"  # Art. 36
    MEDIA = "media"  # Art. 37
    GRAVE = "grave"  # Art. 38
    GRAVISSIMA = "gravissima"  # Art. 39


# The fine of each severity in UPFM (Art. 36–39), before doubling on recurrence.
UPFM: Mapping[Severity, int] = {Severity.LEVE: 10, Severity.MEDIA: 20, Severity.GRAVE: 30, Severity.GRAVISSIMA: 40}

# Severities whose recurrence within 12 months doubles the fine (Art. 38 and 39, sole paragraphs).
DOUBLES_ON_RECURRENCE: frozenset[Severity] = frozenset({Severity.GRAVE, Severity.GRAVISSIMA})


@dataclass(frozen=True, slots=True)
class Classification:
    duty: str  # the duty the finding breaches, e.g. "Art. 26"
    article: str | None  # the infraction's inciso of Art. 36–39, as cited, e.g. "Art. 37, XI"; None: a finding only
    severity: Severity | None  # follows from the article (Art. 36 leve ... 39 gravíssima)


# The default classification of each kind (docs/fiscalizacao.md says why); an admin may change it per kind
# (table occurrence_kinds, migration 0027).
DEFAULT_CLASSIFICATION: Mapping[Kind, Classification] = {
    Kind.SPEEDING: Classification("Art. 37, X (leis de trânsito)", "Art. 37, X", Severity.MEDIA),
    Kind.ROUTE_DEVIATION: Classification("Art. 26", "Art. 37, X", Severity.MEDIA),
    Kind.UNAUTHORIZED_STOP: Classification("Art. 38, IX", "Art. 38, IX", Severity.GRAVE),
    Kind.SCHEDULE_DELAY: Classification("Art. 37, XI", "Art. 37, XI", Severity.MEDIA),
    Kind.RUN_NOT_MADE: Classification("Art. 39, I", "Art. 39, I", Severity.GRAVISSIMA),
    Kind.UNAUTHORIZED_VEHICLE: Classification("Art. 39, II", "Art. 39, II", Severity.GRAVISSIMA),
    Kind.OVER_2H_ON_BOARD: Classification("Art. 9, § 1º", None, None),
    Kind.TRACKER_SILENT: Classification("Art. 15, § 1º, XII e § 2º", "Art. 37, X", Severity.MEDIA),
}

# Portuguese names, for pages, CSV and the Termo.
# Each kind's Portuguese name (telemetria/words.py: the audit log, below this package, names kinds too).
KIND_NAMES: Mapping[Kind, str] = {k: words.KIND_NAMES[k.value] for k in Kind}


class Status(StrEnum):
    DETECTED = "detected"  # found by the detector; may still change or be withdrawn as data arrives
    WITHDRAWN = "withdrawn"  # the complete data no longer supports it (reason in the history); final
    CONFIRMED = "confirmed"  # reviewed by a servidor, classification fixed, evidence frozen
    DISMISSED = "dismissed"  # reviewed and set aside, with the reason; final
    NOTIFIED = "notified"  # notificação para defesa prévia issued; the defence term runs (Lei 14.133 Art. 157)
    DEFENSE = "defense"  # the contractor answered (it may replace its defence until the term ends or it is final)
    DECIDED = "decided"  # none, warning, fine or both, with the motivation (Art. 42); the appeal term runs
    UNDER_APPEAL = "under_appeal"  # appealed (Lei 14.133 Art. 166): the penalty is suspended (Art. 168)
    CLOSED = "closed"  # archived once final


@dataclass(frozen=True, slots=True)
class Candidate:
    """An occurrence as the rules derive it from one window of a vehicle's fixes (by fix time).

    `key` identifies it across recomputations when the kind has a natural one (a run: "route:day:run_no", a
    scheduled stop: "route:day:run_no:seq"); kinds without one (speeding, deviation, stop, silence) are matched
    to stored occurrences of the same kind and vehicle by overlapping [start, end].
    """

    kind: Kind
    vehicle_id: int
    start: datetime  # aware, UTC
    end: datetime | None  # None: still going on at the window's end (live)
    route_id: int | None = None
    run_no: int | None = None
    key: str | None = None
    lat: float | None = None
    lon: float | None = None
    place: str | None = None
    facts: Mapping[str, Any] = field(default_factory=dict)  # JSON-able measured facts (speed and limit, m off...)
    completed_ts: datetime | None = None  # fix time of the fix that completed it (late marking compares arrival)
    contractor_id: int | None = None  # the one answerable, when not the vehicle's (a run: the contract holder's)
