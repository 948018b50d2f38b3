"""Docs cannot rot silently: every relative link in README.md and docs/*.md, and its #anchor, resolves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.markdown import DOCS, README, ROOT, anchors, documents, links, slug

EXTERNAL = ("http://", "https://", "mailto:")
# A path written in a code span from the repository's root, such as `telemetria/ingest/fields.py`.
_REPO_PATH = re.compile(r"`((?:telemetria|tests|bench|migrations|scripts|docs)/[\w./*-]*)`")


def broken_links(path: Path, root: Path = ROOT) -> list[str]:
    """Every link of `path` that names a file that does not exist, or a heading its target does not have."""
    path, root = path.resolve(), root.resolve()
    bad = []
    for number, target in links(path.read_text()):
        if target.startswith(EXTERNAL):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        where = f"{path.relative_to(root)}:{number}: {target}"
        if not dest.exists():
            bad.append(f"{where} (no such file)")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            bad.append(f"{where} (no heading with that anchor in {dest.relative_to(root)})")
    return bad


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_and_anchor_resolves(path: Path) -> None:
    assert broken_links(path) == []


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_file_the_text_names_from_the_root_exists(path: Path) -> None:
    """`tests/db/test_auth.py` in a sentence is a claim too: it goes stale when the file moves."""
    named = _REPO_PATH.findall(path.read_text())
    assert [p for p in named if not any(ROOT.glob(p))] == []


def test_the_checker_finds_a_missing_file_and_a_missing_anchor(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## A heading, with `code` (and §§ marks)\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[ok](other.md#a-heading-with-code-and--marks) [self](#page) [web](https://example.org/x)\n"
        "[gone](missing.md) [no anchor](other.md#nowhere)\n"
        "```\n[in code](missing-too.md)\n```\n"
        "`[in a span](missing-three.md)`\n"
    )
    assert broken_links(page, tmp_path) == [
        "page.md:4: missing.md (no such file)",
        "page.md:4: other.md#nowhere (no heading with that anchor in other.md)",
    ]


def test_anchors_are_made_as_github_makes_them() -> None:
    assert slug("Reports (Art. 15 §§4–5, Art. 9, 26, 37–39)") == "reports-art-15-45-art-9-26-3739"
    assert slug("Our JSON API: `POST /api/v1/fixes`") == "our-json-api-post-apiv1fixes"
    assert slug("Crash safety (`bench.chaos`)") == "crash-safety-benchchaos"
    assert anchors("# A\n## B\n## B\n```\n# not a heading\n```\n") == {"a", "b", "b-1"}


def test_the_readme_sends_the_reader_to_every_doc() -> None:
    linked = {target.partition("#")[0] for _, target in links(README.read_text())}
    missing = [f"docs/{p.name}" for p in sorted(DOCS.glob("*.md")) if f"docs/{p.name}" not in linked]
    assert missing == [], f"README.md's 'Where to read next' should link every doc; not linked: {missing}"
