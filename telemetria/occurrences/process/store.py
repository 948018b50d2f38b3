"""The administrative process in the database: what a caller may see, and each transition with its history row.

Every transition runs in one transaction on the occurrence's locked row: the state machine (process.py) decides
whether it may happen; then the row changes, an append-only history row says who, when, from where and what, and
the audit log records it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import orjson

from telemetria.audit.log import record
from telemetria.auth.roles import Principal, Role
from telemetria.auth.store import is_superior_authority
from telemetria.db import Conn
from telemetria.http import FieldError, HttpError
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.model import KIND_NAMES, Kind, Severity, Status
from telemetria.occurrences.process import deadline, evidence, fines, infraction
from telemetria.occurrences.process import machine as process
from telemetria.occurrences.process import queries as q
from telemetria.occurrences.process.infraction import SANCTIONS, WITH_FINE, Penalty
from telemetria.occurrences.process.machine import Action
from telemetria.paging import Page, split_total

TERMO_LIVE = (
    "id",
    "status",
    "notified_at",
    "defense_due",
    "evidence_sha256",
    "penalty",
    "fine_upfm",
    "fine_brl",
    "deadlines",
    "final",
    "duty",
    "article",
    "severity",
)
MAX_ATTACHMENTS = 30  # per occurrence, all defences together: enough for a process, not a file store
MAX_BYTES = 64 * 2**20
# A defence may be replaced or completed until its term ends; each version stays in the history (what was said
# is evidence), but no more than this many, so an answer cannot be made to grow without bound (issue 33, item 4).
MAX_DEFENSE_VERSIONS = 5
JUSTIFICATIONS = {
    "emergency_substitution": "Art. 26, parágrafo único: substituição temporária de veículo em situação de emergência",
    "emergency_detour": "Art. 26, parágrafo único: trânsito em outra linha em situação de emergência",
}


@dataclass(frozen=True, slots=True)
class Filters:
    start: datetime
    end: datetime
    vehicle_id: int | None = None
    contractor_id: int | None = None
    kinds: Sequence[str] | None = None
    statuses: Sequence[str] | None = None


@dataclass(frozen=True, slots=True)
class Upload:
    filename: str
    content_type: str
    content: bytes


def not_found(occurrence_id: int) -> HttpError:
    return HttpError(404, f"no occurrence {occurrence_id}")


PENALTY_NAMES: dict[Penalty, str] = {
    Penalty.NONE: "sem penalidade",
    Penalty.WARNING: "advertência escrita",
    Penalty.FINE: "multa",
    Penalty.WARNING_AND_FINE: "advertência escrita e multa",
}


def refusal(detail: str, **extra: Any) -> HttpError:
    """A 409 of the process: `detail` is a whole Portuguese sentence for the person; `message` repeats it to tell
    pages to show it as it is, without the generic opening of a 409 (web/static/js/api.js)."""
    return HttpError(409, detail, message=detail, **extra)


def conflict(e: process.WrongState | fines.MissingUpfmValue) -> HttpError:
    if isinstance(e, process.WrongState):
        return refusal(e.detail, state=e.status.value, **e.extra)
    return refusal(str(e), year=e.year, field="year")


async def business_calendar(conn: Conn) -> deadline.Calendar:
    """National and Rondônia holidays (computed) and the municipality's (stored) for the terms' business days."""
    return deadline.Calendar.of(r["day"] for r in await conn.fetch(q.MUNICIPAL_HOLIDAYS))


def terms(row: Mapping[str, Any]) -> process.Terms:
    return process.Terms(
        defense_due=row["defense_due"], defense_final=bool(row["defense_final"]), appeal_due=row["appeal_due"],
        appealed=row["appealed_at"] is not None, sanctioned=row["penalty"] in SANCTIONS,
    )  # fmt: skip


def process_fields(row: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """What the detail adds for the procedure: the deadlines as local dates, finality, suspension, fine_allowed."""

    def local_day(t: datetime | None) -> str | None:
        return None if t is None else t.astimezone(LOCAL_TZ).date().isoformat()

    final = process.is_final(Status(row["status"]), terms(row), now)
    return {
        "deadlines": {"defense_until": local_day(row["defense_due"]), "appeal_until": local_day(row["appeal_due"])},
        "final": final,
        "penalty_suspended": row["status"] == Status.UNDER_APPEAL.value,  # Lei 14.133/2021 Art. 168
        "fine_allowed": infraction.maybe(row["article"]) is not None,
    }


async def list_items(conn: Conn, f: Filters, who: Principal, pg: Page) -> tuple[list[dict[str, Any]], int]:
    """The list items the caller may see (a contractor: its own, from notified on), by start."""
    visible = sorted(s.value for s in process.CONTRACTOR_VISIBLE)
    rows = await conn.fetch(
        q.LIST, f.start, f.end, f.vehicle_id, f.contractor_id, f.kinds, f.statuses, who.scope, visible,
        pg.limit, pg.offset,
    )  # fmt: skip
    return split_total(rows)


async def _visible_row(conn: Conn, occurrence_id: int, who: Principal) -> dict[str, Any]:
    row = await conn.fetchrow(q.DETAIL, occurrence_id)
    if row is None or not _sees(who, row["contractor_id"], Status(row["status"])):
        raise not_found(occurrence_id)
    return dict(row)


def _sees(who: Principal, contractor_id: int | None, status: Status) -> bool:
    scope = who.scope
    return (scope is None or contractor_id == scope) and process.visible(status, who.role)


async def detail(
    conn: Conn, occurrence_id: int, who: Principal, upfm_brl: Mapping[int, Decimal] | None = None
) -> dict[str, Any]:
    """The occurrence with its history, attachments (without content) and the evidence's SHA-256; 404 if unseen.
    A contractor's copy of the history leaves out the addresses the transitions came from.

    With `upfm_brl`, a fine is first brought up to date with the other penalties' finality as of now (an earlier
    infraction's appeal term may have run out since: recurrence does not depend on when anyone looked)."""
    now = datetime.now(LOCAL_TZ)
    row = await _visible_row(conn, occurrence_id, who)
    if upfm_brl is not None and row["penalty"] in WITH_FINE and row["contractor_id"] is not None:
        async with conn.transaction():
            await conn.execute(q.LOCK_CONTRACTOR_FINES, row["contractor_id"])
            if await recompute_fines(conn, row["contractor_id"], upfm_brl, now):
                row = await _visible_row(conn, occurrence_id, who)
    row.update(process_fields(row, now))
    history = [dict(h) for h in await conn.fetch(q.HISTORY, occurrence_id)]
    if who.role is Role.CONTRACTOR:  # the servidores' addresses are the municipality's business, not the company's
        history = [{k: v for k, v in h.items() if k != "ip"} for h in history]
    row["history"] = history
    row["attachments"] = [dict(a) for a in await conn.fetch(q.ATTACHMENTS, occurrence_id)]
    return row


