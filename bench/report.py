"""The bench's printed result: figures, per-key integrity and the targets with their verdicts.

`render` is the plain-text report of bench.ingest; `targets` and `headline` are the same verdicts
and figures as data and as a Markdown table (bench.measurements writes them to docs/).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from bench.copy_ceiling import ROWS_PER_COPY
from bench.phases import PhaseResult
from bench.table import ms, num, pct
from bench.table import render as table

if TYPE_CHECKING:
    from bench.ingest import Outcome

TARGET_BATCH_VS_COPY = 0.60  # issue 37
TARGET_SINGLE_VS_BARE = 0.50
TARGET_CONNS = (32, 128)  # single-fix targets hold at these concurrencies; 8 is shown, not judged
TARGET_P99_MS = 50.0


@dataclass(frozen=True, slots=True)
class Target:
    key: tuple[str, int | None, int]  # ("vs bare" | "p99" | "vs COPY", workers, conns)
    what: str
    value: str
    target: str
    met: bool
    why_not: str = ""  # besides the figure: non-2xx answers or failed integrity make a figure untrustworthy

    @property
    def verdict(self) -> str:
        if self.met and not self.why_not:
            return "met"
        return "NOT met" + (f" ({self.why_not})" if self.why_not else "")


def caveats(*phases: PhaseResult | None) -> str:
    """Why figures of these phases cannot support a verdict, if they cannot: non-2xx answers, integrity."""
    out = []
    for r in phases:
        if r is None:
            continue
        bad = sum(r.non_2xx.values()) + sum(r.socket_errors.values())
        if bad:
            out.append(f"{_label(r)} c={r.conns}: {bad:,} non-2xx answers or socket errors")
        if r.problems:
            out.append(f"{_label(r)} c={r.conns}: integrity failed")
    return "; ".join(out)


def _measured(results: list[PhaseResult]) -> list[PhaseResult]:
    return [r for r in results if r.kind != "warm-up"]


def _by(results: list[PhaseResult], kind: str, workers: int | None = 1) -> dict[int, PhaseResult]:
    return {r.conns: r for r in results if r.kind == kind and (workers is None or r.workers == workers)}


def best_copy(results: list[PhaseResult]) -> PhaseResult | None:
    return max((r for r in results if r.kind == "COPY"), key=lambda r: r.rows_per_s, default=None)


def targets(results: list[PhaseResult]) -> list[Target]:
    """Each target with its verdict; a figure from a phase with non-2xx answers or failed integrity is not met."""
    out: list[Target] = []
    bare, single = _by(results, "bare"), _by(results, "single")
    for c in TARGET_CONNS:
        s, b = single.get(c), bare.get(c)
        if s is None:
            continue
        if b is not None and b.req_per_s:
            ratio = s.req_per_s / b.req_per_s
            met = ratio >= TARGET_SINGLE_VS_BARE
            what = f"single-fix 2xx/s ÷ bare no-op, {c} connections"
            target = f"≥ {TARGET_SINGLE_VS_BARE:.0%}"
            out.append(Target(("vs bare", 1, c), what, f"{ratio:.0%}", target, met, caveats(s, b)))
        what, p99 = f"single-fix p99, {c} connections", f"{s.p99_ms:.1f} ms"
        out.append(Target(("p99", 1, c), what, p99, f"< {TARGET_P99_MS:g} ms", s.p99_ms < TARGET_P99_MS, caveats(s)))
    copy = best_copy(results)
    for r in _measured(results):
        if r.kind == "batch" and copy is not None and copy.rows_per_s:
            ratio = r.rows_per_s / copy.rows_per_s
            what = f"1,000-fix batches ({r.workers} worker{'s' * (r.workers != 1)}, {r.conns} conns) ÷ COPY"
            met, target = ratio >= TARGET_BATCH_VS_COPY, f"≥ {TARGET_BATCH_VS_COPY:.0%}"
            out.append(Target(("vs COPY", r.workers, r.conns), what, f"{ratio:.0%}", target, met, caveats(r, copy)))
    return out


def render(out: Outcome) -> str:
    now = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    head = (
        f"telemetria ingest bench   {now}   nproc {os.cpu_count()}   {out.wrk} (1 thread)   "
        f"{out.plan.duration_s:g} s per phase\n"
        "bare: Starlette route + orjson, no work (the limit); stack: the service's own app (ingest front, middleware)"
        " with a no-op ingest route; fastapi: FastAPI + 13-field pydantic model (what a typical FastAPI app costs);"
        " same uvicorn flags and requests\n"
        f"single: one fix per POST; batch: {{'fixes': [1,000]}} per POST; COPY: asyncpg "
        f"copy_records_to_table, {ROWS_PER_COPY:,} rows per statement (its requests = statements)\n"
        "2xx/s and fixes/s count 2xx answers only (fixes: acknowledged and found stored by key); p50/p99 are of all "
        "answers, so a phase with non-2xx answers cannot meet a target\n"
        "CPU in % of one core: server = uvicorn and its workers, db = the whole local cluster, "
        "client = wrk (or this process for COPY), machine = all cores (other work on the machine included)"
    )
    measured = _measured(out.results)
    failures = out.failures()
    parts = [
        head,
        "",
        "THROUGHPUT AND LATENCY",
        _figures(measured),
        "",
        "INTEGRITY, BY KEY (tracker, fix time), in fixes",
        _integrity([r for r in out.results if r.integrity]),
        LEGEND,
        f"(vehicle_id, ts) keys stored more than once in the whole database: {out.duplicate_keys}",
        "",
        "SINGLE FIXES AGAINST BOTH BASELINES (1 worker each)",
        _baselines(measured),
        "",
        "TARGETS",
        table(
            ["what", "value", "target", "verdict"], [[t.what, t.value, t.target, t.verdict] for t in targets(measured)]
        ),
        "",
        "INTEGRITY FAILED: " + "; ".join(failures)
        if failures
        else "INTEGRITY OK: every fix acknowledged in every phase is stored exactly once",
        f"cleanup: database {out.db_name} {'dropped' if out.dropped else 'NOT dropped'}; servers stopped; "
        f"logs in {out.log_dir}",
    ]
    return "\n".join(parts)


LEGEND = """\
sent: in requests wrk built; acked: in 2xx answers; lost: acked and not stored; doubled: rows storing a key
again; unsent: stored rows no request carried (lost, doubled and unsent must be 0). cut: requests wrk built
but never saw answered (in flight when its time ran out, or a socket error) and their fixes, of which
`stored` landed anyway; they are reported, never netted against losses. non-2xx stored: fixes of requests
answered otherwise that are stored anyway (a retry would be answered "duplicate")."""


def _label(r: PhaseResult) -> str:
    return r.kind if r.workers is None else f"{r.kind} {r.workers}w"


def _figures(rows: list[PhaseResult]) -> str:
    headers = ["what", "conns", "secs", "answered", "2xx/s", "fixes/s", "p50 ms", "p99 ms", "non-2xx"]
    headers += ["server", "db", "client", "machine"]
    out = []
    for r in rows:
        non2xx = sum(r.non_2xx.values()) + sum(r.socket_errors.values())
        c = r.cpu
        out.append(
            [
                *(_label(r), str(r.conns), num(r.duration_s, 1), num(r.requests), num(r.req_per_s), num(r.rows_per_s)),
                ms(r.p50_ms),
                *(ms(r.p99_ms), num(non2xx), pct(c.server_pct), pct(c.db_pct), pct(c.client_pct), pct(c.machine_pct)),
            ]
        )
    return table(headers, out)


def _integrity(rows: list[PhaseResult]) -> str:
    headers = ["phase", "conns", "sent", "acked", "stored", "lost", "doubled", "unsent", "cut req/fixes"]
    headers += ["cut stored", "non-2xx stored", "non-2xx by status", "verdict"]
    out = []
    for r in rows:
        i = r.integrity
        assert i is not None
        statuses = ", ".join(f"{code}: {n:,}" for code, n in r.non_2xx.items())
        errors = ", ".join(f"{name}: {n:,}" for name, n in r.socket_errors.items())
        out.append(
            [
                *(_label(r), str(r.conns), num(i.sent), num(i.acked), num(i.stored), num(i.lost), num(i.doubled)),
                *(num(i.unsent), f"{i.cut_requests:,}/{i.cut:,}", num(i.cut_stored), num(i.stored_without_2xx)),
                "; ".join(x for x in (statuses, errors) if x) or "-",
                "FAIL" if r.problems else "ok",
            ]
        )
    return table(headers, out)


def _baselines(rows: list[PhaseResult]) -> str:
    bare, stack, fastapi = _by(rows, "bare"), _by(rows, "stack"), _by(rows, "fastapi")
    headers = ["conns", "service 2xx/s", "p99 ms", "bare 2xx/s", "÷ bare", "stack 2xx/s", "stack ÷ bare"]
    headers += ["fastapi 2xx/s", "÷ fastapi", "caveats"]
    out = []
    for c, s in sorted(_by(rows, "single").items()):
        b, k, f = bare.get(c), stack.get(c), fastapi.get(c)
        out.append(
            [
                *(str(c), num(s.req_per_s), ms(s.p99_ms), num(b.req_per_s) if b else "-", _ratio(s, b)),
                *(num(k.req_per_s) if k else "-", _ratio(k, b) if k else "-"),
                *(num(f.req_per_s) if f else "-", _ratio(s, f), caveats(s, b, k, f) or "-"),
            ]
        )
    return table(headers, out)


def _ratio(r: PhaseResult, base: PhaseResult | None) -> str:
    return f"{r.req_per_s / base.req_per_s:.0%}" if base and base.req_per_s else "-"


def headline(results: list[PhaseResult]) -> str:
    """The headline table of docs/measurements.md: each load against its baseline(s), and the verdict of its target."""
    measured = _measured(results)
    bare, stack, fastapi = _by(measured, "bare"), _by(measured, "stack"), _by(measured, "fastapi")
    verdicts = {t.key: t for t in targets(measured)}
    rows = []
    for s in (r for r in measured if r.kind == "single"):
        b, k, f = bare.get(s.conns), stack.get(s.conns), fastapi.get(s.conns)
        judged = [verdicts.get((name, s.workers, s.conns)) for name in ("vs bare", "p99")]
        rows.append(
            [
                f"single fixes, {s.conns} connections" + ("" if s.workers == 1 else f", {s.workers} workers"),
                f"{_k(s.req_per_s)} req/s, p99 {ms(s.p99_ms)} ms",
                f"{_k(b.req_per_s)} req/s" if b and s.workers == 1 else "",
                _ratio(s, b) if s.workers == 1 else "",
                f"{_k(f.req_per_s)} req/s" if f and s.workers == 1 else "",
                _ratio(s, f) if s.workers == 1 else "",
                f"{_k(k.req_per_s)} req/s" if k and s.workers == 1 else "",
                _verdicts([t for t in judged if t is not None]),
            ]
        )
    copy = best_copy(measured)
    for r in (r for r in measured if r.kind == "batch"):
        t = verdicts.get(("vs COPY", r.workers, r.conns))
        rows.append(
            [
                f"1,000-fix batches, {r.conns} connections" + ("" if r.workers == 1 else f", {r.workers} workers"),
                f"{_k(r.rows_per_s)} fixes/s",
                f"COPY ({copy.conns} conn): {_k(copy.rows_per_s)} rows/s" if copy else "",
                t.value if t else "",
                "",
                "",
                "",
                _verdicts([t] if t else []),
            ]
        )
    headers = ["load", "service", "limit: bare no-op / COPY", "ratio", "FastAPI no-op (typical app)", "ratio"]
    headers.append("the service's app, no-op ingest route")
    headers.append("targets (≥ 50 % of the limit; p99 < 50 ms at 32 and 128 connections)")
    return _markdown(headers, rows)


def _verdicts(ts: list[Target]) -> str:
    return "; ".join(f"{t.target}: {t.verdict}" for t in ts) or "not judged"


def _k(x: float) -> str:
    return f"{x / 1000:,.1f}k" if x >= 1000 else f"{x:,.0f}"


def _markdown(headers: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)
