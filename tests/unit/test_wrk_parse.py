"""bench.wrk reads wrk's latency distribution (padded lines of a second or more too) and fixes.lua's lines."""

from __future__ import annotations

import pytest

from bench.keys import Run
from bench.wrk import parse

OUT = "\n".join(
    [
        "Running 10s test @ http://127.0.0.1:8000",
        "  Latency Distribution",
        "     50%  183.91ms",
        "     75%  812.00ms",
        "     90%    2.11s ",  # wrk's own trailing blank
        "     99%    6.51s ",
        "BENCH summary 4 10000000",
        "BENCH status 200 1",
        "BENCH status 503 3",
    ]
)


def test_latencies_of_seconds_are_read_despite_wrks_trailing_blank() -> None:
    r = parse(OUT)
    assert (r.p50_ms, r.p90_ms, r.p99_ms) == (183.91, 2110.0, 6510.0)
    assert r.statuses == {200: 1, 503: 3} and r.requests == 4


RUNS_OUT = "\n".join(
    [
        "     50%    1.00ms",
        "     90%    2.00ms",
        "     99%    3.00ms",
        "BENCH summary 5 1000000",
        "BENCH errors 0 1 0 0 0",
        "BENCH generated 7",
        "BENCH status 200 4",
        "BENCH status 503 1",
        "BENCH unidentified 0",
        "BENCH miscounted 3 0 1 0",
        "BENCH run 0 3 200",
        "BENCH run 3 1 503",
        "BENCH run 4 1 200",
        "BENCH run 5 2 0",
    ]
)


def test_each_request_numbers_outcome_is_read_as_runs() -> None:
    r = parse(RUNS_OUT)
    assert r.runs == [Run(0, 3, 200), Run(3, 1, 503), Run(4, 1, 200), Run(5, 2, 0)]
    assert (r.ok, r.non_2xx, r.miscounted, r.socket_errors) == (4, {503: 1}, 1, {"read": 1})


def test_throughput_counts_2xx_answers_only() -> None:
    r = parse(RUNS_OUT)
    assert r.ok_per_s == 4.0  # 5 answered in 1 s, one of them a 503


def test_runs_that_do_not_tile_the_request_numbers_are_refused() -> None:
    with pytest.raises(RuntimeError, match="tile"):
        parse(RUNS_OUT.replace("BENCH run 4 1 200", "BENCH run 5 1 200"))


def test_runs_that_disagree_with_the_answer_count_are_refused() -> None:
    with pytest.raises(RuntimeError, match="runs name"):
        parse(RUNS_OUT.replace("BENCH run 3 1 503", "BENCH run 3 1 0"))