async def evidence_of(conn: Conn, occurrence_id: int, who: Principal) -> tuple[dict[str, Any], dict[str, Any]]:
    """(detail, the frozen evidence as stored) for the Termo; 409 while nothing is frozen (before confirmation)."""
    row = await detail(conn, occurrence_id, who)
    ev = await conn.fetchrow(q.EVIDENCE, occurrence_id)
    if ev is None:
        raise refusal(
            "O Termo de Comunicação só existe depois da confirmação (situação atual: "
            f"{process.status_name(Status(row['status']))})", state=row["status"],
        )  # fmt: skip
    frozen = orjson.loads(ev["content"])
    # Who, what, where and when as frozen at confirmation (a Termo issued again after a registry edit says the same);
    # only the process's own state is today's.
    live = {k: row[k] for k in TERMO_LIVE if k in row}
    return {**row, **frozen.get("occurrence", {}), **live}, frozen


async def attachment(conn: Conn, occurrence_id: int, attachment_id: int, who: Principal) -> Mapping[str, Any]:
    await _visible_row(conn, occurrence_id, who)
    row = await conn.fetchrow(q.ATTACHMENT, occurrence_id, attachment_id)
    if row is None:
        raise HttpError(404, f"no attachment {attachment_id} of occurrence {occurrence_id}")
    return dict(row)


