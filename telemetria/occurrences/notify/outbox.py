"""New occurrences of chosen kinds announced by e-mail and by a signed webhook, through an outbox in the database.

`enqueue` (called by the detector in the transaction that inserts occurrences) writes one `notify_outbox` row per
occurrence and configured channel, for the configured kinds: the service writes its channels and kinds from its
settings into `notify_config` when it starts (`configure`), so enqueue needs no settings. `deliver_round` claims the
due rows (a lease, so several processes never send the same row at once), sends each and records the outcome: sent,
or the error and the next attempt after a backoff of 1, 2, 4… min up to an hour — never dropped, so a notification
goes through once the server is back. Delivery is at least once (a crash between sending and recording sends again);
receivers dedupe on the delivery id.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

import asyncpg
import httpx

from telemetria.db import DB_ERRORS
from telemetria.occurrences.documents import wording
from telemetria.occurrences.model import Kind
from telemetria.occurrences.notify import mail, webhook
from telemetria.occurrences.notify import queries as notify_queries
from telemetria.settings import Settings

log = logging.getLogger(__name__)

EMAIL, WEBHOOK = "email", "webhook"
BATCH = 50  # rows one round claims
LEASE = timedelta(minutes=5)  # longer than an SMTP or webhook attempt can take
FIRST_RETRY_S, LAST_RETRY_S = 60.0, 3600.0
WEBHOOK_TIMEOUT_S = 10.0


def kinds(settings: Settings) -> list[str]:
    """The kinds announced; ValueError naming TELEMETRIA_NOTIFY_KINDS when one is not a kind."""
    names = settings.notify_kind_names
    if "all" in names:
        return [k.value for k in Kind]
    unknown = [n for n in names if n not in {k.value for k in Kind}]
    if unknown:
        known = ", ".join(k.value for k in Kind)
        raise ValueError(f"TELEMETRIA_NOTIFY_KINDS: unknown kinds {', '.join(unknown)} (known: all, {known})")
    return names


def channels(settings: Settings) -> list[str]:
    """The channels the settings configure: e-mail with a server and recipients, the webhook with its URL."""
    if settings.notify_interval_s <= 0:
        return []
    out = [EMAIL] if settings.smtp_host and settings.notify_recipients else []
    return out + ([WEBHOOK] if settings.webhook_url else [])


def retry_delay(attempts: int) -> timedelta:
    """How long after its `attempts`-th failure a notification is tried again (doubling, at most an hour)."""
    return timedelta(seconds=min(FIRST_RETRY_S * 2 ** max(attempts - 1, 0), LAST_RETRY_S))


def link(settings: Settings, occurrence_id: int) -> str:
    """The occurrence's page: absolute with TELEMETRIA_PUBLIC_URL, else a path."""
    return f"{(settings.public_url or '').rstrip('/')}/ocorrencias/{occurrence_id}"


async def configure(conn: asyncpg.Connection, settings: Settings) -> None:
    """Record the channels and kinds this service announces (what `enqueue` writes rows for)."""
    chosen = channels(settings)
    await notify_queries.configure(conn, chosen, kinds(settings) if chosen else [])


async def enqueue(conn: asyncpg.Connection, occurrence_ids: Sequence[int]) -> None:
    """Outbox rows for these new occurrences, for the configured kinds and channels (idempotent)."""
    if occurrence_ids:
        await notify_queries.enqueue(conn, occurrence_ids)


def payload(occ: Mapping[str, Any], url: str) -> dict[str, Any]:
    """The webhook's JSON: the occurrence as the API's list shows it, with its Portuguese name and page."""
    route = {"code": occ["route_code"], "name": occ["route_name"]} if occ.get("route_code") else None
    return {
        "event": "occurrence",
        "occurrence": {
            "id": occ["id"],
            "kind": occ["kind"],
            "kind_name": wording.kind_name(occ["kind"]),
            "article": occ["article"],
            "severity": occ["severity"],
            "vehicle_id": occ["vehicle_id"],
            "plate": occ["plate"],
            "contractor_id": occ["contractor_id"],
            "contractor": occ["contractor"],
            "driver": occ["driver"],
            "route_id": occ["route_id"],
            "route": route,
            "start": occ["start_ts"].isoformat(),
            "end": occ["end_ts"].isoformat() if occ["end_ts"] else None,
            "lat": occ["lat"],
            "lon": occ["lon"],
            "place": occ["place"],
            "facts": occ["facts"],
            "status": occ["status"],
            "detected_at": occ["detected_at"].isoformat(),
            "late": occ["late"],
            "url": url,
        },
    }


async def _send(
    settings: Settings, client: httpx.AsyncClient, row: Mapping[str, Any], occ: Mapping[str, Any], now: datetime
) -> None:
    url = link(settings, int(occ["id"]))
    if row["channel"] == EMAIL:
        sender = settings.smtp_from or ""
        msg = mail.message(occ, sender=sender, to=settings.notify_recipients, url=url, sent_at=now)
        await mail.send(settings, msg)
    else:
        secret = settings.webhook_secret.get_secret_value() if settings.webhook_secret else ""
        await webhook.post(
            client,
            settings.webhook_url or "",
            secret,
            payload(occ, url),
            timestamp=int(now.timestamp()),
            delivery=int(row["id"]),
        )


async def deliver_round(pool: asyncpg.Pool, settings: Settings, *, now: datetime | None = None) -> int:
    """Send the due notifications once; returns how many went through (the failed ones wait for their retry)."""
    now = now or datetime.now(UTC)
    chosen = channels(settings)
    if not chosen:
        return 0
    async with pool.acquire() as conn:
        rows = await notify_queries.claim(conn, now, BATCH, LEASE, chosen)
        occs = await notify_queries.occurrences(conn, [int(r["occurrence_id"]) for r in rows])
    sent = 0
    async with httpx.AsyncClient(timeout=WEBHOOK_TIMEOUT_S, follow_redirects=False) as client:
        for row in rows:
            occ = occs.get(int(row["occurrence_id"]))
            try:
                if occ is None:
                    raise LookupError(f"ocorrência {row['occurrence_id']} não encontrada")
                await _send(settings, client, row, occ, now)
            except Exception as e:  # any failure of one message (a bad header too) is that row's: retried later
                retry_at = now + retry_delay(int(row["attempts"]))
                log.warning("notification %s (%s) failed, retry at %s: %s", row["id"], row["channel"], retry_at, e)
                async with pool.acquire() as conn:
                    await notify_queries.failed(conn, int(row["id"]), retry_at, str(e))
                continue
            async with pool.acquire() as conn:
                await notify_queries.sent(conn, int(row["id"]), now)
            sent += 1
    return sent


async def periodic(pool: asyncpg.Pool, settings: Settings) -> None:
    """The lifespan task: record the configuration, then deliver every `notify_interval_s` (0: configure only)."""
    while True:  # the database may be down at start: keep trying to record what this service announces
        try:
            async with pool.acquire() as conn:
                await configure(conn, settings)
            break
        except DB_ERRORS as e:
            log.warning("notifications: cannot record the configuration yet: %s", e)
            await asyncio.sleep(max(settings.notify_interval_s, 5.0))
    if settings.notify_interval_s <= 0:
        return
    while True:
        try:
            await deliver_round(pool, settings)
        except DB_ERRORS as e:
            log.warning("notifications: round skipped, database unavailable: %s", e)
        except Exception:  # one bad round must not end notifications for the life of the process
            log.exception("notifications: round failed")
        await asyncio.sleep(settings.notify_interval_s)
