"""The occurrences API (`/api/v1/occurrences`, `/api/v1/occurrence-kinds`): the list and detail, and the
administrative process's transitions (process.py), each one a history row and an audit entry.

Who may: monitor reviews, notifies and closes; admin (or a monitor flagged `designated`) decides; auditor reads
everything; a contractor sees its own occurrences from `notified` on and writes their defences and appeals; the
superior authority (admin) decides appeals, and the servidor who decided may reconsider within 5 business days
(Lei 14.133/2021 Art. 166). A contractor who
tries a servidor's action on an occurrence it sees gets 409 naming the state and its role (the issue's contract);
on one it does not see, 404.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi import Path as PathParam
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response, StreamingResponse
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.datastructures import UploadFile

from telemetria.auth.guard import authenticate, client_ip, require
from telemetria.auth.roles import Perm, Principal, Role
from telemetria.auth.store import is_designated, is_superior_authority
from telemetria.contracts.money import numbers
from telemetria.deps import Conn
from telemetria.http import FieldError, HttpError, json_response, read_body
from telemetria.ids import IdPath, IdQuery
from telemetria.jobs import jobs_of, streamed, user_key
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.documents import pdfmap, termo, wording
from telemetria.occurrences.listing import CSV_COLUMNS, filters
from telemetria.occurrences.model import KIND_NAMES, Kind, Severity
from telemetria.occurrences.process import deadline, store, upfm
from telemetria.paging import Page, page
from telemetria.reports.output import files
from telemetria.reports.output.csv import CSV_MEDIA_TYPE, content_disposition, csv_chunks, export_filename
from telemetria.reports.output.document import Document, Table

router = APIRouter(prefix="/api/v1", tags=["occurrences"])
READ = Depends(require(Perm.READ))
MAX_TEXT = 20_000  # characters of a reason, defence or motivation
MAX_FILES = 10
MONEY = {"fine_upfm": 2, "fine_brl": 2}
SAFE_TYPES = frozenset({"application/pdf", "image/png", "image/jpeg", "text/plain"})  # served as themselves


def process_guard(perm: Perm, *, appeal: bool = False) -> Callable[[Request], Awaitable[Principal]]:
    """Like auth.guard.require, but a contractor passes (it then learns 404 or 409 naming the state and its role),
    and for decisions so does a monitor flagged `designated` (Art. 42: the designated servidor decides); for the
    appeal's judgement (`appeal`), also a monitor flagged `superior_authority` (Lei 14.133/2021 Art. 166)."""

    async def dependency(request: Request) -> Principal:
        who = await authenticate(request)
        if who.can(perm) or who.role is Role.CONTRACTOR:
            return who
        if perm is Perm.DECIDE_OCCURRENCES and who.role is Role.MONITOR:
            async with request.app.state.pool.acquire() as conn:
                if await is_designated(conn, who.user_id):
                    return who
                if appeal and await is_superior_authority(conn, who.user_id):
                    return who
        raise HttpError(403, f"role {who.role.value!r} may not do this (needs {perm.value!r})")

    dependency.perm = perm  # type: ignore[attr-defined]  # read by the access-matrix test
    return dependency


REVIEW = Depends(process_guard(Perm.REVIEW_OCCURRENCES))
DECIDE = Depends(process_guard(Perm.DECIDE_OCCURRENCES))
JUDGE_APPEAL = Depends(process_guard(Perm.DECIDE_OCCURRENCES, appeal=True))
DEFEND = Depends(require(Perm.DEFEND_OCCURRENCES))
CLASSIFY = Depends(require(Perm.CLASSIFY_OCCURRENCES))

