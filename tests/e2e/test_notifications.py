"""Notifications of new occurrences against a real SMTP server process and a real HTTP receiver process.

The SMTP server is aiosmtpd's own (`python -m aiosmtpd`, storing every message in a Maildir; plain, STARTTLS and SSL
with a self-signed certificate made by openssl); the webhook receiver is tests/e2e/webhook_receiver.py.
notify.deliver_round runs against the real database, with `now` given, so that the retry schedule is tested without
waiting for it.
"""

from __future__ import annotations

import json
import mailbox
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from email.header import decode_header, make_header
from email.message import Message
from pathlib import Path

import asyncpg
import pytest

from telemetria.occurrences.notify import outbox as notify
from telemetria.occurrences.notify import webhook
from telemetria.settings import Settings
from tests.conftest import ScratchDb
from tests.e2e.conftest import free_port

HERE = Path(__file__).resolve().parent
SECRET = "uma chave longa e secreta"
T0 = datetime(2026, 3, 10, 11, 50, tzinfo=UTC)


class Process:
    """A server process on a port of its own, started again on the same port after `stop()`."""

    def __init__(self, args: list[str], port: int) -> None:
        self.args, self.port = args, port
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    raise AssertionError(f"{self.args} did not start") from None
                time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


@pytest.fixture
def smtp(tmp_path: Path) -> Iterator[tuple[Process, mailbox.Maildir]]:
    port, maildir = free_port(), tmp_path / "maildir"
    args = [sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{port}", "-c", "aiosmtpd.handlers.Mailbox"]
    server = Process([*args, str(maildir)], port)
    server.start()
    yield server, mailbox.Maildir(maildir)
    server.stop()


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[Process, Path]]:
    port, inbox = free_port(), tmp_path / "hooks"
    inbox.mkdir()
    server = Process([sys.executable, str(HERE / "webhook_receiver.py"), str(port), str(inbox)], port)
    server.start()
    yield server, inbox
    server.stop()


async def occurrence(conn: asyncpg.Connection, kind: str, vehicle_id: int, **cols: object) -> int:
    cls = await conn.fetchrow("SELECT article, severity FROM occurrence_kinds WHERE kind = $1", kind)
    facts = cols.pop("facts", {})
    return int(
        await conn.fetchval(
            """INSERT INTO occurrences (kind, vehicle_id, contractor_id, driver_id, day, start_ts, end_ts, lat, lon,
                   place, facts, article, severity, late)
               VALUES ($1, $2, $3, $4, $5::timestamptz::date, $5, $6, -10.4401, -62.4702, $7, $8, $9, $10, $11)
               RETURNING id""",
            kind,
            vehicle_id,
            cols.get("contractor_id"),
            cols.get("driver_id"),
            T0,
            T0 + timedelta(minutes=4),
            "Av. Padre Adolpho Rohl",
            facts,
            cls["article"],
            cls["severity"],
            bool(cols.get("late", False)),
        )
    )


def hooks(inbox: Path) -> list[tuple[dict[str, str], bytes]]:
    return [(json.loads(p.with_suffix(".headers").read_text()), p.read_bytes()) for p in sorted(inbox.glob("*.body"))]


async def outbox(conn: asyncpg.Connection) -> dict[tuple[int, str], asyncpg.Record]:
    rows = await conn.fetch("SELECT * FROM notify_outbox")
    return {(r["occurrence_id"], r["channel"]): r for r in rows}


@pytest.fixture
async def world(conn: asyncpg.Connection, clean: None) -> AsyncIterator[dict[str, int]]:
    contractor = await conn.fetchval(
        "INSERT INTO contractors (name, cnpj) VALUES ('Transportes São João Ltda', '11222333000181') RETURNING id"
    )
    vehicle = await conn.fetchval("INSERT INTO vehicles (plate) VALUES ('ABC1D23') RETURNING id")
    driver = await conn.fetchval(
        "INSERT INTO drivers (name, cpf, cnh_category) VALUES ('João da Conceição', '52998224725', 'D') RETURNING id"
    )
    yield {"contractor_id": contractor, "vehicle_id": vehicle, "driver_id": driver}
    await conn.execute("DELETE FROM notify_config")  # other tests' occurrences queue nothing


