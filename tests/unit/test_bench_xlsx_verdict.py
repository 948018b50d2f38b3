"""bench.xlsx exits non-zero unless the adopted writer wrote 100,000 rows in under 10 s with a flat peak RSS."""

from __future__ import annotations

from typing import Any

import pytest

from bench import xlsx


def runs(seconds: float, peak_growth_mib: float = 4.0) -> dict[tuple[str, int], dict[str, Any]]:
    small = {"seconds": seconds / 10, "cpu_s": seconds / 10, "rss_kib": 90_000, "peak_kib": 94_000}
    big = {"seconds": seconds, "cpu_s": seconds, "rss_kib": 90_000, "peak_kib": 94_000 + int(peak_growth_mib * 1024)}
    return {(xlsx.ADOPTED, xlsx.ROWS[0]): small, (xlsx.ADOPTED, xlsx.ROWS[1]): big}


def test_the_100k_rows_under_10_s_in_flat_memory_pass() -> None:
    lines, code = xlsx.verdict(runs(9.9))
    assert code == 0 and len(lines) == 2 and all(line.endswith(", met") for line in lines), lines  # time, memory
    lines, code = xlsx.verdict(runs(5.0, 16.0))  # exactly the slack: still flat (fails with `<` for `<=`)
    assert code == 0, lines


@pytest.mark.parametrize(("seconds", "growth"), [(10.0, 0.0), (25.1, 0.0), (5.0, 17.0)])
def test_a_missed_target_exits_non_zero(seconds: float, growth: float) -> None:
    lines, code = xlsx.verdict(runs(seconds, growth))
    assert code == 1 and any("NOT met" in line for line in lines), lines
