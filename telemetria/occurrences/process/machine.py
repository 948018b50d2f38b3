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

A wrong action is a `WrongState` (served as 409) whose text, in Portuguese for the person reading it, opens with
what is wrong ("Ainda no prazo de defesa até 11/12/2026 23:59", local time) and names the current state; the
machine-readable parts stay beside it (`state`, and `defense_until` / `appeal_until` as local dates).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any

from telemetria.auth.roles import Perm, Role
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.model import Status

# How a refusal names the state and the caller's profile to a person (pages show the API's text as it is).
STATUS_NAMES: dict[Status, str] = {
    Status.DETECTED: "detectada (aguarda revisão)",
    Status.WITHDRAWN: "retirada",
    Status.CONFIRMED: "confirmada",
    Status.DISMISSED: "descartada",
    Status.NOTIFIED: "notificada",
    Status.DEFENSE: "em defesa",
    Status.DECIDED: "decidida",
    Status.UNDER_APPEAL: "em recurso",
    Status.CLOSED: "encerrada",
}
ROLE_NAMES: dict[Role, str] = {
    Role.ADMIN: "administrador",
    Role.MONITOR: "servidor",
    Role.AUDITOR: "auditor",
    Role.CONTRACTOR: "contratada",
}


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
    now_s = f"situação atual: {status_name(status)}"
    if not allowed:
        who = ROLE_NAMES.get(role, role.value)
        if action in (Action.DECIDE, Action.APPEAL_DECIDE) and role is not Role.CONTRACTOR:
            raise WrongState(
                f"Seu perfil ({who}) não pode {t.verb}: só um administrador ou um servidor designado (Art. 42) "
                f"decide; a designação é dada em Administração › Usuários ({now_s})", status,
            )  # fmt: skip
        raise WrongState(f"Seu perfil ({who}) não pode {t.verb} ({now_s})", status)
    if status not in t.froms:
        expected = " ou ".join(sorted(status_name(s) for s in t.froms))
        raise WrongState(f"Não é possível {t.verb}: a ocorrência está {status_name(status)} (é preciso estar "
                         f"{expected}; {now_s})", status)  # fmt: skip
    due = terms.defense_due
    if action is Action.DECIDE and not terms.defense_final and due is not None and now is not None:
        if now.replace(microsecond=0) <= due:  # ampla defesa: the whole term, unless the defence is final
            raise WrongState(
                f"Ainda no prazo de defesa até {local_minute(due)}: a decisão espera o fim do prazo ou uma defesa "
                f"declarada final pela contratada (Lei 14.133/2021 Art. 157; {now_s})",
                status, defense_until=due.astimezone(LOCAL_TZ).date().isoformat(), field="defense_until",
            )  # fmt: skip
    if action is Action.DEFENSE and terms.defense_final:
        raise WrongState(f"A defesa já foi declarada final e não pode mais ser substituída ({now_s})", status)
    if action is Action.APPEAL:
        if not terms.sanctioned:
            raise WrongState(f"Não cabe recurso: a decisão não aplicou penalidade ({now_s})", status)
        if terms.appealed:
            raise WrongState(f"Não cabe novo recurso: o recurso já foi julgado ({now_s})", status)
        if terms.appeal_due is not None and now is not None and now.replace(microsecond=0) > terms.appeal_due:
            raise WrongState(
                f"Prazo de recurso encerrado em {local_minute(terms.appeal_due)} (Lei 14.133/2021 Art. 166; "
                f"{now_s})", status, appeal_until=terms.appeal_due.astimezone(LOCAL_TZ).date().isoformat(),
                field="appeal_until",
            )  # fmt: skip
    if action is Action.CLOSE and now is not None and not is_final(status, terms, now):
        until = local_minute(terms.appeal_due) if terms.appeal_due else "—"
        raise WrongState(
            f"Ainda no prazo de recurso até {until}: a decisão ainda não é definitiva e não pode ser encerrada "
            f"({now_s})", status,
        )  # fmt: skip
    return t.to


def local_minute(t: datetime) -> str:
    """dd/mm/aaaa HH:MM in the municipality's zone: how a deadline is told to a person."""
    return t.astimezone(LOCAL_TZ).strftime("%d/%m/%Y %H:%M")


def status_name(status: Status) -> str:
    return STATUS_NAMES.get(status, status.value)


def visible(status: Status, role: Role) -> bool:
    """Whether a principal of `role` (already scoped to its contractor) may see an occurrence in `status`."""
    return role is not Role.CONTRACTOR or status in CONTRACTOR_VISIBLE
