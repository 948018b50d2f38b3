"""The measurement API: the boletim de medição, justifications of runs, closing and reopening a month."""

from __future__ import annotations

import re
from calendar import monthrange
from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any, Literal

import asyncpg
from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response, StreamingResponse
from pydantic import AfterValidator, Field

from telemetria import __version__
from telemetria.audit.log import record
from telemetria.auth.guard import client_ip, require
from telemetria.auth.roles import Perm, Principal
from telemetria.contracts.calendar import FIRST_YEAR, LAST_YEAR
from telemetria.db import Conn as DbConn
from telemetria.deps import Conn
from telemetria.http import FieldError, json_response
from telemetria.ids import Id, IdPath, IdQuery
from telemetria.jobs import jobs_of, streamed, user_key
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement import document, sheet, signed, store
from telemetria.measurement import queries as q
from telemetria.measurement.document import Computed, ContractHead
from telemetria.registry.schemas import Name, Strict
from telemetria.reports.output import csv, files
from telemetria.reports.output.document import Document, Table
from telemetria.reports.store import asof

router = APIRouter(prefix="/api/v1", tags=["measurement"])
READ = Depends(require(Perm.READ))
WRITE = Depends(require(Perm.WRITE_REGISTRY))  # the Secretaria's roles that manage contracts
REOPEN = Depends(require(Perm.REOPEN_MEASUREMENT))
MAX_SPAN = timedelta(days=366)
MonthPath = Annotated[str, Path(pattern=r"^\d{4}-\d{2}$", description="yyyy-mm, e.g. 2026-03")]


def _nonblank(v: str) -> str:
    if not v:
        raise ValueError("diga o motivo: ele não pode ficar em branco")
    return v


def refusal(field: str, sentence: str, status: int = 400) -> FieldError:
    """A refusal of the measurement API: `detail` is "field: sentence", the sentence in Portuguese for the
    servidor naming what is wrong, also answered as `message` (what pages show); `field` and the status are
    for programs (issue 33: some refusals were still in English while the rest of the product answers in
    Portuguese). The message opens with a capital: pages put it after a sentence of their own."""
    return FieldError(f"{field}: {sentence}", field, status, people=sentence[:1].upper() + sentence[1:])


def _br(d: date) -> str:
    """A day as the servidor writes it: 10/03/2026."""
    return f"{d:%d/%m/%Y}"


def _mm(text: str) -> str:
    """A month asked as yyyy-mm, as the servidor writes it: 03/2026."""
    return f"{text[5:]}/{text[:4]}"


Reason = Annotated[Name, Field(max_length=500), AfterValidator(_nonblank)]
# A justification changes what is paid: its reason is one a fiscal can check later ("pneu furado na RO-133"),
# not "ok" (issue 36: a 2-character justification was accepted).
MIN_JUSTIFICATION_CHARS = 10
JustificationReason = Annotated[Name, Field(min_length=MIN_JUSTIFICATION_CHARS, max_length=500),
                                AfterValidator(_nonblank)]  # fmt: skip


class JustificationIn(Strict):
    route_id: Id
    day: date = Field(alias="date", description="the local day of the run, e.g. 2026-03-10")
    reason: JustificationReason
    run_no: int | None = Field(default=None, ge=1, le=50, description="which run of the day (default: all)")
    kind: Literal["nao_realizada", "feito_fora_do_horario"] = Field(
        default="nao_realizada",
        description="nao_realizada (the run was not made: the default) or feito_fora_do_horario (made on its own "
        "day outside its window, from made_at: paid as made only when the GPS shows it; needs run_no and made_at)",
    )
    made_at: time | None = Field(default=None, description="feito_fora_do_horario: local time it started, e.g. 14:10")


class CorrectionIn(Strict):
    reason: JustificationReason


class ReopenIn(Strict):
    reason: Reason


class CloseIn(Strict):
    confirm_early: bool = Field(
        default=False,
        description="close before the grace period after the month's end (setting measurement_close_grace_days)",
    )


def local_today() -> date:
    return datetime.now(LOCAL_TZ).date()


