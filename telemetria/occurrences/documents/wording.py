"""An occurrence in Portuguese words, the same in the Termo, the e-mail and the webhook (pure).

Times are written in the municipality's zone as dd/mm/aaaa HH:MM:SS; the measured facts (`occurrences.facts`, by
kind: occ-spec) become labelled values with their units, numbers by telemetria/formats.py's rules.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from telemetria.formats import fmt
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.model import KIND_NAMES, Kind, Severity
from telemetria.words import SEVERITY_NAMES as SEVERITY_NAMES  # re-exported: the names live below both packages
from telemetria.words import STATUS_NAMES as STATUS_NAMES
from telemetria.words import severity_name as severity_name
from telemetria.words import status_name as status_name

# Where the law sets each severity's fine (Lei 3.588/2023).
SEVERITY_ARTICLES: Mapping[str, str] = {
    Severity.LEVE: "Art. 36",
    Severity.MEDIA: "Art. 37",
    Severity.GRAVE: "Art. 38",
    Severity.GRAVISSIMA: "Art. 39",
}

# What each kind means, one sentence, for a reader who has not seen the system.
KIND_MEANINGS: Mapping[str, str] = {
    Kind.SPEEDING: "O veículo trafegou acima do limite de velocidade aplicável ao trecho.",
    Kind.ROUTE_DEVIATION: "O veículo afastou-se da rota autorizada além da tolerância.",
    Kind.UNAUTHORIZED_STOP: "O veículo parou fora dos pontos autorizados da rota, da escola e da garagem.",
    Kind.SCHEDULE_DELAY: "Um ponto programado da corrida foi atingido depois do horário, além da tolerância.",
    Kind.RUN_NOT_MADE: "Uma corrida devida não foi realizada, sem justificativa registrada.",
    Kind.UNAUTHORIZED_VEHICLE: "Uma corrida foi realizada por veículo não autorizado para ela.",
    Kind.OVER_2H_ON_BOARD: "Um trecho com alunos a bordo durou mais de 2 horas.",
    Kind.TRACKER_SILENT: "O rastreador deixou de transmitir posições enquanto o veículo deveria estar em serviço.",
}

# fact key → (label, how to write it); "dur" is seconds written as h/min/s, "time" an instant, "text" as is.
FACTS: Mapping[str, tuple[str, str]] = {
    "max_kmh": ("Velocidade máxima", "kmh"),
    "limit_kmh": ("Limite de velocidade", "kmh"),
    "over_kmh": ("Acima do limite", "kmh"),
    "duration_s": ("Duração", "dur"),
    "km": ("Distância percorrida", "km"),
    "max_off_m": ("Maior afastamento da rota", "m"),
    "tolerance_m": ("Tolerância da rota", "m"),
    "nearest_stop": ("Ponto autorizado mais próximo", "text"),
    "nearest_m": ("Distância ao ponto mais próximo", "m"),
    "stop": ("Ponto programado", "text"),
    "scheduled": ("Horário programado", "time"),
    "arrived": ("Chegada", "time"),
    "late_min": ("Atraso no ponto", "min"),
    "max_late_min": ("Maior atraso da corrida", "min"),
    "coverage_pct": ("Cobertura da rota", "pct"),
    "made_pct": ("Cobertura exigida para corrida realizada", "pct"),
    "contracted_km": ("Quilometragem contratada", "km"),
    "late_stops": ("Pontos atrasados", "text"),
    "early_stop": ("Ponto deixado antes do horário", "text"),
    "early_scheduled": ("Horário programado nesse ponto", "time"),
    "departed": ("Saída", "time"),
    "early_min": ("Antecipação na saída", "min"),
    "early_stops": ("Pontos deixados antes do horário", "text"),
    "skipped_stops": ("Pontos de embarque não atendidos", "text"),
    "ignition_off": ("Ignição desligada", "text"),
    "leg": ("Trecho", "text"),
    "plate": ("Placa", "text"),
    "status": ("Situação da corrida", "text"),
    "reason": ("Motivo", "text"),
    "assigned_vehicle_ids": ("Veículos atribuídos (ids)", "text"),
    "first_fix": ("Primeira posição", "time"),
    "last_fix": ("Última posição", "time"),
    "declared_km": ("Quilometragem declarada", "km"),
    "minutes": ("Tempo a bordo", "min"),
    "from": ("De", "text"),
    "to": ("Até", "text"),
    "gap_s": ("Tempo sem transmitir", "dur"),
    "moved_m": ("Deslocamento durante a falha", "m"),
    "since": ("Sem transmitir desde", "time"),
    # The bounds of an estimated start and end (issue 34: start and end are the midpoints between the fixes around
    # them; rules.bounds).
    "start_min": ("Início, não antes de", "time"),
    "start_max": ("Início, não depois de", "time"),
    "end_min": ("Fim, não antes de", "time"),
    "end_max": ("Fim, não depois de", "time"),
}
UNITS = {"kmh": " km/h", "km": " km", "m": " m", "min": " min", "pct": " %"}


def instant(value: Any) -> datetime | None:
    """A datetime, an ISO 8601 text or None → an aware datetime (naive ones are UTC) or None."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip().replace("z", "Z"))
        except ValueError:
            return None
    if not isinstance(value, datetime):
        return None
    return value if value.tzinfo else value.replace(tzinfo=UTC)  # inside the service every time is UTC


