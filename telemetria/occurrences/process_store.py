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
from telemetria.db import Conn
from telemetria.http import FieldError, HttpError
from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences import deadline, evidence, fines, process
from telemetria.occurrences import process_queries as q
from telemetria.occurrences.model import KIND_NAMES, Kind, Severity, Status
from telemetria.occurrences.process import Action
from telemetria.paging import Page, split_total

TERMO_LIVE = ("id", "status", "notified_at", "defense_due", "evidence_sha256", "penalty", "fine_upfm", "fine_brl")
MAX_ATTACHMENTS = 30  # per occurrence, all defences together: enough for a process, not a file store
MAX_BYTES = 64 * 2**20


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


def conflict(e: process.WrongState | fines.MissingUpfmValue) -> HttpError:
    if isinstance(e, process.WrongState):
        return HttpError(409, e.detail, state=e.status.value)
    return HttpError(409, str(e), year=e.year)


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


async def detail(conn: Conn, occurrence_id: int, who: Principal) -> dict[str, Any]:
    """The occurrence with its history, attachments (without content) and the evidence's SHA-256; 404 if unseen.
    A contractor's copy of the history leaves out the addresses the transitions came from."""
    row = await _visible_row(conn, occurrence_id, who)
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
        raise HttpError(
            409, f"o Termo só existe depois da confirmação (estado atual: {row['status']})", state=row["status"]
        )
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
        return process.check(
            action, Status(row["status"]), role=who.role, allowed=allowed, now=now, defense_due=row["defense_due"]
        )
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
) -> None:
    """Confirm (optionally reclassified, evidence frozen) or dismiss (reason required) a detected occurrence."""
    action = Action.CONFIRM if confirm else Action.DISMISS
    if not confirm and not (reason and reason.strip()):
        raise FieldError("reason: say why the occurrence is dismissed", "reason", 422)
    if not confirm and (article is not None or severity is not None):
        raise FieldError("article: a dismissed occurrence is not reclassified", "article" if article else "severity")
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        to = _check(action, row, who, who.can(process.TRANSITIONS[action].perm), now)
        if confirm and row["end_ts"] is None:  # its evidence is not complete yet: frozen now, it would stay partial
            raise HttpError(
                409, "a ocorrência ainda está em andamento (sem fim); confirme-a quando terminar; estado atual: "
                f"{row['status']}", state=row["status"],
            )  # fmt: skip
        data: dict[str, Any] = {}
        if confirm:
            current = await conn.fetchrow(q.DETAIL, occurrence_id)
            new_article = article.strip() if article else current["article"]
            new_severity = severity.value if severity else current["severity"]
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
        await _history(conn, occurrence_id, who, ip, to.value, Status(row["status"]), to, reason, data or None)


async def notify(conn: Conn, occurrence_id: int, who: Principal, ip: str | None, *, now: datetime, days: int) -> None:
    """Issue the Termo: notified now, the defence due `days` business days later; the contractor sees it from now."""
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        to = _check(Action.NOTIFY, row, who, who.can(process.TRANSITIONS[Action.NOTIFY].perm), now)
        due = deadline.defense_due(now, days)
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
) -> dict[str, Any]:
    """The contractor's answer (its own users only): text and attachments; after the deadline it is recorded late."""
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        allowed = who.role is Role.CONTRACTOR and who.can(process.TRANSITIONS[Action.DEFENSE].perm)
        to = _check(Action.DEFENSE, row, who, allowed, now)
        held = await conn.fetchrow(q.ATTACHMENTS_HELD, occurrence_id)
        if held["n"] + len(files) > MAX_ATTACHMENTS or held["bytes"] + sum(len(f.content) for f in files) > MAX_BYTES:
            raise FieldError(
                f"files: an occurrence holds at most {MAX_ATTACHMENTS} attachments and {MAX_BYTES // 2**20} MiB; "
                f"it has {held['n']} ({held['bytes'] // 2**20} MiB)", "files", 413,
            )  # fmt: skip
        late = row["defense_due"] is not None and deadline.is_late(now, row["defense_due"])
        data = {"late": late, "files": len(files)}
        hid = await _history(conn, occurrence_id, who, ip, "defense", Status(row["status"]), to, text, data)
        if row["status"] != to.value:
            await conn.execute(q.SET_STATUS, occurrence_id, to.value)
        stored = []
        for f in files:
            a = await conn.fetchrow(
                q.INSERT_ATTACHMENT, occurrence_id, hid, f.filename, f.content_type, len(f.content),
                evidence.sha256(f.content), f.content, who.username,
            )  # fmt: skip
            stored.append(dict(a))
    return {"history_id": hid, "late": late, "attachments": stored}


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
    """The decision with its motivation (Art. 42); a fine in UPFM and R$, doubled on recurrence (recurrence_of)."""
    async with conn.transaction():
        row = await _lock(conn, occurrence_id, who)
        to = _check(Action.DECIDE, row, who, allowed, now)
        fine_upfm = fine_brl = None
        recurrence_of = None
        if penalty == "fine":
            if row["contractor_id"] is None:
                raise HttpError(409, "não é possível multar: a ocorrência não tem contratada", state=row["status"])
            await conn.execute(q.LOCK_CONTRACTOR_FINES, row["contractor_id"])
            severity = Severity(row["severity"])
            start_local = row["start_ts"].astimezone(LOCAL_TZ)
            first, last = fines.recurrence_window(start_local)
            recurrence_of = await conn.fetchval(
                q.EARLIER_FINE, row["contractor_id"], severity.value, occurrence_id, first, last, row["start_ts"]
            )
            try:
                f = fines.fine(severity, start_local.year, upfm_brl, recurrence=recurrence_of is not None)
            except fines.MissingUpfmValue as e:
                raise conflict(e) from None
            fine_upfm, fine_brl = f.upfm, f.brl
            if not f.doubled:
                recurrence_of = None
        await conn.execute(q.SET_DECISION, occurrence_id, penalty, fine_upfm, fine_brl, recurrence_of)
        data = {
            "penalty": penalty,
            "fine_upfm": None if fine_upfm is None else str(fine_upfm),
            "fine_brl": None if fine_brl is None else str(fine_brl),
            "recurrence_of": recurrence_of,
        }
        await _history(conn, occurrence_id, who, ip, "decided", Status(row["status"]), to, motivation, data)
    return {"penalty": penalty, "fine_upfm": fine_upfm, "fine_brl": fine_brl, "recurrence_of": recurrence_of}


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
    """Each kind's classification in force, with its Portuguese name."""
    return [{**dict(r), "name": KIND_NAMES[Kind(r["kind"])]} for r in await conn.fetch(q.KINDS)]


async def set_kind(
    conn: Conn, kind: str, article: str, severity: Severity, who: Principal, ip: str | None
) -> dict[str, Any]:
    """Change a kind's classification (new occurrences copy it; existing ones keep theirs); audited."""
    async with conn.transaction():
        old = await conn.fetchrow(q.KIND, kind)
        if old is None:
            raise HttpError(404, f"no occurrence kind {kind!r}")
        row = await conn.fetchrow(q.UPDATE_KIND, kind, article, severity.value, who.username)
        await record(
            conn, "occurrence.kind.update", who, ip, f"occurrence_kind:{kind}",
            {"from": {"article": old["article"], "severity": old["severity"]},
             "to": {"article": article, "severity": severity.value}},
        )  # fmt: skip
    return dict(row)