def _day(text: str, name: str) -> date:
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", text.strip()):
        raise refusal(name, f"«{text}» não é uma data (use AAAA-MM-DD, por exemplo 2026-03-01): o boletim conta "
                            "dias inteiros")  # fmt: skip
    try:
        return date.fromisoformat(text.strip())
    except ValueError:
        raise refusal(name, f"«{text}» não é uma data que exista (AAAA-MM-DD)") from None


def _month(text: str) -> tuple[date, date]:
    """A month's first and last day; a month outside the years a school year may take is refused (it could never
    have been measured, and 9999-12 has no next month to count from)."""
    try:
        first = date.fromisoformat(text + "-01")
    except ValueError:
        raise refusal("month", f"«{text}» não é um mês (use AAAA-MM, por exemplo 2026-03)") from None
    if not FIRST_YEAR <= first.year <= LAST_YEAR:
        raise refusal("month", f"o mês {_mm(text)} está fora dos anos medidos ({FIRST_YEAR} a {LAST_YEAR})")
    return first, first.replace(day=monthrange(first.year, first.month)[1])


def _clip(head: ContractHead, first: date, last: date) -> tuple[date, date] | None:
    lo, hi = max(first, head.valid_from), min(last, head.valid_to)
    return (lo, hi) if lo <= hi else None


async def _one(conn: DbConn, who: Principal, contract_id: int) -> ContractHead:
    found = await store.contracts(conn, who.scope, contract_id)
    if not found:
        raise refusal("contract_id", f"contrato nº {contract_id} não encontrado (ou fora do que seu perfil pode ver)",
                      404)  # fmt: skip
    return found[0]


def boletim_document(computed: list[Computed], first: date, last: date, who: Principal) -> Document:
    """The boletim as a Document (XLSX, PDF): the CSV's one table, the query naming the period and contracts."""
    numbers = [c.head.number for c in computed]
    query = [
        ("Período", f"{first:%d/%m/%Y} a {last:%d/%m/%Y}"),
        ("Fuso horário", LOCAL_TZ.key),
        (f"Contratos ({len(numbers)})", ", ".join(numbers) or "nenhum"),
        ("Versão", f"Telemetria {__version__}"),
    ]
    stem = csv.export_filename("boletim_de_medicao", first, last).removesuffix(".csv")
    return Document(
        kind="measurement", title="Boletim de medição", filename=stem, tz=LOCAL_TZ, query=query,
        generated_by=files.who_line(who), generated_at=datetime.now(UTC),
        tables=[Table("Boletim de medição", sheet.COLUMNS, list(sheet.rows(computed)))],
    )  # fmt: skip


@router.get("/reports/measurement")
async def measurement_report(
    request: Request,
    start: str = Query(..., alias="from", max_length=40, description="first day, e.g. 2026-03-01"),
    end: str = Query(..., alias="to", max_length=40, description="last day included, e.g. 2026-03-31"),
    contract_id: IdQuery = None, format: Literal["json", "csv", "xlsx", "pdf"] = Query("json"), who: Principal = READ,
    *, conn: Conn,
) -> Response:  # fmt: skip
    """The boletim de medição per contract: runs due, made, partial, not made, justified; km and R$ to pay."""
    first, last = _day(start, "from"), _day(end, "to")
    if last < first:
        raise refusal("to", f"o fim ({_br(last)}) é antes do início ({_br(first)})")
    if last - first >= MAX_SPAN:
        raise refusal("to", f"um boletim cobre no máximo {MAX_SPAN.days} dias: escolha um período menor")
    if format != "json" and not who.can(Perm.EXPORT):
        raise refusal("format", f"o perfil «{who.role.value}» não pode exportar arquivos", 403)
    if contract_id is not None:
        head = await _one(conn, who, contract_id)
        if first < head.valid_from:
            raise refusal("from", f"{_br(first)} é antes da vigência do contrato {head.number}, que começa em "
                                  f"{_br(head.valid_from)}")  # fmt: skip
        if last > head.valid_to:
            raise refusal("to", f"{_br(last)} é depois da vigência do contrato {head.number}, que termina em "
                                f"{_br(head.valid_to)}")  # fmt: skip
        spans = [(head, first, last)]
    else:
        spans = [(h, *c) for h in await store.contracts(conn, who.scope, None) if (c := _clip(h, first, last))]
    computed = [await store.compute(conn, h, lo, hi) for h, lo, hi in spans]
    if format == "json":
        out = store.answer(computed, first, last, LOCAL_TZ)
        closed = {(c["contract_id"], m["month"]) for c in out["contracts"] for m in c["months"] if m["closed"]}
        await store.name_justifications(conn, out["runs"], first, last, closed)
        return json_response(out)
    await record(conn, "export.measurement", who, client_ip(request), None,
                 {"format": format, "from": first.isoformat(), "to": last.isoformat(),
                  "contracts": [h.id for h, _, _ in spans][:100]})  # fmt: skip
    if format != "csv":
        # The PDF is the boletim as a Secretaria signs it (measurement/signed.py); the XLSX holds the CSV's table.
        doc = (signed.document(computed, first, last, files.who_line(who)) if format == "pdf"
               else boletim_document(computed, first, last, who))  # fmt: skip
        doc = replace(doc, **files.letterhead(request.app.state.settings))
        return await streamed(request, user_key(who.user_id), lambda: files.respond(doc, format, jobs_of(request)))
    body = csv.csv_chunks(sheet.COLUMNS, sheet.rows(computed), LOCAL_TZ)
    name = csv.export_filename("boletim_de_medicao", first, last)
    headers = {"Content-Disposition": csv.content_disposition(name)}
    return StreamingResponse(body, media_type=csv.CSV_MEDIA_TYPE, headers=headers)