async def test_email_and_webhook_are_sent_retried_and_signed(
    test_db: ScratchDb,
    pool: asyncpg.Pool,
    conn: asyncpg.Connection,
    world: dict[str, int],
    smtp: tuple[Process, mailbox.Maildir],
    receiver: tuple[Process, Path],
) -> None:
    smtp_server, maildir = smtp
    hook_server, inbox = receiver
    settings: Settings = test_db.settings(
        smtp_host="127.0.0.1",
        smtp_port=smtp_server.port,
        smtp_tls="none",
        smtp_from="telemetria@prefeitura.example",
        notify_email_to="fiscal@prefeitura.example, secretaria@prefeitura.example",
        webhook_url=f"http://127.0.0.1:{hook_server.port}/telemetria",
        webhook_secret=SECRET,
        notify_kinds="speeding,run_not_made",
        public_url="https://telemetria.prefeitura.example/",
    )
    await notify.configure(conn, settings)
    facts = {"max_kmh": 75.4, "limit_kmh": 60, "over_kmh": 15.4, "duration_s": 245, "km": 3.1}
    speeding = await occurrence(
        conn, "speeding", world["vehicle_id"], contractor_id=world["contractor_id"], driver_id=world["driver_id"],
        facts=facts,
    )  # fmt: skip
    deviation = await occurrence(conn, "route_deviation", world["vehicle_id"])  # not a chosen kind
    await notify.enqueue(conn, [speeding, deviation])
    await notify.enqueue(conn, [speeding])  # again: nothing more
    assert set(await outbox(conn)) == {(speeding, "email"), (speeding, "webhook")}

    NOW = datetime.now(UTC).replace(microsecond=0) + timedelta(seconds=1)  # the rows are due from now()
    # The receiver fails: the e-mail goes, the webhook is kept with its error for a later attempt.
    (inbox / "mode").write_text("fail")
    assert await notify.deliver_round(pool, settings, now=NOW) == 1
    rows = await outbox(conn)
    assert rows[speeding, "email"]["sent_at"] == NOW
    hook = rows[speeding, "webhook"]
    assert hook["sent_at"] is None and hook["attempts"] == 1 and "HTTP 500" in hook["last_error"]
    assert hook["next_at"] == NOW + timedelta(minutes=1)

    [mail] = list(maildir)
    assert_email(mail, speeding)

    # Not due yet: nothing is sent again, not even the e-mail.
    assert await notify.deliver_round(pool, settings, now=NOW + timedelta(seconds=30)) == 0
    assert len(maildir) == 1 and len(hooks(inbox)) == 1

    # A redirect is a failure too, never followed; the wait doubles.
    (inbox / "mode").write_text("redirect")
    assert await notify.deliver_round(pool, settings, now=NOW + timedelta(minutes=1)) == 0
    hook = (await outbox(conn))[speeding, "webhook"]
    assert hook["attempts"] == 2 and "302" in hook["last_error"] and "não seguido" in hook["last_error"]
    assert hook["next_at"] == NOW + timedelta(minutes=3)

    (inbox / "mode").write_text("ok")
    assert await notify.deliver_round(pool, settings, now=NOW + timedelta(minutes=3)) == 1
    hook = (await outbox(conn))[speeding, "webhook"]
    assert hook["sent_at"] == NOW + timedelta(minutes=3) and hook["last_error"] is None and hook["attempts"] == 3
    received = hooks(inbox)
    assert len(received) == 3  # fail, redirect, ok: each attempt reached the receiver, none followed elsewhere
    headers, body = received[-1]
    assert headers["X-Telemetria-Signature"] == webhook.sign(SECRET, body)
    assert webhook.verify(SECRET, body, headers["X-Telemetria-Signature"])
    assert not webhook.verify("another secret", body, headers["X-Telemetria-Signature"])
    data = json.loads(body)
    assert data["timestamp"] == int(headers["X-Telemetria-Timestamp"]) == int((NOW + timedelta(minutes=3)).timestamp())
    assert data["delivery_id"] == int(headers["X-Telemetria-Delivery"]) == hook["id"]
    occ = data["occurrence"]
    assert (occ["id"], occ["kind"], occ["plate"], occ["article"]) == (speeding, "speeding", "ABC1D23", "Art. 37, X")
    assert occ["contractor"] == "Transportes São João Ltda" and occ["driver"] == "João da Conceição"
    assert occ["facts"] == facts and occ["url"] == f"https://telemetria.prefeitura.example/ocorrencias/{speeding}"
    assert occ["start"] == T0.isoformat()  # the occurrence's own time, not the delivery's
    # every attempt carried the same delivery id (receivers dedupe on it), each signed over its own body
    assert {h["X-Telemetria-Delivery"] for h, _ in received} == {str(hook["id"])}
    assert all(webhook.verify(SECRET, b, h["X-Telemetria-Signature"]) for h, b in received)


async def test_a_mail_server_that_is_down_loses_nothing(
    test_db: ScratchDb,
    pool: asyncpg.Pool,
    conn: asyncpg.Connection,
    world: dict[str, int],
    smtp: tuple[Process, mailbox.Maildir],
) -> None:
    smtp_server, maildir = smtp
    settings: Settings = test_db.settings(
        smtp_host="127.0.0.1",
        smtp_port=smtp_server.port,
        smtp_tls="none",
        smtp_from="telemetria@prefeitura.example",
        notify_email_to="fiscal@prefeitura.example",
        notify_kinds="all",
    )
    await notify.configure(conn, settings)
    silent = await occurrence(conn, "tracker_silent", world["vehicle_id"], facts={"gap_s": 1260, "moved_m": 4200})
    await notify.enqueue(conn, [silent])
    assert set(await outbox(conn)) == {(silent, "email")}  # no webhook configured: no webhook row

    smtp_server.stop()
    now = datetime.now(UTC) + timedelta(seconds=1)
    for attempt in range(1, 4):
        assert await notify.deliver_round(pool, settings, now=now) == 0
        row = (await outbox(conn))[silent, "email"]
        assert row["attempts"] == attempt and row["sent_at"] is None
        assert "e-mail: ConnectionRefusedError" in row["last_error"]
        assert row["next_at"] == now + notify.retry_delay(attempt)
        now = row["next_at"]

    smtp_server.start()
    assert await notify.deliver_round(pool, settings, now=now) == 1
    row = (await outbox(conn))[silent, "email"]
    assert row["sent_at"] == now and row["attempts"] == 4 and row["last_error"] is None
    [mail] = list(maildir)
    assert "Rastreador sem transmitir" in subject(mail)
    text = body_of(mail)
    assert "Tempo sem transmitir: 21 min 00 s" in text and "Deslocamento durante a falha: 4200 m" in text


