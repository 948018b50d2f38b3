"""The README's headline benchmark table is the one bench.measurements wrote into docs/measurements.md."""

from __future__ import annotations

from bench.measurements import BEGIN, DOC, END, README, extract_block, replace_block


def test_the_readme_headline_is_the_generated_one_not_a_hand_edited_copy() -> None:
    readme, doc = README.read_text(), DOC.read_text()
    assert readme.count(BEGIN) == 1 and readme.count(END) == 1, "README.md must hold exactly one headline block"
    generated = extract_block(doc)
    assert generated is not None, "docs/measurements.md has no headline block: run python -m bench.measurements"
    assert extract_block(readme) == generated, (
        "README.md's headline table differs from docs/measurements.md: regenerate with "
        "python -m bench.measurements instead of editing either by hand"
    )


def test_the_generated_headline_carries_its_stamp_and_verdicts() -> None:
    block = extract_block(DOC.read_text())
    assert block is not None
    assert "From [docs/measurements.md](docs/measurements.md): commit " in block
    assert "| single fixes, 32 connections |" in block and "| single fixes, 128 connections |" in block
    assert "met" in block  # every judged row says met or NOT met


def test_replacing_the_block_keeps_the_text_around_it() -> None:
    text = f"before\n{BEGIN}\nold table\n{END}\nafter\n"
    new = f"{BEGIN}\nnew table\n{END}"
    assert replace_block(text, new) == f"before\n{new}\nafter\n"
    assert extract_block(replace_block(text, new)) == new