@router.post("/run-justifications", status_code=201)
async def justify_run(body: JustificationIn, request: Request, who: Principal = WRITE, *, conn: Conn) -> Response:
    """Justify a route's run not made (or partial) on a day: the reason, who, when; audited."""
    late = body.kind == "feito_fora_do_horario"
    if late and body.run_no is None:
        raise refusal("run_no", "diga qual corrida foi realizada fora do horário (feito_fora_do_horario pede run_no)")
    if late != (body.made_at is not None):
        raise refusal("made_at", "a hora local em que a corrida foi realizada (HH:MM) vai com feito_fora_do_horario, e "
                                 "só com ele")  # fmt: skip
    route = await conn.fetchrow(q.ROUTE, body.route_id)
    if route is None:
        raise refusal("route_id", f"rota nº {body.route_id} não encontrada", 404)
    if body.day > local_today():
        raise refusal("date", f"o dia {_br(body.day)} ainda não chegou")
    then = (await asof.routes_on(conn, [body.route_id], body.day)).get(body.route_id)  # its contract that day
    contract_id = then.contract_id if then is not None else route["contract_id"]
    if contract_id is None:
        raise refusal("route_id", f"a rota {route['code']} não tinha contrato em {_br(body.day)}: suas corridas "
                                  "não são medidas")  # fmt: skip
    head = await _one(conn, who, contract_id)
    if not head.covers(body.day, body.day):
        raise refusal("date", f"nenhuma corrida é devida em {_br(body.day)}: fora da vigência do contrato "
                              f"{head.number}")  # fmt: skip
    async with conn.transaction():
        if await conn.fetch(q.CLOSED, [head.id], body.day, body.day):
            raise refusal("date", f"o mês {body.day:%m/%Y} do contrato {head.number} está fechado: reabra o mês "
                                  "para justificar", 409)  # fmt: skip
        got = await store.compute(conn, head, body.day, body.day, frozen=False, route_ids=[body.route_id],
                                  where="date")  # fmt: skip
        runs = [ln for ln in got.lines if ln.route_id == body.route_id]
        if not runs:
            raise refusal("date", f"a rota {route['code']} não tem corrida devida em {_br(body.day)} (não é dia "
                                  "letivo, ou a rota não estava atribuída nesse dia)")  # fmt: skip
        if body.run_no is not None:
            runs = [ln for ln in runs if ln.run_no == body.run_no]
            if not runs:
                raise refusal("run_no", f"a rota {route['code']} não tem a corrida {body.run_no} em {_br(body.day)}")
        if any(ln.status == "pending" for ln in runs):
            field = "run_no" if body.run_no is not None else "date"
            raise refusal(field, f"a corrida da rota {route['code']} em {_br(body.day)} ainda não terminou: "
                                 "justifique depois que a janela dela fechar")  # fmt: skip
        if all(ln.status == "made" for ln in runs):
            field = "run_no" if body.run_no is not None else "date"
            raise refusal(field, f"a corrida da rota {route['code']} em {_br(body.day)} foi realizada: não há o que "
                                 "justificar")  # fmt: skip
        justified = refusal("date", f"a corrida da rota {route['code']} em {_br(body.day)} já está justificada", 409)
        if await conn.fetchval(q.JUSTIFIED, body.route_id, body.day, body.run_no):
            raise justified
        try:
            row = await conn.fetchrow(q.INSERT_JUSTIFICATION, body.route_id, body.day, body.run_no, body.reason,
                                      who.username, body.kind, body.made_at)  # fmt: skip
        except asyncpg.UniqueViolationError:  # a concurrent request justified it first
            raise justified from None
        if late and body.made_at is not None:
            # judged as the boletim will judge it with this justification stored (rolled back when refused)
            again = await store.compute(conn, head, body.day, body.day, frozen=False, route_ids=[body.route_id],
                                        where="date")  # fmt: skip
            [ln] = [x for x in again.lines if x.route_id == body.route_id and x.run_no == body.run_no]
            if ln.justification_kind != "feito_fora_do_horario":
                pct = str(ln.coverage_pct).replace(".", ",")
                raise refusal("made_at",
                    f"o GPS não mostra a corrida {body.run_no} da rota {route['code']} realizada em {_br(body.day)} a "
                    f"partir das {body.made_at:%H:%M}: os veículos atribuídos cobriram {pct} % dela na janela, e "
                    "não o mínimo do contrato para realizada na janela deslocada para essa hora (ou só num trajeto "
                    "já contado como outra corrida da rota): registre-a como não realizada (nao_realizada) ou "
                    "informe a hora em que foi realizada")  # fmt: skip
        await record(conn, "registry.run_justification.create", who, client_ip(request), f"route:{body.route_id}",
                     {"date": body.day.isoformat(), "run_no": body.run_no, "id": row["id"], "kind": body.kind,
                      "made_at": body.made_at.strftime("%H:%M") if body.made_at else None,
                      "reason": body.reason})  # fmt: skip
    out = {k: v for k, v in dict(row).items() if k not in ("day", "made_at")}
    made_at = row["made_at"].strftime("%H:%M") if row["made_at"] else None
    return json_response({**out, "date": row["day"], "made_at": made_at}, 201)


