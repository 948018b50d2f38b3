"""docs/verification.md's worked example: every value it prints is what telemetria/seals/canonical.py computes."""

from __future__ import annotations

from datetime import UTC, date, datetime
from pathlib import Path

from telemetria.seals import canonical

DOC = (Path(__file__).resolve().parents[2] / "docs" / "verification.md").read_text(encoding="utf-8")
DAY = date(2026, 3, 2)
FIXES = [  # the example CSV's rows, as stored (UTC)
    (datetime(2026, 3, 2, 10, 40, 12, tzinfo=UTC), -10.4375123, -62.4668301, 30.04),
    (datetime(2026, 3, 2, 10, 40, 42, tzinfo=UTC), -10.4373023, -62.4669001, 33.34),
    (datetime(2026, 3, 2, 10, 41, 12, tzinfo=UTC), -10.4370923, -62.4669701, None),
    (datetime(2026, 3, 2, 10, 41, 42, tzinfo=UTC), -10.4368823, -62.4670401, 39.94),
]


def test_the_worked_example_is_what_the_service_computes() -> None:
    lines = [canonical.line(*f) for f in FIXES]
    for text in lines:
        assert f"'{text.rstrip()}'" in DOC  # the printf lines
    sha = canonical.digest(lines)
    assert DOC.count(sha) >= 4  # the seals table, printf, the script, the leaf's text
    leaf = canonical.leaf(1, DAY, 1, 4, sha, None)
    assert f"'1;2026-03-02;1;4;{sha};'" in DOC and f"{leaf}  -" in DOC
    others = [canonical.leaf(2, DAY, 1, 512, "a" * 64, "b" * 64), canonical.leaf(3, DAY, 2, 301, "c" * 64, "d" * 64)]
    assert f"leaf 2 = {others[0]}" in DOC and f"leaf 3 = {others[1]}" in DOC
    root = canonical.merkle_root([leaf, *others])
    assert f"{root}  -" in DOC
    assert canonical.merkle_path([leaf, *others], 0) == [("R", others[0]), ("R", others[1])]


def test_the_page_states_the_serialization_of_canonical_py() -> None:
    flat = " ".join(DOC.split())
    rules = (
        "in **UTC**, truncated to the second", "with exactly 6 decimals", "with exactly 1 decimal",
        "line feed `\\n` (LF", "64 lowercase hex digits",
        "`vehicle_id;yyyy-mm-dd;version;fixes;sha256;previous_sha256`",
        "in increasing `vehicle_id` order", "carrying an odd last one up unchanged", "One leaf is its own root",
    )  # fmt: skip
    for rule in rules:
        assert rule in flat, rule
    assert canonical.EMPTY_SHA256 in DOC
