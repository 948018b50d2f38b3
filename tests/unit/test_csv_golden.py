"""The CSV export's bytes, pinned: the same rows give byte for byte the files main's code wrote before the fast
path of issue 37 (tests/unit/csv_golden.py says how they were made; never regenerate them from the code under
test)."""

from __future__ import annotations

from functools import cache

import pytest

from tests.unit import csv_golden

exports = cache(csv_golden.exports)


@pytest.mark.parametrize("name", sorted(p.name for p in csv_golden.DIR.glob("*.csv")))
def test_export_is_byte_identical_to_the_golden_file(name: str) -> None:
    golden = (csv_golden.DIR / name).read_bytes()
    got = exports()[name]
    if got != golden:  # name the first line that differs, not a megabyte of diff
        for i, (a, b) in enumerate(zip(got.split(b"\r\n"), golden.split(b"\r\n"), strict=False)):
            assert a == b, f"{name}, line {i + 1}"
    assert got == golden
