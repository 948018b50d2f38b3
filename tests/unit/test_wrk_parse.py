"""bench.wrk reads wrk's latency distribution, including the padded lines of latencies of a second or more."""

from __future__ import annotations

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
