"""The Portuguese names of an occurrence's kind, its severity and its process's states, shared by the occurrences' files
and the audit log in words (audit/words.py), which may not import the occurrences package (the audit log is a
layer below it: occurrences record into it). Keys are the codes stored (occurrences/model.py's Severity, Status).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

KIND_NAMES: Mapping[str, str] = {
    "speeding": "Excesso de velocidade",
    "route_deviation": "Desvio de rota",
    "unauthorized_stop": "Parada não autorizada",
    "schedule_delay": "Atraso no horário",
    "run_not_made": "Corrida não realizada",
    "unauthorized_vehicle": "Veículo não autorizado",
    "over_2h_on_board": "Mais de 2 h a bordo",
    "tracker_silent": "Rastreador sem transmitir",
}

SEVERITY_NAMES: Mapping[str, str] = {
    "leve": "leve",
    "media": "média",
    "grave": "grave",
    "gravissima": "gravíssima",
}

STATUS_NAMES: Mapping[str, str] = {
    "detected": "detectada (aguarda revisão)",
    "withdrawn": "retirada",
    "confirmed": "confirmada",
    "dismissed": "descartada",
    "notified": "notificada",
    "defense": "em defesa",
    "decided": "decidida",
    "under_appeal": "em recurso (penalidade suspensa)",
    "closed": "encerrada",
}


def kind_name(kind: Any) -> str:
    """The kind's Portuguese name (its code when unknown)."""
    return KIND_NAMES.get(str(kind), str(kind or "—"))


def status_name(status: Any) -> str:
    return STATUS_NAMES.get(str(status), str(status or "—"))


def severity_name(severity: Any) -> str:
    return SEVERITY_NAMES.get(str(severity), str(severity or "—"))
