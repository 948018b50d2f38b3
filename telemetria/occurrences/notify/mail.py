"""E-mail of a new occurrence: the message in Portuguese (pure) and its sending over SMTP (smtplib, in a thread).

smtplib rather than an asyncio client: one message a few times a minute at most, sent from a worker thread with a
timeout, needs no extra dependency. TLS per `TELEMETRIA_SMTP_TLS`: `starttls`, `ssl` or `none`, certificates
verified against the system's CAs.
"""

from __future__ import annotations

import asyncio
import smtplib
import ssl
from collections.abc import Mapping, Sequence
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from typing import Any

from telemetria.occurrences.documents import wording
from telemetria.settings import Settings

TIMEOUT_S = 20.0
DEFAULT_PORTS = {"starttls": 587, "ssl": 465, "none": 25}


class MailError(Exception):
    """The SMTP server could not be reached or refused the message."""


def message(occ: Mapping[str, Any], *, sender: str, to: Sequence[str], url: str, sent_at: Any) -> EmailMessage:
    """The e-mail announcing one occurrence (a row of notify_queries.OCCURRENCES)."""
    kind = wording.kind_name(occ.get("kind"))
    msg = EmailMessage()
    msg["Subject"] = f"[Telemetria] {kind} — {occ.get('plate') or '?'} — {wording.when(occ.get('start_ts'))}"
    msg["From"] = sender
    msg["To"] = ", ".join(to)
    msg["Date"] = format_datetime(sent_at)
    msg["Message-ID"] = make_msgid("occurrence", domain=sender.rpartition("@")[2] or None)
    msg.set_content(text(occ, url))
    return msg


def text(occ: Mapping[str, Any], url: str) -> str:
    """The message's body: the occurrence's facts, one per line, and the link to its page."""
    route = wording.route_text({"code": occ.get("route_code"), "name": occ.get("route_name")})
    lines = [
        f"Nova ocorrência nº {occ.get('id')} encontrada pelo rastreamento da frota escolar.",
        "",
        f"Tipo: {wording.kind_name(occ.get('kind'))}",
        f"Veículo (placa): {occ.get('plate') or '—'}",
        f"Contratada: {occ.get('contractor') or '—'}",
        f"Condutor: {occ.get('driver') or 'não identificado'}",
        f"Rota: {route}",
        f"Início: {wording.when(occ.get('start_ts'))}",
        f"Fim: {wording.when(occ.get('end_ts')) if occ.get('end_ts') else 'em andamento'}",
        f"Local: {wording.place_text(occ.get('place'), occ.get('lat'), occ.get('lon'))}",
    ]
    lines += [f"{label}: {value}" for label, value in wording.fact_lines(occ.get("facts"))]
    lines += [
        f"Enquadramento: Lei 3.588/2023, {occ.get('article') or '—'} (natureza "
        f"{wording.severity_name(occ.get('severity'))})",
        f"Situação: {wording.status_name(occ.get('status'))}",
    ]
    if occ.get("late"):
        lines.append("Encontrada em posições transmitidas com atraso pelo rastreador.")
    lines += [
        "Horários de Porto Velho (UTC-4).",
        "",
        f"Ver a ocorrência: {url}",
        "",
        "-- ",
        "Mensagem automática do Telemetria. Para deixar de recebê-la, altere TELEMETRIA_NOTIFY_EMAIL_TO.",
    ]
    return "\n".join(lines) + "\n"


def _send(settings: Settings, msg: EmailMessage) -> None:
    host = settings.smtp_host or ""
    port = settings.smtp_port or DEFAULT_PORTS[settings.smtp_tls]
    context = ssl.create_default_context()
    smtp: smtplib.SMTP
    if settings.smtp_tls == "ssl":
        smtp = smtplib.SMTP_SSL(host, port, timeout=TIMEOUT_S, context=context)
    else:
        smtp = smtplib.SMTP(host, port, timeout=TIMEOUT_S)
    with smtp:
        if settings.smtp_tls == "starttls":
            smtp.starttls(context=context)
        if settings.smtp_user:
            password = settings.smtp_password.get_secret_value() if settings.smtp_password else ""
            smtp.login(settings.smtp_user, password)
        smtp.send_message(msg)


async def send(settings: Settings, msg: EmailMessage) -> None:
    """Send over the configured SMTP server, in a worker thread; MailError saying why when it fails."""
    try:
        await asyncio.to_thread(_send, settings, msg)
    except (smtplib.SMTPException, OSError) as e:
        raise MailError(f"e-mail: {type(e).__name__}: {e}") from None
