"""The ingest in-flight budget: requests in progress and the body bytes they hold, per process and per tracker."""

from __future__ import annotations

from telemetria.http import overloaded


class InflightBudget:
    """A per-process cap on ingest requests in progress and the body bytes they hold (buffered, decoded, queued),
    and a share of it that one tracker may hold at most.

    Only an identified tracker claims: the HTTP edge checks the credential first, so a request from nobody in
    particular never holds any of it, and one tracker (or one stolen token) that opens many slow uploads is shed
    once it holds its share, while every other tracker still fits. A claim on the declared body length is taken
    before the body is read; one that does not fit is answered 503 + Retry-After at once, having cost almost
    nothing. Plain counters: only the event loop's thread touches them, and no `await` falls between a check
    and its update.
    """

    def __init__(self, max_bytes: int, max_requests: int, share_bytes: int, share_requests: int) -> None:
        self.max_bytes = max_bytes
        self.max_requests = max_requests
        self.share_bytes = share_bytes
        self.share_requests = share_requests
        self.bytes = 0
        self.requests = 0
        self._held: dict[int, list[int]] = {}  # tracker id → [bytes, requests], while it holds any

    def held_by(self, tracker_id: int) -> tuple[int, int]:
        """(bytes, requests) this tracker holds now."""
        bytes_, requests = self._held.get(tracker_id, (0, 0))
        return bytes_, requests

    def hold(self, tracker_id: int, declared_bytes: int) -> Hold:
        """A claim by one tracker on one request and `declared_bytes` of body, for a `with` block; 503 if it
        does not fit the process's budget or the tracker's share of it."""
        mine_bytes, mine_requests = self.held_by(tracker_id)
        if mine_requests >= self.share_requests:
            raise overloaded(f"this tracker has {mine_requests} requests in progress, at most {self.share_requests}")
        if self.requests >= self.max_requests:
            raise overloaded(f"{self.requests} requests in progress")
        self._fits(mine_bytes, declared_bytes)
        self.requests += 1
        self.bytes += declared_bytes
        self._held[tracker_id] = [mine_bytes + declared_bytes, mine_requests + 1]
        return Hold(self, tracker_id, declared_bytes)

    def _fits(self, mine_bytes: int, extra: int) -> None:
        if mine_bytes + extra > self.share_bytes:
            raise overloaded(
                f"{mine_bytes + extra} body bytes of this tracker would be in progress, at most {self.share_bytes}"
            )
        if self.bytes + extra > self.max_bytes:
            raise overloaded(f"{self.bytes + extra} body bytes would be in progress, at most {self.max_bytes}")

    def _grow(self, tracker_id: int, extra: int) -> None:
        mine = self._held[tracker_id]
        self._fits(mine[0], extra)
        self.bytes += extra
        mine[0] += extra

    def _give_back(self, tracker_id: int, nbytes: int) -> None:
        self.requests -= 1
        self.bytes -= nbytes
        mine = self._held[tracker_id]
        mine[0] -= nbytes
        mine[1] -= 1
        if mine[1] == 0:
            del self._held[tracker_id]


class Hold:
    """One request's claim on an InflightBudget; released when its `with` block ends, however it ends."""

    __slots__ = ("_budget", "_tracker", "bytes")

    def __init__(self, budget: InflightBudget, tracker_id: int, nbytes: int) -> None:
        self._budget: InflightBudget | None = budget
        self._tracker = tracker_id
        self.bytes = nbytes

    def cover(self, nbytes: int) -> None:
        """Grow the claim to `nbytes` of body (one longer than declared, or undeclared); 503 if it does not fit."""
        budget, extra = self._budget, nbytes - self.bytes
        if budget is None or extra <= 0:
            return
        budget._grow(self._tracker, extra)
        self.bytes = nbytes

    def release(self) -> None:
        budget, self._budget = self._budget, None
        if budget is not None:
            budget._give_back(self._tracker, self.bytes)

    def __enter__(self) -> Hold:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