async def test_notifications_off_queue_nothing(
    test_db: ScratchDb, conn: asyncpg.Connection, world: dict[str, int]
) -> None:
    settings = test_db.settings(webhook_url="http://127.0.0.1:9/x", webhook_secret="k", notify_kinds="all",
                                notify_interval_s=0)  # fmt: skip
    await notify.configure(conn, settings)
    await notify.enqueue(conn, [await occurrence(conn, "speeding", world["vehicle_id"])])
    assert await outbox(conn) == {}


def subject(mail: Message) -> str:
    return str(make_header(decode_header(mail["Subject"])))


def body_of(mail: Message) -> str:
    payload = mail.get_payload(decode=True)
    assert isinstance(payload, bytes)
    return payload.decode(mail.get_content_charset() or "utf-8")


def assert_email(mail: Message, occurrence_id: int) -> None:
    assert mail["From"] == "telemetria@prefeitura.example"
    assert mail["To"] == "fiscal@prefeitura.example, secretaria@prefeitura.example"
    assert subject(mail) == "[Telemetria] Excesso de velocidade — ABC1D23 — 10/03/2026 07:50:00"
    text = body_of(mail)
    for expected in (
        f"Nova ocorrência nº {occurrence_id}",
        "Veículo (placa): ABC1D23",
        "Contratada: Transportes São João Ltda",
        "Condutor: João da Conceição",
        "Início: 10/03/2026 07:50:00",
        "Fim: 10/03/2026 07:54:00",
        "Local: Av. Padre Adolpho Rohl (-10.440100, -62.470200)",
        "Velocidade máxima: 75,4 km/h",
        "Limite de velocidade: 60,0 km/h",
        "Enquadramento: Lei 3.588/2023, Art. 37, X (natureza média)",
        "Situação: detectada",
        f"Ver a ocorrência: https://telemetria.prefeitura.example/ocorrencias/{occurrence_id}",
    ):
        assert expected in text, expected


@pytest.fixture
def certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1, trusted by this test's TLS clients (SSL_CERT_FILE)."""
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))  # ssl.create_default_context() reads it
    return cert, key


@pytest.mark.parametrize(("tls", "cert_flag", "key_flag"), [("starttls", "--tlscert", "--tlskey"),
                                                            ("ssl", "--smtpscert", "--smtpskey")])  # fmt: skip
async def test_email_over_starttls_and_ssl_with_a_verified_certificate(
    tls: str,
    cert_flag: str,
    key_flag: str,
    tmp_path: Path,
    certificate: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    test_db: ScratchDb,
    pool: asyncpg.Pool,
    conn: asyncpg.Connection,
    world: dict[str, int],
) -> None:
    cert, key = certificate
    port, maildir = free_port(), tmp_path / "maildir"
    args = [sys.executable, "-m", "aiosmtpd", "-n", "-l", f"127.0.0.1:{port}", cert_flag, str(cert), key_flag, str(key)]
    server = Process([*args, "-c", "aiosmtpd.handlers.Mailbox", str(maildir)], port)  # STARTTLS required by default
    server.start()
    try:
        settings: Settings = test_db.settings(
            smtp_host="127.0.0.1", smtp_port=port, smtp_tls=tls, smtp_from="telemetria@prefeitura.example",
            notify_email_to="fiscal@prefeitura.example", notify_kinds="speeding",
        )  # fmt: skip
        await notify.configure(conn, settings)
        await notify.enqueue(conn, [await occurrence(conn, "speeding", world["vehicle_id"])])
        assert await notify.deliver_round(pool, settings, now=datetime.now(UTC) + timedelta(seconds=1)) == 1
        [mail] = list(mailbox.Maildir(maildir))
        assert "Excesso de velocidade" in subject(mail)

        # Without the certificate trusted, the server is not believed and nothing is sent (kept for a retry).
        monkeypatch.delenv("SSL_CERT_FILE")
        await notify.enqueue(conn, [second := await occurrence(conn, "speeding", world["vehicle_id"])])
        assert await notify.deliver_round(pool, settings, now=datetime.now(UTC) + timedelta(seconds=1)) == 0
        row = (await outbox(conn))[second, "email"]
        assert row["sent_at"] is None and "CERTIFICATE_VERIFY_FAILED" in row["last_error"]
    finally:
        server.stop()