async def _history(
    conn: Conn,
    occurrence_id: int,
    who: Principal,
    ip: str | None,
    action: str,
    from_status: Status,
    to_status: Status,
    text: str | None,
    data: dict[str, Any] | None = None,
) -> int:
    row = await conn.fetchrow(
        q.INSERT_HISTORY, occurrence_id, who.username, who.user_id, who.role.value, ip, action, from_status.value,
        to_status.value, text, data,
    )  # fmt: skip
    await record(
        conn, f"occurrence.{action}", who, ip, f"occurrence:{occurrence_id}",
        {"from": from_status.value, "to": to_status.value, **({k: v for k, v in (data or {}).items() if k != "text"})},
    )  # fmt: skip
    return int(row["id"])


async def _lock(conn: Conn, occurrence_id: int, who: Principal) -> dict[str, Any]:
    row = await conn.fetchrow(q.LOCK, occurrence_id)
    if row is None or not _sees(who, row["contractor_id"], Status(row["status"])):
        raise not_found(occurrence_id)
    return dict(row)


def _check(action: Action, row: Mapping[str, Any], who: Principal, allowed: bool, now: datetime) -> Status:
    try:
        return process.check(action, Status(row["status"]), role=who.role, allowed=allowed, now=now, terms=terms(row))
    except process.WrongState as e:
        raise conflict(e) from None


async def review(
    conn: Conn,
    occurrence_id: int,
    who: Principal,
    ip: str | None,
    *,
    confirm: bool,
    reason: str | None,
    article: str | None,
    severity: Severity | None,
    now: datetime,
    finding_only: bool = False,
    justification: str | None = None,
) -> None:
    """Confirm (optionally reclassified, evidence frozen) or dismiss (reason required) a detected occurrence.

    `article` opens the infraction on an inciso of Art. 36–39 (the severity follows); `finding_only` clears it
    (the kind chosen is a finding for the Secretaria only). `justification` (dismissing): an emergency
    substitution or detour of Art. 26's sole paragraph, which needs no prior authorization."""
    action = Action.CONFIRM if confirm else Action.DISMISS
    if justification is not None and not (reason and reason.strip()):
        reason = JUSTIFICATIONS[justification]
    if not confirm and not (reason and reason.strip()):
        raise FieldError("reason: say why the occurrence is dismissed", "reason", 422)
    if not confirm and (article is not None or severity is not None):
        raise FieldError("article: a dismissed occurrence is not reclassified", "article" if article else "severity")
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        to = _check(action, row, who, who.can(process.TRANSITIONS[action].perm), now)
        if confirm and row["end_ts"] is None:  # its evidence is not complete yet: frozen now, it would stay partial
            raise refusal(
                "Ocorrência ainda em andamento (sem fim registrado): confirme-a quando terminar (situação atual: "
                f"{process.status_name(Status(row['status']))})", state=row["status"],
            )  # fmt: skip
        data: dict[str, Any] = {}
        if confirm:
            current = await conn.fetchrow(q.DETAIL, occurrence_id)
            new_article = article.strip() if article else current["article"]
            new_severity = severity.value if severity else current["severity"]
            if article:  # opening the infraction (auto): its inciso of Art. 36–39 sets the severity
                try:
                    inf = infraction.parse(new_article)
                except ValueError as e:
                    raise FieldError(f"article: {e}", "article", 422) from None
                if severity is not None and severity is not inf.severity:
                    raise FieldError(
                        f"severity: {inf.article} is {inf.severity.value}, not {severity.value}", "severity", 422
                    )
                new_article, new_severity = inf.article, inf.severity.value
            elif finding_only:
                new_article = new_severity = None
            elif severity is not None:
                inf_now = infraction.maybe(current["article"])
                if inf_now is None:
                    raise FieldError("severity: a finding without an article (Art. 36–39) has no severity", "severity")
                if severity is not inf_now.severity:
                    raise FieldError(
                        f"severity: {inf_now.article} is {inf_now.severity.value}; give the article of the other "
                        "severity instead", "severity", 422,
                    )  # fmt: skip
            if (new_article, new_severity) != (current["article"], current["severity"]):
                await conn.execute(q.RECLASSIFY, occurrence_id, new_article, new_severity)
                data["reclassified"] = {
                    "from": {"article": current["article"], "severity": current["severity"]},
                    "to": {"article": new_article, "severity": new_severity},
                }
        await conn.execute(q.SET_STATUS, occurrence_id, to.value)
        if confirm:
            frozen = dict(await conn.fetchrow(q.DETAIL, occurrence_id))
            content, digest = await evidence.gather(conn, frozen, frozen_by=who.username, frozen_at=now)
            await conn.execute(q.INSERT_EVIDENCE, occurrence_id, content, digest, who.username, now)
            await conn.execute(q.SET_EVIDENCE_SHA, occurrence_id, digest)
            data["evidence_sha256"] = digest
        if justification is not None:
            data["justification"] = {"kind": justification, "basis": "Lei 3.588/2023, Art. 26, parágrafo único"}
        await _history(conn, occurrence_id, who, ip, to.value, Status(row["status"]), to, reason, data or None)


