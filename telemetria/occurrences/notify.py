"""Notification of new occurrences (the `termo` branch writes the outbox; this is the detector's hook until then)."""

from __future__ import annotations

from collections.abc import Sequence

from telemetria.db import Conn


async def enqueue(conn: Conn, occurrence_ids: Sequence[int]) -> None:
    """Queue the notifications of newly detected occurrences, in the caller's transaction (none yet)."""
    return None
