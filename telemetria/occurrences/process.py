"""The administrative process as a state machine (pure): which action may move an occurrence from which state,
and who may take it. Lei 3.588/2023 Art. 41 makes it the procedure of Lei 14.133/2021; Art. 42: contraditório,
ampla defesa and a motivated decision "em qualquer fase de defesa ou recurso".

    detected ─confirm→ confirmed ─notify→ notified ─defense→ defense ─decide→ decided ─close→ closed
        └─dismiss→ dismissed            └──decide (term over)──────┘      │ ↑
                                                                 appeal ↓ │ appeal-decision
                                                                     under_appeal

- notify: the notificação para defesa prévia; the defence term is 15 business days (Lei 14.133 Art. 157).
- defense: one defence per phase, replaced or completed until the term ends or the contractor declares it final.
- decide: waits for the term's end or a final defence (ampla defesa).
- appeal: within 15 business days of the decision (Art. 166); it suspends the penalty (Art. 168).
- appeal-decision: the decider reconsiders within 5 business days, or the superior authority decides (Art. 166,
  sole paragraph). Only then, or once the appeal term ran out unused, is the penalty final.

A wrong action is a `WrongState` (served as 409) whose text names the current state (and the role, or the
deadline, when that is what is wrong), so the client learns where the occurrence stands.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from telemetria.auth.roles import Perm, Role
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.model import Status


class Action(StrEnum):
    CONFIRM = "confirm"
    DISMISS = "dismiss"
    NOTIFY = "notify"
    DEFENSE = "defense"
    DECIDE = "decide"
    APPEAL = "appeal"
    APPEAL_DECIDE = "appeal_decide"
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
    Action.APPEAL: Transition(frozenset({Status.DECIDED}), Status.UNDER_APPEAL, Perm.DEFEND_OCCURRENCES, "recorrer"),
    Action.APPEAL_DECIDE: Transition(
        frozenset({Status.UNDER_APPEAL}), Status.DECIDED, Perm.DECIDE_OCCURRENCES, "julgar o recurso"
    ),
    Action.CLOSE: Transition(frozenset({Status.DECIDED}), Status.CLOSED, Perm.REVIEW_OCCURRENCES, "encerrar"),
}

# From which states a contractor sees its own occurrences (before the notificação, a finding is internal).
CONTRACTOR_VISIBLE: frozenset[Status] = frozenset(
    {Status.NOTIFIED, Status.DEFENSE, Status.DECIDED, Status.UNDER_APPEAL, Status.CLOSED}
)


class WrongState(Exception):
    """An action the occurrence's state (or the caller's role) does not allow; the text names the state."""

    def __init__(self, detail: str, status: Status, **extra: Any):
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.extra = extra


@dataclass(frozen=True, slots=True)
class Terms:
    """The process's deadlines and marks an action is checked against (all aware, or None when not set yet)."""

    defense_due: datetime | None = None
    defense_final: bool = False
    appeal_due: datetime | None = None
    appealed: bool = False
    sanctioned: bool = False  # the decision applied a warning and/or a fine (an appeal has something to attack)
    extra: dict[str, Any] = field(default_factory=dict)


def is_final(status: Status, terms: Terms, now: datetime) -> bool:
    """Whether the decision is final: no penalty to appeal, the appeal decided (an appealed occurrence back in
    `decided`), or the appeal term (Art. 166) over with no appeal. Under appeal it is not (Art. 168)."""
    if status not in (Status.DECIDED, Status.CLOSED):
        return False
    if terms.appealed or not terms.sanctioned:
        return True
    return terms.appeal_due is not None and now.replace(microsecond=0) > terms.appeal_due


def check(
    action: Action,
    status: Status,
    *,
    role: Role,
    allowed: bool,
    now: datetime | None = None,
    defense_due: datetime | None = None,
    terms: Terms | None = None,
) -> Status:
    """The state `action` leads to from `status`, or WrongState naming the current state.

    `allowed`: whether the caller holds the action's permission (a designated servidor's decision counts as held).
    """
    t = TRANSITIONS[action]
    terms = terms or Terms(defense_due=defense_due)
    if not allowed:
        raise WrongState(
            f"o papel {role.value!r} não pode {t.verb} uma ocorrência (estado atual: {status.value})", status
        )
    if status not in t.froms:
        expected = " ou ".join(sorted(s.value for s in t.froms))
        raise WrongState(
            f"não é possível {t.verb}: estado atual: {status.value} (é preciso estar em {expected})", status
        )
    due = terms.defense_due
    if action is Action.DECIDE and not terms.defense_final and due is not None and now is not None:
        if now.replace(microsecond=0) <= due:  # ampla defesa: the whole term, unless the defence is final
            raise WrongState(
                f"não é possível decidir: estado atual: {status.value}; o prazo de defesa (defense_until) vai até "
                f"{due.isoformat()} e a defesa não foi declarada final",
                status, defense_until=due.astimezone(LOCAL_TZ).date().isoformat(),
            )  # fmt: skip
    if action is Action.DEFENSE and terms.defense_final:
        raise WrongState(
            f"não é possível {t.verb}: a defesa já foi declarada final (estado atual: {status.value})", status
        )
    if action is Action.APPEAL:
        if not terms.sanctioned:
            raise WrongState(
                f"não é possível {t.verb}: a decisão não aplicou penalidade (estado atual: {status.value})", status
            )
        if terms.appealed:
            raise WrongState(
                f"não é possível {t.verb}: o recurso já foi julgado (estado atual: {status.value})", status
            )
        if terms.appeal_due is not None and now is not None and now.replace(microsecond=0) > terms.appeal_due:
            raise WrongState(
                f"não é possível {t.verb}: estado atual: {status.value}; o prazo de recurso (appeal_until) terminou "
                f"em {terms.appeal_due.isoformat()}",
                status, appeal_until=terms.appeal_due.astimezone(LOCAL_TZ).date().isoformat(),
            )  # fmt: skip
    if action is Action.CLOSE and now is not None and not is_final(status, terms, now):
        raise WrongState(
            f"não é possível {t.verb}: estado atual: {status.value}, a decisão ainda não é definitiva (prazo de "
            f"recurso até {terms.appeal_due.isoformat() if terms.appeal_due else '—'})", status,
        )  # fmt: skip
    return t.to


def visible(status: Status, role: Role) -> bool:
    """Whether a principal of `role` (already scoped to its contractor) may see an occurrence in `status`."""
    return role is not Role.CONTRACTOR or status in CONTRACTOR_VISIBLE