async def notify(conn: Conn, occurrence_id: int, who: Principal, ip: str | None, *, now: datetime, days: int) -> None:
    """Issue the Termo: notified now, the defence due `days` business days later; the contractor sees it from now."""
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        to = _check(Action.NOTIFY, row, who, who.can(process.TRANSITIONS[Action.NOTIFY].perm), now)
        due = deadline.defense_due(now, days, await business_calendar(conn))
        await conn.execute(q.SET_NOTIFIED, occurrence_id, now, due)
        await _history(
            conn, occurrence_id, who, ip, "notified", Status(row["status"]), to, None,
            {"defense_due": due.isoformat(), "defense_days": days},
        )  # fmt: skip


async def defend(
    conn: Conn,
    occurrence_id: int,
    who: Principal,
    ip: str | None,
    *,
    text: str,
    files: Sequence[Upload],
    now: datetime,
    final: bool = False,
) -> dict[str, Any]:
    """The contractor's defence (its own users only): text and attachments. One per phase: each new one replaces
    (or completes) the last until the term ends or the contractor declares it final (`final`: the decision need
    not wait for the term then); each version stays in the history, at most MAX_DEFENSE_VERSIONS. After the
    deadline, a defence is still received and recorded late."""
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        allowed = who.role is Role.CONTRACTOR and who.can(process.TRANSITIONS[Action.DEFENSE].perm)
        to = _check(Action.DEFENSE, row, who, allowed, now)
        versions = int(await conn.fetchval(q.DEFENSE_VERSIONS, occurrence_id))
        if versions >= MAX_DEFENSE_VERSIONS:
            raise HttpError(
                409, f"a defesa já foi substituída {versions - 1} vezes: o limite é {MAX_DEFENSE_VERSIONS} versões; "
                "declare a última como final", state=row["status"], limit=MAX_DEFENSE_VERSIONS,
            )  # fmt: skip
        held = await conn.fetchrow(q.ATTACHMENTS_HELD, occurrence_id)
        if held["n"] + len(files) > MAX_ATTACHMENTS or held["bytes"] + sum(len(f.content) for f in files) > MAX_BYTES:
            raise FieldError(
                f"files: an occurrence holds at most {MAX_ATTACHMENTS} attachments and {MAX_BYTES // 2**20} MiB; "
                f"it has {held['n']} ({held['bytes'] // 2**20} MiB)", "files", 413,
            )  # fmt: skip
        late = row["defense_due"] is not None and deadline.is_late(now, row["defense_due"])
        data = {"late": late, "files": len(files), "final": final, "version": versions + 1}
        hid = await _history(conn, occurrence_id, who, ip, "defense", Status(row["status"]), to, text, data)
        if row["status"] != to.value:
            await conn.execute(q.SET_STATUS, occurrence_id, to.value)
        if final:
            await conn.execute(q.SET_DEFENSE_FINAL, occurrence_id)
        stored = []
        for f in files:
            a = await conn.fetchrow(
                q.INSERT_ATTACHMENT, occurrence_id, hid, f.filename, f.content_type, len(f.content),
                evidence.sha256(f.content), f.content, who.username,
            )  # fmt: skip
            stored.append(dict(a))
    return {"history_id": hid, "late": late, "final": final, "version": versions + 1, "attachments": stored}


