"""The report bench's printed result: each time next to its count(*) baseline, then memory and targets."""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Protocol

from bench.table import ms, num
from bench.table import render as table

# Flat memory: 10× the rows may raise the export's peak RSS by at most this factor plus this slack
# (holding the rows instead would cost ~200 B each, i.e. ~190 MiB for 1 M positions).
FLAT_FACTOR, FLAT_SLACK_MIB = 1.5, 4.0


class Timed(Protocol):
    @property
    def best_ms(self) -> float: ...
    @property
    def median_ms(self) -> float: ...


@dataclass(frozen=True)
class Figure:
    what: str
    fixes: int  # fixes the baseline counts
    timing: Timed
    baseline: Timed  # count(*) over the same fixes
    target_ms: float | None  # the median must stay under it


@dataclass(frozen=True)
class Memory:
    rows: int
    bytes: int
    rss_before_kib: int
    rss_peak_kib: int
    traced_peak_kib: int  # tracemalloc's peak over one more export

    @property
    def growth_mib(self) -> float:
        return (self.rss_peak_kib - self.rss_before_kib) / 1024


def render(figures: list[Figure], memory: list[Memory], notes: list[str], reps: int, db: str, dropped: bool) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"telemetria reports bench   {now}   nproc {os.cpu_count()}   best and median of {reps} runs after a "
        "warm-up (live km: fewer runs, no warm-up; CSV: no warm-up, fresh process, 3 runs of the larger size)\n"
        "baseline = SELECT count(*) over the same fixes (same vehicles, same [from, to)), warm; for the live "
        "map poll, the /metrics query that finds each vehicle's newest fix time and nothing else"
    )
    parts = [head, *notes, "", "TIMES", _times(figures), "", "CSV EXPORT MEMORY (fresh process per size)"]
    parts += [_memory(memory), "", "TARGETS", _targets(figures, memory), ""]
    parts.append(f"cleanup: database {db} {'dropped' if dropped else 'NOT dropped'}")
    return "\n".join(parts)


def _times(figures: list[Figure]) -> str:
    headers = ["what", "fixes", "best ms", "median ms", "count(*) best", "count(*) median", "best ÷ count(*)"]
    rows = []
    for f in figures:
        t, b = f.timing, f.baseline
        ratio = t.best_ms / b.best_ms if b.best_ms else 0.0
        rows.append([f.what, num(f.fixes), ms(t.best_ms), ms(t.median_ms), ms(b.best_ms), ms(b.median_ms)])
        rows[-1].append(f"{ratio:.1f}x" if ratio < 100 else f"{ratio:.0f}x")
    return table(headers, rows)


def _memory(memory: list[Memory]) -> str:
    headers = ["positions", "CSV MiB", "RSS before MiB", "peak RSS MiB", "peak growth MiB", "tracemalloc peak MiB"]
    rows = [
        [
            *(num(m.rows), num(m.bytes / 2**20, 1), num(m.rss_before_kib / 1024, 1)),
            *(num(m.rss_peak_kib / 1024, 1), num(m.growth_mib, 1), num(m.traced_peak_kib / 1024, 1)),
        ]
        for m in memory
    ]
    return table(headers, rows)


def _targets(figures: list[Figure], memory: list[Memory]) -> str:
    rows = []
    for f in figures:
        if f.target_ms is not None:
            t = f.timing
            met = t.median_ms < f.target_ms
            rows.append([f.what, f"{ms(t.median_ms)} ms (median)", f"< {f.target_ms:g} ms", _verdict(met)])
    if len(memory) == 2:
        small, big = sorted(memory, key=lambda m: m.rows)
        limit = small.growth_mib * FLAT_FACTOR + FLAT_SLACK_MIB
        rows.append(
            [
                f"CSV peak RSS growth, {big.rows:,} vs {small.rows:,} positions",
                f"{big.growth_mib:.1f} vs {small.growth_mib:.1f} MiB",
                f"flat: ≤ {FLAT_FACTOR:g} × {small.growth_mib:.1f} + {FLAT_SLACK_MIB:g} MiB",
                _verdict(big.growth_mib <= limit),
            ]
        )
    return table(["what", "value", "target", "verdict"], rows)


def _verdict(met: bool) -> str:
    return "met" if met else "NOT met"
