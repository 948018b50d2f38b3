"""A tracker's store-and-forward memory and what it does with each answer from the server (pure, no I/O)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from itertools import islice
from typing import Literal

import numpy as np

from telemetria.fix import Fix


class TrackerBuffer:
    """Fixes not yet acknowledged, oldest first; when full it forgets the oldest, as trackers do."""

    def __init__(self, capacity: int = 50_000) -> None:
        self._fixes: deque[Fix] = deque()
        self.capacity = capacity

    def __len__(self) -> int:
        return len(self._fixes)

    def push(self, fixes: Iterable[Fix]) -> int:
        """Append fixes; returns how many old ones were pushed out of a full buffer."""
        self._fixes.extend(fixes)
        over = max(0, len(self._fixes) - self.capacity)
        for _ in range(over):
            self._fixes.popleft()
        return over

    def pending(self, limit: int | None = None) -> list[Fix]:
        """The oldest `limit` fixes (all when None), without removing them."""
        return list(islice(self._fixes, limit))

    def ack(self, n: int) -> None:
        """Forget the oldest n fixes: the server has them (or will never take them)."""
        for _ in range(min(n, len(self._fixes))):
            self._fixes.popleft()


Action = Literal["ack", "retry", "drop", "split"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What to do with a batch after an answer; retry_after_s is the server's own wait, seconds."""

    action: Action
    retry_after_s: float | None = None


def classify(status: int | None, retry_after: str | None = None, now: datetime | None = None) -> Outcome:
    """The tracker's reaction to an HTTP status (None: no answer, e.g. connection refused or timed out)."""
    if status is None:
        return Outcome("retry")
    if 200 <= status < 300:
        return Outcome("ack")
    if status == 413:
        return Outcome("split")  # the batch is too big for the server; smaller ones will pass
    # 408 is a timeout reported by a proxy: as transient as a refused connection.
    if status in (408, 429) or status >= 500:
        return Outcome("retry", parse_retry_after(retry_after, now))
    return Outcome("drop")  # other 4xx (and 1xx/3xx): the same request would fail again


def parse_retry_after(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as seconds to wait: delta-seconds or an HTTP date; None when absent or unreadable."""
    if not value:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


class Backoff:
    """Waits between failed attempts, wall seconds: doubling from base_s up to cap_s, with jitter.

    A server's Retry-After is honoured as a minimum; jitter only lengthens it so that a fleet told to
    wait does not come back all in the same second.
    """

    def __init__(self, rng: np.random.Generator, base_s: float = 1.0, cap_s: float = 60.0, jitter: float = 0.2) -> None:
        self.rng = rng
        self.base_s = base_s
        self.cap_s = cap_s
        self.jitter = jitter
        self.failures = 0

    def failed(self, retry_after_s: float | None = None) -> float:
        """Record a failure; returns how long to wait before the next attempt, seconds."""
        self.failures += 1
        if retry_after_s is not None:
            return min(retry_after_s, 10 * self.cap_s) * (1.0 + self.jitter * float(self.rng.uniform()))
        delay = min(self.cap_s, self.base_s * 2.0 ** (self.failures - 1))
        return delay * (1.0 + self.jitter * float(self.rng.uniform(-1.0, 1.0)))

    def succeeded(self) -> None:
        """Record an answer that ended the failures."""
        self.failures = 0


class Outbox:
    """A tracker's buffer plus when it may send next; `now` is any monotonic clock in seconds."""

    def __init__(self, backoff: Backoff, *, max_batch: int = 500, capacity: int = 50_000) -> None:
        self.buffer = TrackerBuffer(capacity)
        self.backoff = backoff
        self.max_batch = max_batch
        self.retry_at = float("-inf")

    def __len__(self) -> int:
        return len(self.buffer)

    def add(self, fixes: Iterable[Fix]) -> int:
        """Buffer new fixes; returns how many old ones a full buffer lost."""
        return self.buffer.push(fixes)

    def batch(self, now: float) -> list[Fix]:
        """The next fixes to post, oldest first; empty when there are none or while backing off."""
        return self.buffer.pending(self.max_batch) if now >= self.retry_at else []

    def settle(self, sent: int, outcome: Outcome, now: float) -> None:
        """Apply the answer to the batch of `sent` oldest fixes posted last."""
        if outcome.action == "ack":
            self.buffer.ack(sent)
            self.backoff.succeeded()
            self.retry_at = float("-inf")
        elif outcome.action == "drop":
            self.buffer.ack(sent)
        elif outcome.action == "split" and sent > 1:
            self.max_batch = max(1, sent // 2)
        elif outcome.action == "split":
            self.buffer.ack(sent)  # a single fix that is too large will never fit
        else:
            self.retry_at = now + self.backoff.failed(outcome.retry_after_s)


Key = tuple[str, datetime]  # (tracker unique_id, fix time to the millisecond)


def fix_key(unique_id: str, ts: datetime) -> Key:
    """The key a tracker's fix is stored under: its unique_id and its time cut to the ms, as the wire carries it."""
    ts = ts.astimezone(UTC)
    return unique_id, ts.replace(microsecond=ts.microsecond // 1000 * 1000)


@dataclass
class KeyLedger:
    """Which fix keys a fleet sent, which a 2xx acknowledged, and which rode in a request that got none.

    For checking a run against the database key by key: every acknowledged key must be stored, every
    stored key must have been sent, and a stored key never acknowledged must have been in a request
    whose answer was lost (or was not a 2xx).
    """

    sent: set[Key] = field(default_factory=set)
    acked: set[Key] = field(default_factory=set)
    unanswered: set[Key] = field(default_factory=set)
    # Fixes a 2xx called duplicates that had never been acknowledged: an earlier request stored them
    # but got no 2xx (the process died after the commit, the link dropped, or the database went
    # away between committing and confirming it, which the service can only answer with a 503).
    stored_unanswered: int = 0

    def sending(self, unique_id: str, batch: Sequence[Fix]) -> list[Key]:
        """Record a request about to be posted; returns its keys in request order."""
        keys = [fix_key(unique_id, f.ts) for f in batch]
        self.sent.update(keys)
        return keys

    def answered(self, keys: Sequence[Key], duplicates: int, rejected: Iterable[int] = ()) -> None:
        """Record a 2xx: all keys but the rejected positions are stored; `duplicates` is the answer's count."""
        bad = set(rejected)
        ok = [k for i, k in enumerate(keys) if i not in bad]
        distinct = set(ok)
        # Duplicates a client can explain: keys acknowledged before, and repeats within the batch.
        known = len(distinct & self.acked) + len(ok) - len(distinct)
        self.stored_unanswered += max(0, duplicates - known)
        self.acked |= distinct

    def failed(self, keys: Sequence[Key]) -> None:
        """Record a request that got no 2xx (an error status or no answer at all)."""
        self.unanswered.update(keys)
