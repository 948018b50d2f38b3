"""A signed webhook: POST the JSON body with an HMAC-SHA256 signature of its raw bytes (docs/operations.md).

Headers: `X-Telemetria-Signature: sha256=<hex HMAC-SHA256 of the raw body, key = TELEMETRIA_WEBHOOK_SECRET>`,
`X-Telemetria-Timestamp: <unix seconds>` (the body carries the same `timestamp`, so it is signed too: a receiver
refuses old ones to stop replays) and `X-Telemetria-Delivery: <id>` (the same on every retry: receivers dedupe on
it, since delivery is at least once). Redirects are not followed: a 3xx is a failure, like any non-2xx.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping
from typing import Any

import httpx
import orjson

from telemetria import __version__

SIGNATURE = "X-Telemetria-Signature"
TIMESTAMP = "X-Telemetria-Timestamp"
DELIVERY = "X-Telemetria-Delivery"


class DeliveryError(Exception):
    """The receiver did not take the notification (unreachable, timed out, or answered other than 2xx)."""


def sign(secret: str | bytes, body: bytes) -> str:
    """The signature header's value: `sha256=` + hex HMAC-SHA256 of `body` with `secret`."""
    key = secret.encode() if isinstance(secret, str) else secret
    return "sha256=" + hmac.new(key, body, hashlib.sha256).hexdigest()


def verify(secret: str | bytes, body: bytes, header: str | None) -> bool:
    """Whether `header` is the signature of `body` with `secret` (compared in constant time)."""
    return header is not None and hmac.compare_digest(sign(secret, body), header.strip())


def body(payload: Mapping[str, Any]) -> bytes:
    """The exact bytes that are signed and sent."""
    return orjson.dumps(payload, option=orjson.OPT_NON_STR_KEYS)


async def post(
    client: httpx.AsyncClient, url: str, secret: str, payload: Mapping[str, Any], *, timestamp: int, delivery: int
) -> int:
    """POST the payload; its HTTP status when 2xx, else DeliveryError saying what went wrong."""
    raw = body({**payload, "timestamp": timestamp, "delivery_id": delivery})
    headers = {
        "Content-Type": "application/json",
        "User-Agent": f"Telemetria/{__version__}",
        SIGNATURE: sign(secret, raw),
        TIMESTAMP: str(timestamp),
        DELIVERY: str(delivery),
    }
    try:
        response = await client.post(url, content=raw, headers=headers, follow_redirects=False)
    except httpx.TimeoutException as e:
        raise DeliveryError(f"webhook: sem resposta a tempo ({type(e).__name__})") from None
    except httpx.HTTPError as e:
        raise DeliveryError(f"webhook: falha de conexão ({type(e).__name__}: {e})") from None
    if response.is_redirect:
        where = response.headers.get("location", "?")
        raise DeliveryError(f"webhook: HTTP {response.status_code}, redirecionamento para {where} não seguido")
    if not response.is_success:
        raise DeliveryError(f"webhook: HTTP {response.status_code} {response.text[:200]!r}")
    return response.status_code