def _justification_json(row: Any, status: int) -> Response:
    out = {k: v for k, v in dict(row).items() if k not in ("day", "made_at", "code", "contract_id")}
    made_at = row["made_at"].strftime("%H:%M") if row["made_at"] else None
    return json_response({**out, "date": row["day"], "made_at": made_at}, status)


@router.patch("/run-justifications/{justification_id}")
async def correct_justification(
    justification_id: IdPath, body: CorrectionIn, request: Request, who: Principal = WRITE, *, conn: Conn
) -> Response:
    """Correct a justification's reason while its month is open (issue 36): the old reason stays in the audit log.
    What it justifies (route, day, run, kind, time) does not change: the boletim's status of the run stays as it
    was judged."""
    async with conn.transaction():
        row = await conn.fetchrow(q.JUSTIFICATION, justification_id)
        if row is None:
            raise refusal("justification_id", f"não há justificativa nº {justification_id}", 404)
        then = (await asof.routes_on(conn, [row["route_id"]], row["day"])).get(row["route_id"])
        contract_id = then.contract_id if then is not None else row["contract_id"]
        if contract_id is not None:
            head = await _one(conn, who, contract_id)
            if await conn.fetch(q.CLOSED, [head.id], row["day"], row["day"]):
                raise refusal("date", f"o mês {row['day']:%m/%Y} do contrato {head.number} está fechado: reabra o "
                                      "mês para corrigir a justificativa", 409)  # fmt: skip
        if body.reason == row["reason"]:
            raise refusal("reason", "é o mesmo motivo já registrado: nada a corrigir")
        new = await conn.fetchrow(q.CORRECT_JUSTIFICATION, justification_id, body.reason)
        await record(conn, "registry.run_justification.update", who, client_ip(request),
                     f"route:{row['route_id']}",
                     {"id": justification_id, "date": row["day"].isoformat(), "run_no": row["run_no"],
                      "changes": {"reason": [row["reason"], body.reason]}})  # fmt: skip
    return _justification_json(new, 200)


