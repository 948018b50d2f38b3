"""The administrative process's state machine: every action from every state, by every role."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from telemetria.auth.roles import PERMISSIONS, Perm, Role
from telemetria.occurrences.model import Status
from telemetria.occurrences.process.machine import (
    CONTRACTOR_VISIBLE,
    STATUS_NAMES,
    TRANSITIONS,
    Action,
    Terms,
    WrongState,
    check,
    is_final,
    visible,
)

# The whole table of legal moves, written out: anything else must be refused.
LEGAL = {
    (Action.CONFIRM, Status.DETECTED): Status.CONFIRMED,
    (Action.DISMISS, Status.DETECTED): Status.DISMISSED,
    (Action.NOTIFY, Status.CONFIRMED): Status.NOTIFIED,
    (Action.DEFENSE, Status.NOTIFIED): Status.DEFENSE,
    (Action.DEFENSE, Status.DEFENSE): Status.DEFENSE,
    (Action.DECIDE, Status.NOTIFIED): Status.DECIDED,
    (Action.DECIDE, Status.DEFENSE): Status.DECIDED,
    (Action.APPEAL, Status.DECIDED): Status.UNDER_APPEAL,
    (Action.APPEAL_DECIDE, Status.UNDER_APPEAL): Status.DECIDED,
    (Action.CLOSE, Status.DECIDED): Status.CLOSED,
}
SANCTIONED = Terms(sanctioned=True)


@pytest.mark.parametrize("action", list(Action))
@pytest.mark.parametrize("status", list(Status))
def test_every_action_from_every_state(action: Action, status: Status) -> None:
    expected = LEGAL.get((action, status))
    if expected is None:
        with pytest.raises(WrongState) as e:
            check(action, status, role=Role.ADMIN, allowed=True, terms=SANCTIONED)
        assert f"situação atual: {STATUS_NAMES[status]}" in e.value.detail
        assert e.value.status is status
    else:
        assert check(action, status, role=Role.ADMIN, allowed=True, terms=SANCTIONED) is expected


def test_final_states_accept_nothing() -> None:
    for status in (Status.WITHDRAWN, Status.DISMISSED, Status.CLOSED):
        for action in Action:
            with pytest.raises(WrongState):
                check(action, status, role=Role.ADMIN, allowed=True)


def test_a_role_without_the_permission_is_told_the_state_and_its_role() -> None:
    with pytest.raises(WrongState) as e:
        check(Action.CONFIRM, Status.NOTIFIED, role=Role.CONTRACTOR, allowed=False)
    assert "situação atual: notificada" in e.value.detail and "(contratada)" in e.value.detail


def test_deciding_without_a_defence_waits_for_the_deadline() -> None:
    due = datetime(2026, 3, 9, 3, 59, 59, tzinfo=UTC)
    with pytest.raises(WrongState) as e:
        check(Action.DECIDE, Status.NOTIFIED, role=Role.ADMIN, allowed=True, now=due, defense_due=due)
    assert "situação atual: notificada" in e.value.detail
    # The opening a person reads: the term's end in local time (UTC-4), dd/mm/aaaa HH:MM; no ISO, no UTC.
    assert e.value.detail.startswith("Ainda no prazo de defesa até 08/03/2026 23:59:"), e.value.detail
    assert "2026-03-09" not in e.value.detail and "+00:00" not in e.value.detail
    after = due + timedelta(seconds=1)
    assert check(Action.DECIDE, Status.NOTIFIED, role=Role.ADMIN, allowed=True, now=after, defense_due=due) is (
        Status.DECIDED
    )
    # A first (short) defence does not end the contractor's term: the decision still waits (ampla defesa) ...
    with pytest.raises(WrongState) as e:
        check(Action.DECIDE, Status.DEFENSE, role=Role.ADMIN, allowed=True, now=due, defense_due=due)
    assert e.value.extra == {"defense_until": "2026-03-08", "field": "defense_until"}  # the local date
    # ... unless the contractor declared its defence final; and once final, it cannot be replaced.
    final = Terms(defense_due=due, defense_final=True)
    assert check(Action.DECIDE, Status.DEFENSE, role=Role.ADMIN, allowed=True, now=due, terms=final) is (Status.DECIDED)
    with pytest.raises(WrongState, match="final"):
        check(Action.DEFENSE, Status.DEFENSE, role=Role.CONTRACTOR, allowed=True, now=due, terms=final)


def test_the_appeal_term_and_finality() -> None:
    """Lei 14.133/2021 Art. 166: an appeal within its term; Art. 168: under appeal, the penalty is not final."""
    decided = datetime(2026, 3, 2, 15, tzinfo=UTC)
    due = datetime(2026, 3, 24, 3, 59, 59, tzinfo=UTC)
    running = Terms(appeal_due=due, sanctioned=True)
    assert check(Action.APPEAL, Status.DECIDED, role=Role.CONTRACTOR, allowed=True, now=due, terms=running) is (
        Status.UNDER_APPEAL
    )
    with pytest.raises(WrongState) as e:
        check(Action.APPEAL, Status.DECIDED, role=Role.CONTRACTOR, allowed=True, now=due + timedelta(seconds=1),
              terms=running)  # fmt: skip
    assert e.value.extra == {"appeal_until": "2026-03-23", "field": "appeal_until"}
    assert e.value.detail.startswith("Prazo de recurso encerrado em 23/03/2026 23:59")
    assert not is_final(Status.DECIDED, running, decided)  # the appeal term still runs
    assert is_final(Status.DECIDED, running, due + timedelta(seconds=1))  # ran out unused
    appealed = Terms(appeal_due=due, sanctioned=True, appealed=True)
    assert not is_final(Status.UNDER_APPEAL, appealed, decided)  # suspended
    assert is_final(Status.DECIDED, appealed, decided)  # the appeal decided
    assert is_final(Status.DECIDED, Terms(), decided)  # no penalty: nothing to appeal
    with pytest.raises(WrongState, match="definitiva"):
        check(Action.CLOSE, Status.DECIDED, role=Role.MONITOR, allowed=True, now=decided, terms=running)


def test_who_may_take_each_action() -> None:
    may = {role: {a for a, t in TRANSITIONS.items() if t.perm in PERMISSIONS[role]} for role in Role}
    assert may[Role.MONITOR] == {Action.CONFIRM, Action.DISMISS, Action.NOTIFY, Action.CLOSE}
    assert may[Role.ADMIN] == set(Action) - {Action.DEFENSE, Action.APPEAL}  # the contractor's own answers
    assert may[Role.CONTRACTOR] == {Action.DEFENSE, Action.APPEAL}
    assert may[Role.AUDITOR] == set()
    assert Perm.DECIDE_OCCURRENCES not in PERMISSIONS[Role.MONITOR]  # only when flagged designated


def test_a_contractor_sees_its_occurrences_from_the_termo_on() -> None:
    assert CONTRACTOR_VISIBLE == {Status.NOTIFIED, Status.DEFENSE, Status.DECIDED, Status.UNDER_APPEAL, Status.CLOSED}
    for status in Status:
        assert visible(status, Role.CONTRACTOR) is (status in CONTRACTOR_VISIBLE)
        assert visible(status, Role.AUDITOR)