def _penalty_allowed(row: Mapping[str, Any], penalty: Penalty) -> None:
    """409 unless the occurrence's legal basis allows the penalty: a warning or fine only for an infraction
    (Art. 36–39), and for Art. 38–39 the warning and the fine together."""
    inf = infraction.maybe(row["article"])
    if penalty in SANCTIONS and inf is None:
        raise refusal(
            f"Sem artigo de infração: não é possível aplicar {PENALTY_NAMES[penalty]}. Só os incisos dos Art. 36 a "
            "39 preveem advertência e multa; esta ocorrência é uma constatação para a Secretaria (article: "
            f"{row['article'] or 'nenhum'}). Reclassifique-a ao confirmar, ou decida sem penalidade",
            state=row["status"], field="article",
        )  # fmt: skip
    if inf is not None and penalty not in inf.penalties:
        allowed = " ou ".join(sorted(PENALTY_NAMES[p] for p in inf.penalties))
        raise refusal(
            f"O {inf.article} pune com advertência escrita e multa juntas: aplique {allowed}",
            state=row["status"], field="penalty",
        )  # fmt: skip


async def _fine_of(
    conn: Conn, row: Mapping[str, Any], upfm_brl: Mapping[int, Decimal], now: datetime
) -> tuple[fines.Fine, int | None]:
    """The fine of an infraction and the earlier final one that doubles it (recurrence), if any."""
    severity = Severity(row["severity"])
    start_local = row["start_ts"].astimezone(LOCAL_TZ)
    first, last = fines.recurrence_window(start_local)
    earlier = await conn.fetchval(
        q.EARLIER_SANCTION, now, row["contractor_id"], severity.value, row["id"], first, last, row["start_ts"]
    )
    f = fines.fine(severity, start_local.year, upfm_brl, recurrence=earlier is not None)
    return f, earlier if f.doubled else None


async def recompute_fines(conn: Conn, contractor_id: int, upfm_brl: Mapping[int, Decimal], now: datetime) -> int:
    """Every fine of the contractor again from the final penalties as they stand: a fine doubles when an earlier
    infraction's penalty is final, whatever the order the cases were decided in, and stops doubling when that one
    is annulled on appeal. Each change is a history row by "sistema"; returns how many changed."""
    changed = 0
    for r in await conn.fetch(q.CONTRACTOR_FINES, contractor_id):
        full = {**dict(r), "contractor_id": contractor_id}
        try:
            f, earlier = await _fine_of(conn, full, upfm_brl, now)
        except fines.MissingUpfmValue:
            continue  # left as decided; the decision itself already required the value
        if (f.upfm, f.brl, earlier) != (r["fine_upfm"], r["fine_brl"], r["recurrence_of"]):
            await conn.execute(q.SET_FINE, r["id"], f.upfm, f.brl, earlier)
            await conn.execute(
                q.INSERT_HISTORY, r["id"], "sistema", None, None, None, "fine_recomputed", r["status"], r["status"],
                "multa recalculada: reincidência conforme as penalidades definitivas (Art. 38 e 39, parágrafo único)",
                {"from": {"fine_upfm": _s(r["fine_upfm"]), "recurrence_of": r["recurrence_of"]},
                 "to": {"fine_upfm": str(f.upfm), "fine_brl": str(f.brl), "recurrence_of": earlier}},
            )  # fmt: skip
            changed += 1
    return changed


def _s(v: Decimal | None) -> str | None:
    return None if v is None else str(v)


