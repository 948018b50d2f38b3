"""Reading the project's Markdown the way its tests need: headings and their anchors, links, code blocks.

Only what README.md and docs/*.md use: ATX headings, inline links, fenced code blocks. Anchors are
made the way GitHub makes them, so a link that works here works there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"

_FENCE = re.compile(r"^\s*(```|~~~)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def documents() -> list[Path]:
    """README.md and every Markdown file under docs/."""
    return [README, *sorted(DOCS.glob("*.md"))]


def prose_lines(text: str) -> list[tuple[int, str]]:
    """(line number, line) for every line outside fenced code blocks."""
    out, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            out.append((number, line))
    return out


def code_blocks(text: str) -> list[str]:
    """The contents of every fenced code block, in order."""
    blocks: list[str] = []
    current: list[str] | None = None
    for line in text.splitlines():
        if _FENCE.match(line):
            if current is None:
                current = []
            else:
                blocks.append("\n".join(current))
                current = None
        elif current is not None:
            current.append(line)
    return blocks


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: its text without markup, lower case, punctuation dropped."""
    text = _CODE_SPAN.sub(lambda m: m.group(2), heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[*_]{1,3}([^*_]+)[*_]{1,3}", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text.strip().lower()).replace(" ", "-")


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    line: int


def headings(text: str) -> list[Heading]:
    return [
        Heading(len(m.group(1)), m.group(2), number)
        for number, line in prose_lines(text)
        if (m := _HEADING.match(line))
    ]


def anchors(text: str) -> set[str]:
    """Every heading's anchor; a repeated one gets -1, -2, … as on GitHub."""
    seen: dict[str, int] = {}
    out = set()
    for h in headings(text):
        base = slug(h.text)
        n = seen.get(base, 0)
        out.add(base if n == 0 else f"{base}-{n}")
        seen[base] = n + 1
    return out


def links(text: str) -> list[tuple[int, str]]:
    """(line number, target) of every inline link outside code blocks and code spans."""
    return [
        (number, m.group(1)) for number, line in prose_lines(text) for m in _LINK.finditer(_CODE_SPAN.sub("", line))
    ]


def section(text: str, title: str) -> str:
    """The text under the `## title` heading, up to the next heading of the same or a higher level."""
    lines = text.splitlines()
    found = [h for h in headings(text) if h.text == title]
    assert found, f"no heading {title!r}"
    start = found[0]
    end = next((h.line for h in headings(text) if h.line > start.line and h.level <= start.level), len(lines) + 1)
    return "\n".join(lines[start.line : end - 1])
