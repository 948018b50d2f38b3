"""An audit entry in Portuguese words (pure): what was done, to what, and what changed — old → new where the entry
keeps both — with local times (America/Porto_Velho) and dates as dates, never codes. The audit page and its CSV
both show these words (issue 36: an auditor files the log; "measurement.close", "contract:1" or "run_no: null"
mean nothing to them). Vocabulary: docs/glossario.md."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any

from telemetria.localtime import LOCAL_TZ
from telemetria.words import kind_name, severity_name, status_name

ACTIONS: Mapping[str, str] = {
    "auth.login": "Entrada no sistema",
    "auth.login_failed": "Tentativa de entrada recusada",
    "auth.logout": "Saída do sistema",
    "auth.unlock": "Bloqueio de entrada desfeito",
    "token.create": "Token pessoal criado",
    "token.revoke": "Token pessoal revogado",
    "user.create": "Usuário criado",
    "user.update": "Usuário alterado",
    "seals.verify": "Arquivo verificado contra os selos",
    "measurement.close": "Mês do boletim de medição fechado",
    "measurement.reopen": "Mês do boletim de medição reaberto",
    "occurrence.kind.update": "Classificação de um tipo de ocorrência alterada",
    "occurrence.confirmed": "Ocorrência confirmada na revisão",
    "occurrence.dismissed": "Ocorrência descartada na revisão",
    "occurrence.notified": "Termo de Comunicação emitido (ocorrência notificada)",
    "occurrence.defense": "Defesa da empresa registrada",
    "occurrence.decided": "Ocorrência decidida",
    "occurrence.closed": "Ocorrência encerrada",
    "registry.run_justification.create": "Corrida justificada",
    "registry.run_justification.update": "Justificativa corrigida",
    "registry.school_year.update": "Calendário escolar salvo",
    "registry.tracker.rotate_token": "Rastreador: novo token",
    "registry.tracker.move": "Rastreador: mudança de veículo",
    "registry.route.stops": "Rota: pontos alterados",
}
KINDS: Mapping[str, str] = {
    "vehicle": "Veículo", "tracker": "Rastreador", "contractor": "Empresa", "driver": "Condutor", "route": "Rota",
    "driver_assignment": "Condutor no veículo", "route_assignment": "Rota do veículo",
    "speed_zone": "Zona de velocidade",
    "contract": "Contrato", "school_year": "Ano letivo", "user": "Usuário", "token": "Token pessoal",
    "occurrence": "Ocorrência", "occurrence_kind": "Tipo de ocorrência", "run_justification": "Justificativa",
}  # fmt: skip
VERBS: Mapping[str, str] = {"create": "cadastro", "update": "alteração", "delete": "exclusão"}
REPORTS: Mapping[str, str] = {
    "km": "Km rodados", "summary": "Resumo por veículo", "trips": "Trajetos (trechos)",
    "speeding": "Excesso de velocidade", "stops": "Paradas", "route-deviation": "Desvios de rota",
    "track": "Trajetória", "schedule": "Cumprimento de horários", "reporting": "Regularidade de transmissão",
    "measurement": "Boletim de medição", "occurrences": "Ocorrências",
}  # fmt: skip
FIELDS: Mapping[str, str] = {
    "plate": "placa", "prefix": "prefixo", "description": "descrição", "contractor_id": "empresa",
    "capacity": "lotação", "manufacture_year": "ano de fabricação", "kind": "tipo",
    "speed_limit_kmh": "limite de velocidade", "active": "situação", "name": "nome", "cnpj": "CNPJ",
    "contract_number": "contrato", "cpf": "CPF", "cnh_category": "categoria da CNH", "card_id": "cartão",
    "code": "código", "shift": "turno", "declared_km": "km declarado", "deviation_tolerance_m": "tolerância de desvio",
    "limit_kmh": "limite", "full_name": "nome completo", "role": "perfil", "password": "senha",
    "designated": "designação (decide ocorrências, Art. 42)",
    "superior_authority": "autoridade superior (julga recursos, Lei 14.133/2021 Art. 166)",
    "price_per_km": "preço por km",
    "contracted_km": "km contratado", "valid_from": "início da vigência", "valid_to": "fim da vigência",
    "article": "artigo", "severity": "gravidade", "weekdays": "dias da semana",
}  # fmt: skip
ROLES: Mapping[str, str] = {"admin": "Administrador", "monitor": "Servidor", "auditor": "Controle externo",
                            "contractor": "Empresa contratada"}  # fmt: skip
REASONS: Mapping[str, str] = {"bad_password": "senha errada", "unknown": "usuário inexistente",
                              "inactive": "usuário inativo", "locked": "conta bloqueada"}  # fmt: skip
PENALTIES: Mapping[str, str] = {"none": "sem penalidade", "warning": "advertência escrita", "fine": "multa"}
FORMATS: Mapping[str, str] = {"csv": "CSV", "xlsx": "XLSX", "pdf": "PDF", "json": "JSON"}
MONTHS = ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
          "novembro", "dezembro")  # fmt: skip
ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")
ISO_MONTH = re.compile(r"^(\d{4})-(\d{2})$")


def local_time(value: Any) -> str:
    """An instant as the municipality's wall clock, "05/12/2026 14:03:09"; a bare date as "05/12/2026" (a date
    is a day of the calendar, never a UTC midnight)."""
    if value is None or value == "":
        return "—"
    if isinstance(value, datetime):
        at = value if value.tzinfo else value.replace(tzinfo=LOCAL_TZ)
        return at.astimezone(LOCAL_TZ).strftime("%d/%m/%Y %H:%M:%S")
    if isinstance(value, date):
        return value.strftime("%d/%m/%Y")
    text = str(value)
    if ISO_DAY.match(text):
        return date.fromisoformat(text).strftime("%d/%m/%Y")
    try:
        return local_time(datetime.fromisoformat(text.replace("Z", "+00:00")))
    except ValueError:
        return text


def _instant(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=LOCAL_TZ)).astimezone(LOCAL_TZ)
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(LOCAL_TZ)
    except ValueError:
        return None


def period_text(start: Any, end: Any) -> str:
    """A period as people read it. Bare dates are days, the last included ("01/11/2026 a 30/11/2026"); instants
    (a report's window, its end excluded) in local time: whole days as days, else to the last minute or second."""
    if ISO_DAY.match(str(start)) and ISO_DAY.match(str(end)):
        first, final = date.fromisoformat(str(start)), date.fromisoformat(str(end))
        return f"{first:%d/%m/%Y}" if first >= final else f"{first:%d/%m/%Y} a {final:%d/%m/%Y}"
    a, b = _instant(start), _instant(end)
    if a is None or b is None:
        return f"{start} a {end}"
    if a.time() == b.time() == datetime.min.time():
        last_day = (b - timedelta(days=1)).date()
        return f"{a:%d/%m/%Y}" if last_day <= a.date() else f"{a:%d/%m/%Y} a {last_day:%d/%m/%Y}"
    whole_minutes = a.second == 0 and b.second == 0 and not a.microsecond and not b.microsecond
    step, clock = (timedelta(minutes=1), "%H:%M") if whole_minutes else (timedelta(seconds=1), "%H:%M:%S")
    last = b - step
    tail = last.strftime(clock) if last.date() == a.date() else last.strftime(f"%d/%m/%Y {clock}")
    return f"{a:%d/%m/%Y} {a.strftime(clock)} a {tail}"


def month_name(value: Any) -> str:
    m = ISO_MONTH.match(str(value))
    return f"{MONTHS[int(m[2]) - 1]} de {m[1]}" if m and 1 <= int(m[2]) <= 12 else str(value)


def action_text(code: str) -> str:
    if code in ACTIONS:
        return ACTIONS[code]
    if code.startswith("export."):
        kind = code.removeprefix("export.")
        return f"Exportação: {REPORTS.get(kind, kind)}"
    m = re.match(r"^registry\.(\w+)\.(\w+)$", code)
    if m and m[1] in KINDS:
        return f"{KINDS[m[1]]}: {VERBS.get(m[2], m[2])}"
    m = re.match(r"^occurrence\.(\w+)$", code)
    if m:
        return f"Ocorrência {status_name(m[1])}"
    return code


def target_text(target: str | None, plates: Mapping[int, str] | None = None) -> str:
    """ "contract:1" → "Contrato nº 1"; a vehicle by its plate when known."""
    if not target:
        return "—"
    kind, _, ident = target.partition(":")
    if kind == "vehicle" and plates and ident.isdigit() and int(ident) in plates:
        return f"Veículo nº {ident} ({plates[int(ident)]})"
    if kind == "school_year":
        return f"Ano letivo de {ident}"
    if kind == "occurrence_kind":
        return f"Tipo de ocorrência: {kind_name(ident)}"
    name = KINDS.get(kind)
    return f"{name} nº {ident}" if name and ident else target


def value_text(field: str, value: Any) -> str:
    """One field's value as a person reads it."""
    if value is None or value == "":
        return "vazio"
    if isinstance(value, bool):
        if field == "active":
            return "ativo" if value else "inativo"
        if field == "designated":
            return "designado" if value else "não designado"
        if field == "superior_authority":
            return "autoridade superior" if value else "sem autoridade superior"
        return "sim" if value else "não"
    if field == "role":
        return ROLES.get(str(value), str(value))
    if field == "severity":
        return severity_name(value)
    if field in ("contractor_id", "vehicle_id", "route_id", "driver_id"):
        return f"nº {value}"
    return str(value)


def _plates(ids: list[Any], plates: Mapping[int, str] | None, count: Any = None) -> str:
    shown = [plates.get(int(i), f"nº {i}") if plates else f"nº {i}" for i in ids[:10]]
    total = max(int(count) if isinstance(count, int) else len(ids), len(ids))
    more = total - len(shown)
    return (f"{total} {'veículo' if total == 1 else 'veículos'}: {', '.join(shown)}"
            + (f" e mais {more}" if more > 0 else ""))  # fmt: skip


def _export(d: Mapping[str, Any], plates: Mapping[int, str] | None) -> list[str]:
    parts = []
    if d.get("format"):
        parts.append(f"arquivo {FORMATS.get(str(d['format']), str(d['format']).upper())}")
    if d.get("from") and d.get("to"):
        parts.append(f"período {period_text(d['from'], d['to'])}")
    if isinstance(d.get("vehicles"), list):
        parts.append(_plates(d["vehicles"], plates, d.get("vehicle_count")))
    if isinstance(d.get("contracts"), list) and d["contracts"]:
        parts.append("contratos nº " + ", ".join(str(c) for c in d["contracts"]))
    if d.get("rows") is not None:
        parts.append(f"{d['rows']} linhas")
    return parts


def _changes(changes: Mapping[str, Any]) -> list[str]:
    out = []
    for f, pair in changes.items():
        if isinstance(pair, list | tuple) and len(pair) == 2:
            out.append(f"{FIELDS.get(f, f)}: {value_text(f, pair[0])} → {value_text(f, pair[1])}")
    return out


def _occurrence(d: Mapping[str, Any]) -> list[str]:
    parts = []
    if d.get("from") and d.get("to") and not isinstance(d["from"], Mapping):
        parts.append(f"situação: {status_name(d['from'])} → {status_name(d['to'])}")
    if isinstance(d.get("from"), Mapping) and isinstance(d.get("to"), Mapping):  # a kind's classification
        for f in ("article", "severity"):
            old, new = d["from"].get(f), d["to"].get(f)
            if old != new:
                parts.append(f"{FIELDS[f]}: {value_text(f, old)} → {value_text(f, new)}")
    if d.get("penalty"):
        parts.append(f"penalidade: {PENALTIES.get(str(d['penalty']), str(d['penalty']))}")
    if d.get("fine_upfm") is not None:
        parts.append(f"multa de {str(d['fine_upfm']).replace('.', ',')} UPFM")
    if d.get("fine_brl") is not None:
        parts.append(f"R$ {_money(d['fine_brl'])}")
    if d.get("kind"):
        parts.append(f"tipo: {kind_name(d['kind'])}")
    if d.get("severity"):
        parts.append(f"gravidade: {severity_name(d['severity'])}")
    return parts


def _money(value: Any) -> str:
    whole, _, cents = f"{float(value):.2f}".partition(".")
    return f"{int(whole):,}".replace(",", ".") + "," + cents


GENERIC: Mapping[str, Callable[[Any], str]] = {
    "role": lambda v: f"perfil: {ROLES.get(str(v), str(v))}",
    "reason": lambda v: f"motivo: {REASONS.get(str(v), str(v))}",
    "via": lambda v: "pela linha de comando" if v == "cli" else f"via {v}",
    "source": lambda v: "origem: " + ("arquivo enviado" if str(v).startswith("multipart") else "JSON"),
    "at": lambda v: f"a partir de {local_time(v)}",
    "month": lambda v: f"mês: {month_name(v)}",
    "sha256": lambda v: f"SHA-256 {v}",
    "date": lambda v: f"dia {local_time(v)}",
    "run_no": lambda v: f"corrida nº {v}",
    "stops": lambda v: f"{v} pontos",
    "points": lambda v: f"{v} pontos no traçado",
    "vehicle_id": lambda v: f"veículo nº {v}",
    "route_id": lambda v: f"rota nº {v}",
    "driver_id": lambda v: f"condutor nº {v}",
    "start": lambda v: f"início {local_time(v)}",
    "end": lambda v: f"fim {local_time(v)}",
    "expires_at": lambda v: f"vale até {local_time(v)}",
    "bytes": lambda v: f"{v} bytes",
    "valid": lambda v: "confere com os selos" if v else "não confere com os selos",
    "days": lambda v: f"{v} dias" if isinstance(v, int) else f"{len(v)} dias",
    "no_school_days": lambda v: f"{len(v)} dias sem aula marcados",
    "extra_school_days": lambda v: f"{len(v)} dias letivos extras",
    "id": lambda v: f"registro nº {v}",
}


def detail_text(code: str, detail: Any, plates: Mapping[int, str] | None = None) -> str:
    """The entry's detail as one sentence of parts; a null value is left out, never written "null"."""
    if not isinstance(detail, Mapping) or not detail:
        return ""
    if code.startswith("export."):
        return "; ".join(_export(detail, plates))
    if code.startswith("occurrence."):
        return "; ".join(_occurrence(detail))
    parts: list[str] = []
    if isinstance(detail.get("changes"), Mapping) and detail["changes"]:
        parts.extend(_changes(detail["changes"]))
    for k, v in detail.items():
        if v is None or k == "changes":
            continue
        if k == "fields":  # the fields whose values the log does not keep (personal data, the password): names only
            kept = detail.get("changes")
            changed: Mapping[str, Any] = kept if isinstance(kept, Mapping) else {}
            others = [str(f) for f in v if f not in changed] if isinstance(v, list) else []
            if others:
                parts.append("campos alterados: " + ", ".join(FIELDS.get(f, f) for f in others))
            continue
        if k in GENERIC:
            parts.append(GENERIC[k](v))
        elif isinstance(v, list | dict):
            continue  # structured values have no words here; the JSON answer keeps them
        else:
            parts.append(f"{FIELDS.get(k, k)}: {v}")
    return "; ".join(parts)


def describe(entry: Mapping[str, Any], plates: Mapping[int, str] | None = None) -> dict[str, str]:
    """The words of one entry (a row of audit.queries.LIST): when, what, on what, the details."""
    code = str(entry.get("action") or "")
    return {
        "when": local_time(entry.get("at")),
        "what": action_text(code),
        "on": target_text(entry.get("target"), plates),
        "details": detail_text(code, entry.get("detail"), plates),
        "role_name": ROLES.get(str(entry.get("role")), "") if entry.get("role") else "",
    }


def vehicle_ids(entries: Sequence[Mapping[str, Any]]) -> set[int]:
    """The vehicles an export or a target names, to fetch their plates in one query."""
    out: set[int] = set()
    for e in entries:
        d = e.get("detail")
        if isinstance(d, Mapping) and isinstance(d.get("vehicles"), list):
            out.update(int(i) for i in d["vehicles"][:10] if isinstance(i, int))
        t = str(e.get("target") or "")
        if t.startswith("vehicle:") and t[8:].isdigit():
            out.add(int(t[8:]))
    return out