async def decide(
    conn: Conn,
    occurrence_id: int,
    who: Principal,
    ip: str | None,
    *,
    allowed: bool,
    penalty: str,
    motivation: str,
    upfm_brl: Mapping[int, Decimal],
    now: datetime,
) -> dict[str, Any]:
    """The decision with its motivation (Art. 42): none, warning, fine or warning_and_fine (Lei 14.133/2021
    Art. 156 §7), on the infraction's legal basis; a fine in UPFM and R$, doubled on recurrence. It waits for the
    defence term's end or a final defence; the appeal term (15 business days, Art. 166) starts with it."""
    p = Penalty(penalty)
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        to = _check(Action.DECIDE, row, who, allowed, now)
        _penalty_allowed(row, p)
        if p in WITH_FINE and row["contractor_id"] is None:
            raise refusal("Não é possível multar: a ocorrência não tem contratada", state=row["status"])
        appeal_due = None
        if p in SANCTIONS:
            appeal_due = (await business_calendar(conn)).term_end(now, deadline.APPEAL_DAYS)
        await conn.execute(q.SET_DECISION, occurrence_id, p.value, now, who.user_id, appeal_due)
        fine_upfm = fine_brl = None
        recurrence_of = None
        if p in WITH_FINE:
            await conn.execute(q.LOCK_CONTRACTOR_FINES, row["contractor_id"])
            try:
                f, recurrence_of = await _fine_of(conn, row, upfm_brl, now)
            except fines.MissingUpfmValue as e:
                raise conflict(e) from None
            fine_upfm, fine_brl = f.upfm, f.brl
            await conn.execute(q.SET_FINE, occurrence_id, fine_upfm, fine_brl, recurrence_of)
        data = {
            "penalty": p.value,
            "fine_upfm": _s(fine_upfm),
            "fine_brl": _s(fine_brl),
            "recurrence_of": recurrence_of,
            "appeal_due": None if appeal_due is None else appeal_due.isoformat(),
        }
        await _history(conn, occurrence_id, who, ip, "decided", Status(row["status"]), to, motivation, data)
        if row["contractor_id"] is not None:
            await conn.execute(q.LOCK_CONTRACTOR_FINES, row["contractor_id"])
            await recompute_fines(conn, row["contractor_id"], upfm_brl, now)
    return {"penalty": p.value, "fine_upfm": fine_upfm, "fine_brl": fine_brl, "recurrence_of": recurrence_of}


async def appeal(
    conn: Conn, occurrence_id: int, who: Principal, ip: str | None, *, text: str, now: datetime
) -> dict[str, Any]:
    """The contractor's appeal against a warning or fine, within 15 business days of the decision (Lei 14.133/2021
    Art. 166): the penalty is suspended (Art. 168) until it is decided; the decider may reconsider within 5
    business days, else the superior authority decides (Art. 166, sole paragraph)."""
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        allowed = who.role is Role.CONTRACTOR and who.can(process.TRANSITIONS[Action.APPEAL].perm)
        to = _check(Action.APPEAL, row, who, allowed, now)
        cal = await business_calendar(conn)
        reconsider_due = cal.term_end(now, deadline.RECONSIDER_DAYS)
        await conn.execute(q.SET_APPEAL, occurrence_id, now, reconsider_due)
        data = {"reconsider_due": reconsider_due.isoformat(),
                "superior_due": cal.term_end(reconsider_due, deadline.SUPERIOR_DAYS).isoformat()}  # fmt: skip
        await _history(conn, occurrence_id, who, ip, "appeal", Status(row["status"]), to, text, data)
    return data


