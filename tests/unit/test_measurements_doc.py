"""docs/measurements.md is what bench.measurements writes, and no other document copies its figures."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from bench.measurements import BEGIN, DOC, END, INTRO, Section, document, extract_block, replace_block, stamp_line
from tests.markdown import README, ROOT, documents, links

# What stamp_line writes, whatever the run.
STAMP = re.compile(
    r"^Measured at commit [0-9a-f]{7,40}(?: \+ uncommitted changes to .+?)?, \d{4}-\d{2}-\d{2}, \d+ cores,"
    r" load average .+ before and .+ after; `python -m bench\.measurements.*`\.$",
    re.M,
)


def test_the_doc_is_the_generators_from_its_first_line() -> None:
    text = DOC.read_text()
    assert text.startswith(INTRO), "docs/measurements.md does not start as bench.measurements writes it"
    assert text.count(BEGIN) == 1 and text.count(END) == 1, "docs/measurements.md must hold one headline block"


def test_the_generated_headline_carries_its_stamp_and_verdicts() -> None:
    block = extract_block(DOC.read_text())
    assert block is not None, "docs/measurements.md has no headline block: run python -m bench.measurements"
    assert STAMP.search(block), "the headline's last line is not the stamp bench.measurements writes"
    assert "| single fixes, 32 connections |" in block and "| single fixes, 128 connections |" in block
    assert judged_rows_ok(block), "a headline row with a target does not say, for each, met or NOT met"


VERDICT = re.compile(r"^(?:[^:;]+: (?:met|NOT met))(?:; [^:;]+: (?:met|NOT met))*$")


def judged_rows_ok(block: str) -> bool:
    """Every row of the headline table ends in its verdicts: "not judged", or each target's "met" / "NOT met"
    (issue 33: `"met" in block` held for a table whose rows said nothing of the kind, since "NOT met" contains it)."""
    rows = [ln for ln in block.splitlines() if ln.startswith("| ") and not ln.startswith("| load")]
    cells = [[c.strip() for c in ln.strip().strip("|").split("|")][-1] for ln in rows]
    return bool(cells) and all(c == "not judged" or VERDICT.match(c) for c in cells)


def test_the_verdict_check_tells_a_verdict_from_a_word() -> None:
    head = "| load | service | targets |\n|---|---|---|\n"
    assert judged_rows_ok(head + "| a | 1 | ≥ 50%: NOT met; < 50 ms: met |\n| b | 2 | not judged |")
    assert not judged_rows_ok(head + "| a | 1 | metres |")
    assert not judged_rows_ok(head + "| a | 1 | ≥ 50%: NOT met; < 50 ms: |")
    assert not judged_rows_ok(head + "| a | 1 | |")
    assert not judged_rows_ok(head)


def test_the_stamp_the_generator_writes_is_the_one_checked() -> None:
    line = stamp_line(
        "03aa8fa7556c",
        datetime(2026, 12, 1, tzinfo=UTC),
        2,
        "9.87 1 2",
        "2.81 3 4",
        "python -m bench.measurements --quick",
    )
    assert STAMP.fullmatch(line)
    doc = document(
        "| | |\n|---|---|",
        f"{BEGIN}\n\ntable\n\n{line}\n\n{END}",
        [Section("ingest", "python -m bench.ingest", "out", 0)],
    )
    assert doc.startswith(INTRO) and extract_block(doc) == f"{BEGIN}\n\ntable\n\n{line}\n\n{END}"


def test_no_other_document_copies_the_figures() -> None:
    """The headline lives in one file; the others link to it instead of carrying a copy that goes stale."""
    block = extract_block(DOC.read_text()) or ""
    rows = [line for line in block.splitlines() if line.startswith("| ") and "---" not in line]
    for path in documents():
        if path == DOC:
            continue
        text = path.read_text()
        where = path.relative_to(ROOT)
        assert BEGIN not in text and END not in text, f"{where} holds a headline block: link to {DOC.name} instead"
        assert not [row for row in rows if row in text], f"{where} copies rows of the generated headline"


def test_the_readme_and_the_hand_written_pages_point_at_the_figures() -> None:
    assert "docs/measurements.md" in {t.partition("#")[0] for _, t in links(README.read_text())}
    for name in ("performance.md", "reliability.md"):
        targets = {t.partition("#")[0] for _, t in links((DOC.parent / name).read_text())}
        assert "measurements.md" in targets, f"docs/{name} should link the generated figures"


def test_replacing_the_block_keeps_the_text_around_it() -> None:
    text = f"before\n{BEGIN}\nold table\n{END}\nafter\n"
    new = f"{BEGIN}\nnew table\n{END}"
    assert replace_block(text, new) == f"before\n{new}\nafter\n"
    assert extract_block(replace_block(text, new)) == new
