"""bench.report: verdicts stand only on 2xx answers and clean integrity, against the bare no-op and COPY."""

from __future__ import annotations

from pathlib import Path

from bench.ingest import Outcome, Plan
from bench.keys import Accounting
from bench.phases import PhaseResult
from bench.report import headline, targets


def phase(kind: str, conns: int, ok: int, *, per: int = 1, p99: float = 10.0, workers: int | None = 1) -> PhaseResult:
    """`ok` 2xx answers in 1 s, all fixes stored."""
    r = PhaseResult(kind, workers, conns, per, ok, ok, 1.0, 1.0, p99, ok * per)
    if kind not in ("bare", "fastapi"):
        r.integrity = Accounting(sent=ok * per, acked=ok * per, stored=ok * per, stored_acked=ok * per)
    return r


def run(single_32: PhaseResult | None = None, batch: PhaseResult | None = None) -> list[PhaseResult]:
    return [
        phase("bare", 32, 10_000),
        phase("fastapi", 32, 4_000),
        single_32 or phase("single", 32, 6_000),
        phase("bare", 128, 10_000),
        phase("single", 128, 4_000, p99=60.0),
        batch or phase("batch", 8, 100, per=1000),
        phase("COPY", 1, 30, per=10_000, workers=None),
    ]


plan = Plan(5, 2, (32, 128), (8,), (1,), two_workers=False)


def verdicts(results: list[PhaseResult]) -> dict[tuple[str, int | None, int], str]:
    return {t.key: t.verdict for t in targets(results)}


def test_ratios_are_against_the_bare_no_op_and_copy() -> None:
    v = {t.key: (t.value, t.verdict) for t in targets(run())}
    assert v[("vs bare", 1, 32)] == ("60%", "met")
    assert v[("vs bare", 1, 128)] == ("40%", "NOT met")
    assert v[("p99", 1, 128)] == ("60.0 ms", "NOT met")
    assert v[("vs COPY", 1, 8)] == ("33%", "NOT met")


def test_a_phase_with_non_2xx_answers_meets_no_target_whatever_its_figures() -> None:
    shed = phase("single", 32, 6_000)
    shed.requests, shed.non_2xx = 9_000, {503: 3_000}
    v = verdicts(run(single_32=shed))
    assert v[("vs bare", 1, 32)] == "NOT met (single 1w c=32: 3,000 non-2xx answers or socket errors)"
    assert v[("p99", 1, 32)].startswith("NOT met (")


def test_non_2xx_answers_are_not_throughput() -> None:
    shed = phase("single", 32, 6_000)
    shed.requests, shed.non_2xx = 20_000, {503: 14_000}
    assert shed.req_per_s == 6_000


def test_a_phase_whose_integrity_failed_meets_no_target() -> None:
    batch = phase("batch", 8, 300, per=1000)
    assert batch.integrity is not None
    batch.integrity.lost = 1
    assert verdicts(run(batch=batch))[("vs COPY", 1, 8)] == "NOT met (batch 1w c=8: integrity failed)"


def test_the_headline_shows_both_baselines_and_the_verdicts() -> None:
    table = headline(run())
    row_32 = next(line for line in table.splitlines() if line.startswith("| single fixes, 32 connections"))
    assert "6.0k req/s" in row_32 and "10.0k req/s | 60%" in row_32 and "4.0k req/s | 150%" in row_32
    assert "≥ 50%: met; < 50 ms: met" in row_32
    assert "COPY (1 conn): 300.0k rows/s | 33%" in table


def test_an_integrity_failure_in_any_phase_fails_the_run() -> None:
    results = run()
    assert Outcome(plan, "wrk", "db", Path("/tmp"), results).failures() == []
    results[2].integrity.lost = 3  # type: ignore[union-attr]
    assert Outcome(plan, "wrk", "db", Path("/tmp"), results).failures() == [
        "single c=32: 3 acknowledged fixes not stored"
    ]
    assert Outcome(plan, "wrk", "db", Path("/tmp"), run(), duplicate_keys=1).failures() != []