async def decide_appeal(
    conn: Conn,
    occurrence_id: int,
    who: Principal,
    ip: str | None,
    *,
    outcome: str,
    penalty: str | None,
    motivation: str,
    upfm_brl: Mapping[int, Decimal],
    now: datetime,
) -> dict[str, Any]:
    """The appeal decided, with its motivation (Art. 42): upheld, reformed (with the new penalty) or annulled.
    By the superior authority (an admin, or a servidor flagged `superior_authority`), or by the servidor who
    decided, reconsidering (reformed or annulled) within 5 business days of the appeal (Lei 14.133/2021 Art. 166,
    sole paragraph). The penalty is then final."""
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        # The superior authority: an admin by default, or a servidor flagged in the users page (Art. 166), who
        # is not superior to their own decision: on it they may only reconsider, as its decider.
        superior = who.role is Role.ADMIN or (
            who.role is Role.MONITOR and row["decided_by"] != who.user_id
            and await is_superior_authority(conn, who.user_id)
        )  # fmt: skip
        reconsidering = (
            not superior and who.role is not Role.CONTRACTOR and row["decided_by"] == who.user_id
            and row["reconsider_due"] is not None and not deadline.is_late(now, row["reconsider_due"])
        )  # fmt: skip
        to = _check(Action.APPEAL_DECIDE, row, who, superior or reconsidering, now)
        if reconsidering and outcome == "upheld":
            raise refusal(
                "Quem decidiu só pode reconsiderar (reformar ou anular); para manter a decisão, o recurso sobe à "
                "autoridade superior (Lei 14.133/2021 Art. 166, parágrafo único)", state=row["status"], field="outcome",
            )  # fmt: skip
        current = Penalty(row["penalty"])
        if outcome == "upheld":
            new = current
        elif outcome == "annulled":
            new = Penalty.NONE
        else:
            if penalty is None:
                raise FieldError("penalty: a reformed decision needs the new penalty", "penalty", 422)
            new = Penalty(penalty)
            if new is current:
                raise FieldError(f"penalty: {new.value} is the penalty already applied (use upheld)", "penalty", 422)
            _penalty_allowed(row, new)
        await conn.execute(q.SET_APPEAL_DECISION, occurrence_id, outcome, new.value, now)
        if new not in WITH_FINE:
            await conn.execute(q.SET_FINE, occurrence_id, None, None, None)
        data: dict[str, Any] = {"outcome": outcome, "penalty": new.value, "from_penalty": current.value,
                                "by": "superior" if superior else "reconsideration"}  # fmt: skip
        await _history(conn, occurrence_id, who, ip, "appeal_decided", Status(row["status"]), to, motivation, data)
        if row["contractor_id"] is not None:
            await conn.execute(q.LOCK_CONTRACTOR_FINES, row["contractor_id"])
            if new in WITH_FINE and current not in WITH_FINE:
                try:
                    f, earlier = await _fine_of(conn, row, upfm_brl, now)
                except fines.MissingUpfmValue as e:
                    raise conflict(e) from None
                await conn.execute(q.SET_FINE, occurrence_id, f.upfm, f.brl, earlier)
            await recompute_fines(conn, row["contractor_id"], upfm_brl, now)
    return data


async def close(
    conn: Conn, occurrence_id: int, who: Principal, ip: str | None, *, text: str | None, now: datetime
) -> None:
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        to = _check(Action.CLOSE, row, who, who.can(process.TRANSITIONS[Action.CLOSE].perm), now)
        await conn.execute(q.SET_STATUS, occurrence_id, to.value)
        await _history(conn, occurrence_id, who, ip, "closed", Status(row["status"]), to, text)


async def record_export(conn: Conn, who: Principal, ip: str | None, rows: int, fmt: str = "csv") -> None:
    await record(conn, "export.occurrences", who, ip, None, {"format": fmt, "rows": rows})


async def kinds(conn: Conn) -> list[dict[str, Any]]:
    """Each kind's duty and infraction in force ({kind, duty, article, severity, fine_allowed}), with its name."""
    return [{**dict(r), "name": KIND_NAMES[Kind(r["kind"])]} for r in await conn.fetch(q.KINDS)]


async def set_kind(
    conn: Conn,
    kind: str,
    duty: str | None,
    article: str | None,
    severity: Severity | None,
    who: Principal,
    ip: str | None,
) -> dict[str, Any]:
    """Change a kind's duty and infraction (new occurrences copy them; existing ones keep theirs); audited.
    `article` null makes the kind a finding only; otherwise an inciso of Art. 36–39, which sets the severity."""
    sev: str | None = None
    if article is not None:
        try:
            inf = infraction.parse(article)
        except ValueError as e:
            raise FieldError(f"article: {e}", "article", 422) from None
        if severity is not None and severity is not inf.severity:
            raise FieldError(f"severity: {inf.article} is {inf.severity.value}, not {severity.value}", "severity", 422)
        article, sev = inf.article, inf.severity.value
    elif severity is not None:
        raise FieldError("severity: a kind without an article (a finding only) has no severity", "severity", 422)
    async with conn.transaction():
        old = await conn.fetchrow(q.KIND, kind)
        if old is None:
            raise HttpError(404, f"no occurrence kind {kind!r}")
        row = await conn.fetchrow(q.UPDATE_KIND, kind, duty or old["duty"], article, sev, who.username)
        await record(
            conn, "occurrence.kind.update", who, ip, f"occurrence_kind:{kind}",
            {"from": {"duty": old["duty"], "article": old["article"], "severity": old["severity"]},
             "to": {"duty": row["duty"], "article": article, "severity": sev}},
        )  # fmt: skip
    return dict(row)
