"""The occurrences list's query parameters (pure): period, repeated or comma-separated kinds and states, and its
pt-BR CSV columns."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import orjson

from telemetria.http import FieldError
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.documents import wording
from telemetria.occurrences.model import KIND_NAMES, Kind, Status
from telemetria.occurrences.process.store import Filters
from telemetria.period import instant
from telemetria.reports.output import csv

MAX_DAYS = 366


def split(values: Sequence[str] | None, allowed: type[Kind] | type[Status], field: str) -> list[str] | None:
    """`["a,b", "c"]` → `["a", "b", "c"]`, each one of `allowed`; None when nothing was asked for."""
    if not values:
        return None
    out = [v.strip() for value in values for v in value.split(",") if v.strip()]
    names = {m.value for m in allowed}
    for v in out:
        if v not in names:
            raise FieldError(f"{field}: {v!r} is not one of {', '.join(sorted(names))}", field, 422)
    return out or None


def filters(
    start: str | None,
    end: str | None,
    vehicle_id: int | None,
    contractor_id: int | None,
    kinds: Sequence[str] | None,
    statuses: Sequence[str] | None,
    now: datetime | None = None,
) -> Filters:
    """The list's filters; the period defaults to today (local), `to` to the same day as `from`."""
    today = (now or datetime.now(UTC)).astimezone(LOCAL_TZ).date().isoformat()
    first = instant(start or today, LOCAL_TZ, "from")
    last = instant(end or start or today, LOCAL_TZ, "to", end=True)
    if last <= first:
        raise FieldError("to: the period ends before it starts", "to", 422)
    if (last - first).days > MAX_DAYS:
        raise FieldError(f"to: at most {MAX_DAYS} days at a time", "to", 422)
    return Filters(
        first, last, vehicle_id, contractor_id, split(kinds, Kind, "kind"), split(statuses, Status, "status")
    )


def _facts(row: Any) -> str:
    """The measured facts as people read them ("Velocidade máxima: 71,0 km/h; Duração: 2 min 00 s"), the same
    words as the Termo's (occurrences/documents/wording.py), never their JSON (issue 36)."""
    facts = row["facts"]
    if isinstance(facts, str | bytes):
        facts = orjson.loads(facts)
    return "; ".join(f"{label}: {value}" for label, value in wording.fact_lines(facts))


def _severity(row: Any) -> str | None:
    """The severity in words with the article that sets its fine: "média (Art. 37)"."""
    sev = row["severity"]
    if not sev:
        return None
    article = wording.SEVERITY_ARTICLES.get(sev)
    return f"{wording.severity_name(sev)} ({article})" if article else wording.severity_name(sev)


CSV_COLUMNS = [
    csv.Column("ID", "id", csv.INT),
    csv.Column("Tipo", lambda r: KIND_NAMES[Kind(r["kind"])]),
    csv.Column("Artigo", "article"),
    csv.Column("Gravidade", _severity),
    csv.Column("Veículo (ID)", "vehicle_id", csv.INT),
    csv.Column("Placa", "plate"),
    csv.Column("Empresa (ID)", "contractor_id", csv.INT),
    csv.Column("Condutor", "driver"),
    csv.Column("Rota (ID)", "route_id", csv.INT),
    csv.Column("Início", "start", csv.DATETIME),
    csv.Column("Fim", "end", csv.DATETIME),
    csv.Column("Latitude", "lat", csv.COORD),
    csv.Column("Longitude", "lon", csv.COORD),
    csv.Column("Local", "place"),
    csv.Column("Fatos medidos", _facts),
    csv.Column("Situação", lambda r: wording.status_name(r["status"])),
    csv.Column("Detectada em", "detected_at", csv.DATETIME),
    csv.Column("Com dados atrasados", "late", csv.BOOL),
]
