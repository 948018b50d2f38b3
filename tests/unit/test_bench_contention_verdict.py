"""bench.contention's verdict: the slices of each phase pooled, the loaded p99 against 2× the idle p99, and no fix
refused; it exits 1 otherwise."""

from __future__ import annotations

from typing import Any

from bench.contention import report


def _run(idle: list[list[float]], loaded: list[list[float]], refused: int = 0) -> dict[str, Any]:
    return {"idle": idle, "loaded": loaded, "refused": refused, "public": {}, "verify": {}, "file_bytes": 1,
            "first_s": 1.0}  # fmt: skip


def test_the_slices_are_pooled_before_the_p99() -> None:
    # Idle p99 of the pooled 200 posts is 9 ms (the second slice's), so the limit is 18 ms; one slow loaded slice of
    # 20 ms misses it even though the other loaded slice alone would meet it.
    text, met = report(_run([[0.008] * 100, [0.009] * 100], [[0.010] * 100, [0.020] * 100]), 30.0)
    assert not met and text.endswith("target: loaded p99 < 2x idle p99 (18.0 ms): 20.0 ms, NOT met")
    assert "p99 ms by slice, in the order run: idle 8.0 / 9.0; loaded 10.0 / 20.0" in text
    text, met = report(_run([[0.008] * 100, [0.009] * 100], [[0.010] * 100, [0.017] * 100]), 30.0)
    assert met and text.endswith("17.0 ms, met")


def test_a_refused_fix_fails_whatever_the_latencies() -> None:
    _, met = report(_run([[0.010] * 100], [[0.010] * 100], refused=1), 30.0)
    assert not met
