"""The administrative process as a state machine (pure): which action may move an occurrence from which state,
and who may take it. Lei 3.588/2023 Art. 41–42: a finding is reviewed, communicated (Termo), answered by the
contractor (contraditório, ampla defesa) and decided with its motivation, then closed.

    detected ─confirm→ confirmed ─notify→ notified ─defense→ defense ─decide→ decided ─close→ closed
        └─dismiss→ dismissed            └──────────decide (after the deadline)──┘

A wrong action is a `WrongState` (served as 409) whose text names the current state (and the role, when the role is
what is wrong), so the client learns where the occurrence stands.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from telemetria.auth.roles import Perm, Role
from telemetria.occurrences.model import Status


class Action(StrEnum):
    CONFIRM = "confirm"
    DISMISS = "dismiss"
    NOTIFY = "notify"
    DEFENSE = "defense"
    DECIDE = "decide"
    CLOSE = "close"


@dataclass(frozen=True, slots=True)
class Transition:
    froms: frozenset[Status]
    to: Status
    perm: Perm
    verb: str  # Portuguese, for the 409 texts: "revisar", "notificar"...


TRANSITIONS: dict[Action, Transition] = {
    Action.CONFIRM: Transition(frozenset({Status.DETECTED}), Status.CONFIRMED, Perm.REVIEW_OCCURRENCES, "confirmar"),
    Action.DISMISS: Transition(frozenset({Status.DETECTED}), Status.DISMISSED, Perm.REVIEW_OCCURRENCES, "arquivar"),
    Action.NOTIFY: Transition(frozenset({Status.CONFIRMED}), Status.NOTIFIED, Perm.REVIEW_OCCURRENCES, "notificar"),
    Action.DEFENSE: Transition(
        frozenset({Status.NOTIFIED, Status.DEFENSE}), Status.DEFENSE, Perm.DEFEND_OCCURRENCES, "apresentar defesa"
    ),
    Action.DECIDE: Transition(
        frozenset({Status.NOTIFIED, Status.DEFENSE}), Status.DECIDED, Perm.DECIDE_OCCURRENCES, "decidir"
    ),
    Action.CLOSE: Transition(frozenset({Status.DECIDED}), Status.CLOSED, Perm.REVIEW_OCCURRENCES, "encerrar"),
}

# From which states a contractor sees its own occurrences (before the Termo, a finding is internal).
CONTRACTOR_VISIBLE: frozenset[Status] = frozenset({Status.NOTIFIED, Status.DEFENSE, Status.DECIDED, Status.CLOSED})


class WrongState(Exception):
    """An action the occurrence's state (or the caller's role) does not allow; the text names the state."""

    def __init__(self, detail: str, status: Status):
        super().__init__(detail)
        self.detail = detail
        self.status = status


def check(
    action: Action,
    status: Status,
    *,
    role: Role,
    allowed: bool,
    now: datetime | None = None,
    defense_due: datetime | None = None,
) -> Status:
    """The state `action` leads to from `status`, or WrongState naming the current state.

    `allowed`: whether the caller holds the action's permission (a designated servidor's decision counts as held).
    Deciding an occurrence still `notified` (no defence yet) waits for the end of the defence deadline: the
    contractor has the whole term to answer (Art. 41, ampla defesa).
    """
    t = TRANSITIONS[action]
    if not allowed:
        raise WrongState(
            f"o papel {role.value!r} não pode {t.verb} uma ocorrência (estado atual: {status.value})", status
        )
    if status not in t.froms:
        expected = " ou ".join(sorted(s.value for s in t.froms))
        raise WrongState(
            f"não é possível {t.verb}: estado atual: {status.value} (é preciso estar em {expected})", status
        )
    if action is Action.DECIDE and status is Status.NOTIFIED and defense_due is not None and now is not None:
        if now <= defense_due:
            raise WrongState(
                f"não é possível decidir: estado atual: {status.value}, sem defesa, e o prazo de defesa vai até "
                f"{defense_due.isoformat()}",
                status,
            )
    return t.to


def visible(status: Status, role: Role) -> bool:
    """Whether a principal of `role` (already scoped to its contractor) may see an occurrence in `status`."""
    return role is not Role.CONTRACTOR or status in CONTRACTOR_VISIBLE
