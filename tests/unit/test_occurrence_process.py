"""The administrative process's state machine: every action from every state, by every role."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from telemetria.auth.roles import PERMISSIONS, Perm, Role
from telemetria.occurrences.model import Status
from telemetria.occurrences.process import CONTRACTOR_VISIBLE, TRANSITIONS, Action, WrongState, check, visible

# The whole table of legal moves, written out: anything else must be refused.
LEGAL = {
    (Action.CONFIRM, Status.DETECTED): Status.CONFIRMED,
    (Action.DISMISS, Status.DETECTED): Status.DISMISSED,
    (Action.NOTIFY, Status.CONFIRMED): Status.NOTIFIED,
    (Action.DEFENSE, Status.NOTIFIED): Status.DEFENSE,
    (Action.DEFENSE, Status.DEFENSE): Status.DEFENSE,
    (Action.DECIDE, Status.NOTIFIED): Status.DECIDED,
    (Action.DECIDE, Status.DEFENSE): Status.DECIDED,
    (Action.CLOSE, Status.DECIDED): Status.CLOSED,
}


@pytest.mark.parametrize("action", list(Action))
@pytest.mark.parametrize("status", list(Status))
def test_every_action_from_every_state(action: Action, status: Status) -> None:
    expected = LEGAL.get((action, status))
    if expected is None:
        with pytest.raises(WrongState) as e:
            check(action, status, role=Role.ADMIN, allowed=True)
        assert f"estado atual: {status.value}" in e.value.detail
        assert e.value.status is status
    else:
        assert check(action, status, role=Role.ADMIN, allowed=True) is expected


def test_final_states_accept_nothing() -> None:
    for status in (Status.WITHDRAWN, Status.DISMISSED, Status.CLOSED):
        for action in Action:
            with pytest.raises(WrongState):
                check(action, status, role=Role.ADMIN, allowed=True)


def test_a_role_without_the_permission_is_told_the_state_and_its_role() -> None:
    with pytest.raises(WrongState) as e:
        check(Action.CONFIRM, Status.NOTIFIED, role=Role.CONTRACTOR, allowed=False)
    assert "estado atual: notified" in e.value.detail and "'contractor'" in e.value.detail


def test_deciding_without_a_defence_waits_for_the_deadline() -> None:
    due = datetime(2026, 3, 9, 3, 59, 59, tzinfo=UTC)
    with pytest.raises(WrongState) as e:
        check(Action.DECIDE, Status.NOTIFIED, role=Role.ADMIN, allowed=True, now=due, defense_due=due)
    assert "estado atual: notified" in e.value.detail and "prazo" in e.value.detail
    after = due + timedelta(seconds=1)
    assert check(Action.DECIDE, Status.NOTIFIED, role=Role.ADMIN, allowed=True, now=after, defense_due=due) is (
        Status.DECIDED
    )
    # With a defence on file the decision need not wait.
    assert check(Action.DECIDE, Status.DEFENSE, role=Role.ADMIN, allowed=True, now=due, defense_due=due) is (
        Status.DECIDED
    )


def test_who_may_take_each_action() -> None:
    may = {role: {a for a, t in TRANSITIONS.items() if t.perm in PERMISSIONS[role]} for role in Role}
    assert may[Role.MONITOR] == {Action.CONFIRM, Action.DISMISS, Action.NOTIFY, Action.CLOSE}
    assert may[Role.ADMIN] == set(Action) - {Action.DEFENSE}  # a defence is the contractor's own answer
    assert may[Role.CONTRACTOR] == {Action.DEFENSE}
    assert may[Role.AUDITOR] == set()
    assert Perm.DECIDE_OCCURRENCES not in PERMISSIONS[Role.MONITOR]  # only when flagged designated


def test_a_contractor_sees_its_occurrences_from_the_termo_on() -> None:
    assert CONTRACTOR_VISIBLE == {Status.NOTIFIED, Status.DEFENSE, Status.DECIDED, Status.CLOSED}
    for status in Status:
        assert visible(status, Role.CONTRACTOR) is (status in CONTRACTOR_VISIBLE)
        assert visible(status, Role.AUDITOR)