def when(value: Any) -> str:
    """dd/mm/aaaa HH:MM:SS in the municipality's zone; "—" when there is no time."""
    t = instant(value)
    if t is None:
        return "—" if value in (None, "") else str(value)
    return t.astimezone(LOCAL_TZ).strftime("%d/%m/%Y %H:%M:%S")


def duration(seconds: Any) -> str:
    """Seconds as `1 h 05 min 03 s`, `4 min 10 s` or `42 s`."""
    try:
        total = round(float(seconds))
    except (TypeError, ValueError):
        return str(seconds)
    h, rest = divmod(max(total, 0), 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h} h {m:02d} min {s:02d} s"
    return f"{m} min {s:02d} s" if m else f"{s} s"


def value_text(how: str, value: Any) -> str:
    """One fact's value as people read it."""
    if value is None:
        return "—"
    if how == "dur":
        return duration(value)
    if how == "time":
        return when(value)
    if how in UNITS and isinstance(value, int | float) and not isinstance(value, bool):
        return fmt(how, value) + UNITS[how]
    if isinstance(value, bool):
        return "sim" if value else "não"
    if isinstance(value, list | tuple):
        return ", ".join(str(v) for v in value)
    return str(value)


def fact_lines(facts: Mapping[str, Any] | None) -> list[tuple[str, str]]:
    """(label, value) for every measured fact: the known ones in FACTS' order, then any other as it is."""
    facts = facts or {}
    lines = [(label, value_text(how, facts[key])) for key, (label, how) in FACTS.items() if key in facts]
    lines += [(key, value_text("text", v)) for key, v in facts.items() if key not in FACTS]
    return lines


def kind_name(kind: Any) -> str:
    """The kind's Portuguese name (its code when unknown)."""
    try:
        return KIND_NAMES[Kind(kind)]
    except ValueError:
        return str(kind or "—")


def route_text(route: Any) -> str:
    """A route given as {code, name}, a text or None."""
    if isinstance(route, Mapping):
        parts = [str(p) for p in (route.get("code"), route.get("name")) if p]
        return " — ".join(parts) or "—"
    return str(route) if route else "—"


def place_text(place: Any, lat: Any, lon: Any) -> str:
    """The place's name (if any) and its coordinates."""
    coords = ""
    if isinstance(lat, int | float) and isinstance(lon, int | float):
        coords = f"{fmt('coord', lat)}; {fmt('coord', lon)}".replace(",", ".").replace(";", ",")
    if place and coords:
        return f"{place} ({coords})"
    return str(place or coords or "—")