Text = Annotated[str, Field(min_length=1, max_length=MAX_TEXT)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ReviewIn(Strict):
    decision: Literal["confirm", "dismiss"]
    reason: str | None = Field(default=None, max_length=MAX_TEXT, description="required to dismiss")
    kind: Kind | None = Field(default=None, description="confirm with the classification of another kind")
    article: str | None = Field(
        default=None, min_length=1, max_length=200, pattern=r"\S", description="reclassify: the article"
    )
    severity: Severity | None = Field(default=None, description="reclassify: the severity")
    justification: Literal["emergency_substitution", "emergency_detour"] | None = Field(
        default=None,
        description="dismiss: Art. 26 sole paragraph: an emergency substitution of a vehicle, or a detour, that "
        "needs no prior authorization; closes the finding",
    )


class DefenseIn(Strict):
    text: Text
    final: bool = Field(default=False, description="the defence is final: the decision need not wait for the term")


class DecisionIn(Strict):
    penalty: Literal["none", "warning", "fine", "warning_and_fine"]
    motivation: Text


class AppealIn(Strict):
    text: Text


class UpfmIn(Strict):
    brl: Decimal = Field(gt=0, lt=100000, max_digits=16, decimal_places=4, description="R$ of one UPFM that year")


class AppealDecisionIn(Strict):
    outcome: Literal["upheld", "reformed", "annulled"]
    penalty: Literal["none", "warning", "fine", "warning_and_fine"] | None = Field(
        default=None, description="the new penalty (reformed only)"
    )
    motivation: Text


class CloseIn(Strict):
    text: str | None = Field(default=None, max_length=MAX_TEXT)


class KindIn(Strict):
    duty: str | None = Field(default=None, min_length=1, max_length=200, pattern=r"\S", description="e.g. Art. 26")
    article: str | None = Field(
        max_length=200, description="an inciso of Art. 36–39 (e.g. 'Art. 38, IX'), or null: a finding only"
    )
    severity: Severity | None = Field(default=None, description="optional: must be the article's")


def _now() -> datetime:
    return datetime.now(UTC)


def _answer(row: dict[str, Any], status: int = 200) -> Response:
    return json_response(numbers(row, MONEY), status)


async def _upfm(conn: Any, request: Request) -> dict[int, Decimal]:
    """The UPFM's R$ per year as the registry holds them (the setting only seeds missing years: upfm.py)."""
    return await upfm.values(conn, request.app.state.settings.upfm_values)


async def _detail(conn: Any, occurrence_id: int, who: Principal, request: Request) -> Response:
    return _answer(await store.detail(conn, occurrence_id, who, await _upfm(conn, request)))


def list_document(f: store.Filters, items: list[dict[str, Any]], who: Principal) -> Document:
    """The occurrence list as a Document (XLSX, PDF): the CSV's table, the query naming the filters."""
    last = f.end - timedelta(seconds=1)
    query = [("Período", f"{f.start.astimezone(LOCAL_TZ):%d/%m/%Y %H:%M:%S} a "
                         f"{last.astimezone(LOCAL_TZ):%d/%m/%Y %H:%M:%S}"), ("Fuso horário", LOCAL_TZ.key)]  # fmt: skip
    if f.vehicle_id is not None:
        query.append(("Veículo (id)", str(f.vehicle_id)))
    if f.contractor_id is not None:
        query.append(("Contratada (id)", str(f.contractor_id)))
    if f.kinds:
        query.append(("Tipos", ", ".join(KIND_NAMES[Kind(k)] for k in f.kinds)))
    if f.statuses:
        query.append(("Situações", ", ".join(wording.status_name(x) for x in f.statuses)))
    query.append(("Ocorrências", str(len(items))))
    stem = export_filename("ocorrencias", f.start.astimezone(LOCAL_TZ).date()).removesuffix(".csv")
    return Document(
        kind="occurrences", title="Ocorrências", filename=stem, tz=LOCAL_TZ, query=query,
        generated_by=files.who_line(who), generated_at=_now(), tables=[Table("Ocorrências", CSV_COLUMNS, items)],
    )  # fmt: skip


@router.get("/occurrences")
async def list_occurrences(
    request: Request,
    from_: str | None = Query(None, alias="from", description="first day (local) or instant; default today"),
    to: str | None = Query(None, description="last day, minute or second included; default: the same day as from"),
    vehicle_id: IdQuery = None,
    contractor_id: IdQuery = None,
    kind: list[str] | None = Query(None, description="repeated or comma-separated"),
    status: list[str] | None = Query(None, description="repeated or comma-separated"),
    format: Literal["json", "csv", "xlsx", "pdf"] = Query("json"),
    pg: Page = Depends(page),
    who: Principal = READ,
    *,
    conn: Conn,
) -> Response:
    """Occurrences whose start lies in the period, by start; a contractor sees its own, from notified on."""
    f = filters(from_, to, vehicle_id, contractor_id, kind, status)
    if format != "json":
        if not who.can(Perm.EXPORT):
            raise FieldError(f"format: role {who.role.value!r} may not export files", "format", 403)
        items, _ = await store.list_items(conn, f, who, Page(1_000_000, 0))
        await store.record_export(conn, who, client_ip(request), len(items), format)
        if format != "csv":
            doc = list_document(f, items, who)
            doc.drawing = pdfmap.drawing(items)  # the PDF's map: each occurrence where it happened
            doc = replace(doc, **files.letterhead(request.app.state.settings))
            return await streamed(request, user_key(who.user_id), lambda: files.respond(doc, format, jobs_of(request)))
        name = export_filename("ocorrencias", f.start.astimezone(LOCAL_TZ).date())
        return StreamingResponse(
            csv_chunks(CSV_COLUMNS, items, LOCAL_TZ),
            media_type=CSV_MEDIA_TYPE,
            headers={"Content-Disposition": content_disposition(name)},
        )
    items, total = await store.list_items(conn, f, who, pg)
    return json_response(pg.answer(items, total))


@router.get("/occurrences/{occurrence_id}")
async def get_occurrence(occurrence_id: IdPath, request: Request, who: Principal = READ, *, conn: Conn) -> Response:
    """The occurrence with its classification, process fields, history, attachments and evidence_sha256."""
    return await _detail(conn, occurrence_id, who, request)


@router.post("/occurrences/{occurrence_id}/review")
async def review(
    occurrence_id: IdPath, body: ReviewIn, request: Request, who: Principal = REVIEW, *, conn: Conn
) -> Response:
    """confirm (optionally with another kind's classification, or article/severity; the evidence is frozen) or
    dismiss (with the reason)."""
    article, severity = body.article, body.severity
    finding_only = False
    if body.kind is not None:
        cls = next((k for k in await store.kinds(conn) if k["kind"] == body.kind.value), None)
        if cls is None:
            raise FieldError(f"kind: {body.kind.value!r} has no classification", "kind", 422)
        if cls["article"] is None and article is None:
            finding_only, severity = True, None  # that kind is a finding only: no infraction
        else:
            article = article or cls["article"]
            severity = severity or (Severity(cls["severity"]) if cls["severity"] else None)
    if body.justification is not None and body.decision != "dismiss":
        raise FieldError("justification: an Art. 26 justification dismisses the finding", "justification", 422)
    await store.review(
        conn, occurrence_id, who, client_ip(request), confirm=body.decision == "confirm", reason=body.reason,
        article=article, severity=severity, now=_now(), finding_only=finding_only, justification=body.justification,
    )  # fmt: skip
    return await _detail(conn, occurrence_id, who, request)


@router.post("/occurrences/{occurrence_id}/notify")
async def notify(occurrence_id: IdPath, request: Request, who: Principal = REVIEW, *, conn: Conn) -> Response:
    """Issue the notificação para defesa prévia: notified_at now, defense_due after `defense_days` business days."""
    days = request.app.state.settings.defense_days  # Lei 14.133/2021 Art. 157: 15 business days by default
    await store.notify(conn, occurrence_id, who, client_ip(request), now=_now(), days=days)
    return await _detail(conn, occurrence_id, who, request)


async def _pdf(request: Request, occurrence_id: int, who: Principal, conn: Any, addressee: termo.Addressee) -> Response:
    row, ev = await store.evidence_of(conn, occurrence_id, who)
    settings = request.app.state.settings
    now = _now()
    issued_at = row["notified_at"] or now
    due = row["defense_due"] or deadline.defense_due(
        issued_at, settings.defense_days, await store.business_calendar(conn)
    )
    arms_path = settings.coat_of_arms_path
    coat_of_arms = await asyncio.to_thread(Path(arms_path).read_bytes) if arms_path else None
    render = partial(
        termo.render, row, ev, municipality=settings.municipality_name, issued_at=issued_at, deadline=due,
        coat_of_arms=coat_of_arms, addressee=addressee,
    )  # fmt: skip
    # reportlab is CPU work: in a thread, in a turn of the heavy-job queue (issue 33: 429 when the user has one)
    pdf: bytes = await jobs_of(request).run_thread(user_key(who.user_id), render)
    name = f"{addressee.value}_ocorrencia_{occurrence_id}.pdf"
    return Response(pdf, media_type="application/pdf", headers={"Content-Disposition": f'inline; filename="{name}"'})


@router.get("/occurrences/{occurrence_id}/termo.pdf")
async def termo_pdf(occurrence_id: IdPath, request: Request, who: Principal = READ, *, conn: Conn) -> Response:
    """The Termo de Comunicação to the Secretaria Municipal de Educação (Art. 34), from confirmation on: the
    finding, its evidence and the duty it breaches, for the Secretaria's measures. Internal: a contractor gets its
    notificação instead."""
    if who.role is Role.CONTRACTOR:
        raise HttpError(403, "o Termo de Comunicação é interno (à Secretaria, Art. 34); a contratada recebe a "
                        f"notificação: /api/v1/occurrences/{occurrence_id}/notificacao.pdf")  # fmt: skip
    return await _pdf(request, occurrence_id, who, conn, termo.Addressee.TERMO)


@router.get("/occurrences/{occurrence_id}/notificacao.pdf")
async def notificacao_pdf(occurrence_id: IdPath, request: Request, who: Principal = READ, *, conn: Conn) -> Response:
    """The notificação para defesa prévia to the contractor: the infraction, its evidence, the penalty it may bring
    and the defence term in business days (Lei 14.133/2021 Art. 157); before notification, a preview."""
    return await _pdf(request, occurrence_id, who, conn, termo.Addressee.NOTIFICACAO)


DEFENSE_DOC: dict[str, Any] = {
    "requestBody": {
        "required": True,
        "content": {
            "application/json": {"schema": DefenseIn.model_json_schema()},
            "multipart/form-data": {
                "schema": {
                    "type": "object",
                    "required": ["text"],
                    "properties": {
                        "text": {"type": "string", "minLength": 1, "maxLength": MAX_TEXT},
                        "final": {"type": "boolean"},
                        "files": {"type": "array", "items": {"type": "string", "format": "binary"}},
                    },
                }
            },
        },
    }
}


def _validated(data: Any) -> DefenseIn:
    try:
        return DefenseIn.model_validate_json(data) if isinstance(data, bytes) else DefenseIn.model_validate(data)
    except ValidationError as e:
        raise RequestValidationError(e.errors()) from None


async def _defense_body(request: Request) -> tuple[DefenseIn, list[store.Upload]]:
    limit = request.app.state.settings.max_body_bytes
    ctype = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if ctype in ("application/json", ""):
        return _validated(await read_body(request, limit)), []
    if ctype != "multipart/form-data":
        raise HttpError(415, f"Content-Type: {ctype} not accepted; send application/json or multipart/form-data")
    form = await request.form(max_files=MAX_FILES, max_fields=5)
    text = form.get("text")
    if isinstance(text, str) and "\x00" in text:  # NulGuard reads no multipart bodies: the database refuses a NUL
        raise FieldError("text: contains a NUL character", "text", 422)
    final = form.get("final")
    body = _validated({"text": text if isinstance(text, str) else None,
                       "final": final if isinstance(final, str) and final else False})  # fmt: skip
    files = []
    for n, upload in enumerate(form.getlist("files")):
        if not isinstance(upload, UploadFile):
            raise FieldError(f"files[{n}]: not a file", f"files[{n}]", 422)
        if "\x00" in (upload.filename or "") + (upload.content_type or ""):
            raise FieldError(f"files[{n}]: its name or type contains a NUL character", f"files[{n}]", 422)
        name = Path((upload.filename or "").replace("\\", "/")).name.strip()[:200]
        if not name:
            raise FieldError(f"files[{n}]: the file needs a name", f"files[{n}]", 422)
        content = await upload.read(limit + 1)
        ctype_file = (upload.content_type or "application/octet-stream").split(";")[0].strip().lower()[:100]
        files.append(store.Upload(name, ctype_file or "application/octet-stream", content))
    return body, files


@router.post("/occurrences/{occurrence_id}/defense", status_code=201, openapi_extra=DEFENSE_DOC)
async def defense(occurrence_id: IdPath, request: Request, who: Principal = DEFEND) -> Response:
    """The contractor's defence (its own users): text, and files when sent as multipart; late ones are recorded late."""
    body, files = await _defense_body(request)
    # Not a Conn dependency: the body (uploads) is read first, holding no connection.
    async with request.app.state.pool.acquire() as conn:
        result = await store.defend(
            conn, occurrence_id, who, client_ip(request), text=body.text, files=files, now=_now(), final=body.final
        )
        row = await store.detail(conn, occurrence_id, who, await _upfm(conn, request))
    return _answer({**row, "defense": result}, 201)


@router.get("/occurrences/{occurrence_id}/attachments/{attachment_id}")
async def download_attachment(
    occurrence_id: IdPath, attachment_id: IdPath, who: Principal = READ, *, conn: Conn
) -> Response:
    """An attachment's bytes, as a download."""
    row = await store.attachment(conn, occurrence_id, attachment_id, who)
    media = row["content_type"] if row["content_type"] in SAFE_TYPES else "application/octet-stream"
    return Response(
        bytes(row["content"]), media_type=media, headers={"Content-Disposition": content_disposition(row["filename"])}
    )


@router.post("/occurrences/{occurrence_id}/decision")
async def decision(
    occurrence_id: IdPath, body: DecisionIn, request: Request, who: Principal = DECIDE, *, conn: Conn
) -> Response:
    """none, warning, fine or warning_and_fine, with the motivation (Art. 42); 409 naming defense_until while the
    defence term runs without a final defence, or naming article when the occurrence is no infraction."""
    result = await store.decide(
        conn, occurrence_id, who, client_ip(request), allowed=who.role is not Role.CONTRACTOR,
        penalty=body.penalty, motivation=body.motivation, upfm_brl=await _upfm(conn, request),
        now=_now(),
    )  # fmt: skip
    row = await store.detail(conn, occurrence_id, who, await _upfm(conn, request))
    return _answer({**row, **result})


@router.post("/occurrences/{occurrence_id}/appeal", status_code=201)
async def appeal(
    occurrence_id: IdPath, body: AppealIn, request: Request, who: Principal = DEFEND, *, conn: Conn
) -> Response:
    """The contractor's appeal within appeal_until (15 business days, Lei 14.133/2021 Art. 166): under_appeal, the
    penalty suspended (Art. 168)."""
    result = await store.appeal(conn, occurrence_id, who, client_ip(request), text=body.text, now=_now())
    row = await store.detail(conn, occurrence_id, who, await _upfm(conn, request))
    return _answer({**row, "appeal": result}, 201)


@router.post("/occurrences/{occurrence_id}/appeal-decision")
async def appeal_decision(
    occurrence_id: IdPath, body: AppealDecisionIn, request: Request, who: Principal = JUDGE_APPEAL, *, conn: Conn
) -> Response:
    """upheld, reformed (with `penalty`) or annulled, with the motivation: by the superior authority (an admin, or
    a servidor flagged `superior_authority` in the users page), or by the servidor who decided, reconsidering
    within 5 business days (Art. 166, sole paragraph). Then final."""
    result = await store.decide_appeal(
        conn, occurrence_id, who, client_ip(request), outcome=body.outcome, penalty=body.penalty,
        motivation=body.motivation, upfm_brl=await _upfm(conn, request), now=_now(),
    )  # fmt: skip
    row = await store.detail(conn, occurrence_id, who, await _upfm(conn, request))
    return _answer({**row, "appeal_decision": result})


@router.post("/occurrences/{occurrence_id}/close")
async def close(
    occurrence_id: IdPath, request: Request, body: CloseIn | None = None, who: Principal = REVIEW, *, conn: Conn
) -> Response:
    """Close a decided occurrence (optional text)."""
    text = body.text if body else None
    await store.close(conn, occurrence_id, who, client_ip(request), text=text, now=_now())
    return await _detail(conn, occurrence_id, who, request)


@router.get("/occurrence-kinds")
async def list_kinds(who: Principal = READ, *, conn: Conn) -> Response:
    """Each kind: {kind, duty, article, severity, fine_allowed} and its Portuguese name. `article` is null (a
    finding for the Secretaria only) or an inciso of Art. 36–39; only then can a fine follow."""
    return json_response({"items": await store.kinds(conn)})


@router.get("/upfm-values")
async def list_upfm(request: Request, who: Principal = READ, *, conn: Conn) -> Response:
    """The UPFM's value in R$ per year as the registry holds it (the setting TELEMETRIA_UPFM_BRL only seeds
    years not held yet); a fine is converted by its infraction's year (Art. 36–39)."""
    return json_response({"items": await upfm.listing(conn, request.app.state.settings.upfm_values)})


@router.put("/upfm-values/{year}")
async def put_upfm(
    year: Annotated[int, PathParam(ge=2000, le=2100)],
    body: UpfmIn,
    request: Request,
    who: Principal = CLASSIFY,
    *,
    conn: Conn,
) -> Response:
    """Set a year's UPFM value (admin; audited `upfm.update` with old and new). Fines already decided keep their
    R$; a fine recomputed later (recurrence) uses the value then held."""
    await upfm.values(conn, request.app.state.settings.upfm_values)  # seed first: the setting never overwrites
    return json_response(await upfm.put(conn, year, body.brl, who, client_ip(request)))


@router.put("/occurrence-kinds/{kind}")
async def put_kind(kind: Kind, body: KindIn, request: Request, who: Principal = CLASSIFY, *, conn: Conn) -> Response:
    """Change a kind's duty and infraction (audited); occurrences already detected keep theirs."""
    article = body.article.strip() if body.article and body.article.strip() else None
    if body.article is not None and article is None:
        raise FieldError("article: empty; send null for a finding without an infraction", "article", 422)
    duty = body.duty.strip() if body.duty else None
    row = await store.set_kind(conn, kind.value, duty, article, body.severity, who, client_ip(request))
    return json_response(row)