def _closing_json(row: Any) -> dict[str, Any]:
    out = {k: v for k, v in dict(row).items() if k not in ("month",)}
    return {**out, "month": f"{row['month']:%Y-%m}"}


@router.post("/measurements/{contract_id}/{month}/close", status_code=201)
async def close_month(
    contract_id: IdPath, month: MonthPath, request: Request, body: CloseIn | None = None, who: Principal = WRITE,
    *, conn: Conn,
) -> Response:  # fmt: skip
    """Close a month: its boletim is frozen (stored with the SHA-256 of its content), then served as is.

    Before `measurement_close_grace_days` days after the month's end, only with `{"confirm_early": true}`: a
    tracker out of signal keeps its fixes and sends them later (Lei 3.588/2023 Art. 15 §2), so the last days may
    still be incomplete.
    """
    head = await _one(conn, who, contract_id)
    first, last = _month(month)
    today = local_today()
    if last >= today:
        raise refusal("month", f"o mês {_mm(month)} ainda não terminou: só se fecha um mês encerrado", 409)
    grace = request.app.state.settings.measurement_close_grace_days
    if today <= last + timedelta(days=grace) and not (body and body.confirm_early):
        ago = (today - last).days
        raise refusal("confirm_early",
            f"o mês {_mm(month)} terminou há {ago} dia{'s' if ago > 1 else ''}; posições dos últimos dias guardadas "
            f"por um rastreador sem sinal ainda podem chegar até {grace} dias depois do fim (Lei 3.588/2023 Art. 15 "
            '§ 2º): confirme o fechamento antecipado ({"confirm_early": true}) para fechá-lo agora', 409)  # fmt: skip
    clipped = _clip(head, first, last)
    if clipped is None:
        raise refusal("month", f"o mês {_mm(month)} está fora da vigência do contrato {head.number}")
    async with conn.transaction():
        got = await store.compute(conn, head, *clipped, frozen=False, where="month")
        doc: dict[str, Any] = {"contract": document.contract_json(got, LOCAL_TZ),
               "runs": [document.line_json(ln, head.id, LOCAL_TZ) for ln in got.lines]}  # fmt: skip
        content = document.canonical(doc)
        sha = document.digest(content)
        row = await conn.fetchrow(q.CLOSE, head.id, first, content, sha, who.username)
        if row is None:
            raise refusal("month", f"o mês {_mm(month)} do contrato {head.number} já está fechado", 409)
        await record(conn, "measurement.close", who, client_ip(request), f"contract:{head.id}",
                     {"month": month, "sha256": sha, "early": today <= last + timedelta(days=grace)})  # fmt: skip
    totals = doc["contract"]
    return json_response({**_closing_json(row), "payable_km": totals["payable_km"], "amount": totals["amount"],
                          "runs": len(got.lines)}, 201)  # fmt: skip


@router.post("/measurements/{contract_id}/{month}/reopen")
async def reopen_month(
    contract_id: IdPath, month: MonthPath, body: ReopenIn, request: Request, who: Principal = REOPEN, *, conn: Conn
) -> Response:
    """Reopen a closed month (admin, with a reason): its boletim is computed again; the closing stays on record."""
    head = await _one(conn, who, contract_id)
    first, _ = _month(month)
    async with conn.transaction():
        row = await conn.fetchrow(q.REOPEN, head.id, first, who.username, body.reason)
        if row is None:
            raise refusal("month", f"o mês {_mm(month)} do contrato {head.number} não está fechado", 409)
        await record(conn, "measurement.reopen", who, client_ip(request), f"contract:{head.id}",
                     {"month": month, "sha256": row["sha256"], "reason": body.reason})  # fmt: skip
    return json_response(_closing_json(row))
