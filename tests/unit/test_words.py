"""Every kind, severity and state of the process has its Portuguese name (telemetria/words.py), so no code reaches
a file or the audit log in words."""

from __future__ import annotations

from telemetria.occurrences.model import Kind, Severity, Status
from telemetria.words import KIND_NAMES, SEVERITY_NAMES, STATUS_NAMES, kind_name, severity_name, status_name


def test_every_state_and_severity_has_a_name() -> None:
    assert sorted(KIND_NAMES) == sorted(k.value for k in Kind)
    assert kind_name(Kind.TRACKER_SILENT) == "Rastreador sem transmitir"
    assert sorted(STATUS_NAMES) == sorted(s.value for s in Status)
    assert sorted(SEVERITY_NAMES) == sorted(s.value for s in Severity)
    assert status_name(Status.UNDER_APPEAL) == "em recurso (penalidade suspensa)"
    assert severity_name(Severity.GRAVISSIMA) == "gravíssima"
    assert status_name(None) == "—" and severity_name("x") == "x"
