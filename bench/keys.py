"""Per-key integrity of a load run: which fixes got a 2xx, which are stored, and how often. Pure.

The load generators give every request a number g and derive its fixes from it, so a fix's key
(tracker, fix time) names the request that carried it:

    tracker index = g % trackers, k = g // trackers,
    fix j of the request (0 ≤ j < per) is at base + (k * per + j) * step.

A run's answers come back as runs of consecutive g with one outcome (a status, or unanswered);
the database comes back as runs of consecutive g whose requests each have `rows` rows stored
with `distinct` distinct fix times. Intersecting the two accounts for every key:
acknowledged and stored once, acknowledged and missing (lost), stored twice, stored from a
request cut off unanswered, stored after a non-2xx answer, or stored but never sent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields

UNANSWERED = 0  # generated, sent (or about to be) and never answered: cut off at the stop, or a socket error
NOT_SENT = -1  # a request number the load generator never built


@dataclass(frozen=True, slots=True)
class Run:
    """`count` consecutive request numbers from `g0`, all with the same outcome."""

    g0: int
    count: int
    status: int  # an HTTP status, UNANSWERED or NOT_SENT

    @property
    def end(self) -> int:
        return self.g0 + self.count


@dataclass(frozen=True, slots=True)
class Stored:
    """`count` consecutive request numbers from `g0`, each with `rows` rows stored, `distinct` of them distinct."""

    g0: int
    count: int
    rows: int
    distinct: int

    @property
    def end(self) -> int:
        return self.g0 + self.count


def is_2xx(status: int) -> bool:
    return 200 <= status < 300


@dataclass(slots=True)
class Accounting:
    """Fixes (not requests) unless named otherwise; add two with `+` (a phase over several grids)."""

    sent: int = 0  # in requests built by the load generator
    acked: int = 0  # in requests answered 2xx
    stored: int = 0  # rows in the phase's span of `fixes`
    stored_acked: int = 0  # acked and stored (each counted once)
    lost: int = 0  # acked and not stored
    doubled: int = 0  # rows beyond the first of a key
    cut_requests: int = 0  # requests never answered (cut off when the load stopped, or a socket error)
    cut: int = 0  # fixes in them
    cut_stored: int = 0  # of those, stored anyway: reported, never netted against losses
    non_2xx_requests: int = 0
    stored_without_2xx: int = 0  # stored from requests answered with a non-2xx
    unsent: int = 0  # stored rows that no request carried (unknown tracker, off the grid, or never built)
    unidentified: int = 0  # answers that named no request (no request id echoed): cannot be attributed
    miscounted: int = 0  # 2xx answers whose body did not say all their fixes were stored

    def __add__(self, other: Accounting) -> Accounting:
        return Accounting(*(getattr(self, f.name) + getattr(other, f.name) for f in fields(self)))

    def problems(self) -> list[str]:
        """What makes this run's integrity fail; empty when every acknowledged fix is stored exactly once."""
        out = []
        if self.lost:
            out.append(f"{self.lost:,} acknowledged fixes not stored")
        if self.doubled:
            out.append(f"{self.doubled:,} rows store a key a second time")
        if self.unsent:
            out.append(f"{self.unsent:,} stored rows no request carried")
        if self.unidentified:
            out.append(f"{self.unidentified:,} answers named no request (no X-Request-Id echoed)")
        if self.miscounted:
            out.append(f"{self.miscounted:,} 2xx answers did not report all their fixes as stored")
        return out


def account(
    answers: Sequence[Run],
    stored: Sequence[Stored],
    per: int,
    *,
    off_grid_rows: int = 0,
    unidentified: int = 0,
    miscounted: int = 0,
) -> Accounting:
    """Every key of every request against the rows stored for it.

    `answers` and `stored` are sorted by g0 and do not overlap within themselves; a request number
    past the last answer run was never built. `off_grid_rows` are stored rows in the span that no
    request number can name (unknown tracker, a fix time between grid steps).
    """
    a = Accounting(unsent=off_grid_rows, unidentified=unidentified, miscounted=miscounted)
    for r in answers:
        if r.status == NOT_SENT:
            continue
        a.sent += r.count * per
        if is_2xx(r.status):
            a.acked += r.count * per
        elif r.status == UNANSWERED:
            a.cut_requests += r.count
            a.cut += r.count * per
        else:
            a.non_2xx_requests += r.count
    for s, status, n in _overlaps(answers, stored):
        a.stored += n * s.rows
        a.doubled += n * (s.rows - s.distinct)
        once = n * min(s.distinct, per)
        if status == NOT_SENT:
            a.unsent += n * s.rows
        elif is_2xx(status):
            a.stored_acked += once
        elif status == UNANSWERED:
            a.cut_stored += once
        else:
            a.stored_without_2xx += once
    a.stored += off_grid_rows
    a.lost = a.acked - a.stored_acked
    return a


def _overlaps(answers: Sequence[Run], stored: Sequence[Stored]) -> Iterable[tuple[Stored, int, int]]:
    """(stored run, outcome, how many request numbers) for every stretch where the two meet."""
    i = 0
    for s in stored:
        g = s.g0
        while g < s.end:
            while i < len(answers) and answers[i].end <= g:
                i += 1
            if i == len(answers) or answers[i].g0 > g:
                # No answer run covers g: never built (past the end, or a gap the generator skipped).
                stop = s.end if i == len(answers) else min(s.end, answers[i].g0)
                yield s, NOT_SENT, stop - g
            else:
                stop = min(s.end, answers[i].end)
                yield s, answers[i].status, stop - g
            g = stop


def runs(statuses: Iterable[int], g0: int = 0) -> list[Run]:
    """Run-length encoding of one outcome per consecutive request number from `g0`."""
    out: list[Run] = []
    for status in statuses:
        if out and out[-1].status == status:
            last = out[-1]
            out[-1] = Run(last.g0, last.count + 1, status)
        else:
            out.append(Run(out[-1].end if out else g0, 1, status))
    return out
