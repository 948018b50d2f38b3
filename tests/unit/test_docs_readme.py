"""The README stays a front door, and the layout maps name the tree as it is.

README.md: at most 12,000 characters, the two commands, and the folder map near the top. The maps
(README.md's, one line per folder, and docs/architecture.md's, every module) name only paths that
exist, and every package of `telemetria`: moving, adding or removing a package or a module fails
here until the map says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tests.markdown import DOCS, README, ROOT, code_blocks, section

README_BUDGET = 12_000
ARCHITECTURE = DOCS / "architecture.md"
PACKAGE = ROOT / "telemetria"
# A file (with one of these extensions) or a folder (ending in /), as the maps write them.
_NAME = re.compile(
    r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:py|sql|sh|js|css|lua|md|html|toml|yml|yaml|txt)|(?:[\w.-]+/)+)(?![\w/.-])"
)


@dataclass(frozen=True)
class Entry:
    """A line of a layout map: the folder (or file) it starts with, and every path it names."""

    line: str
    base: Path
    named: tuple[Path, ...]
    missing: tuple[str, ...]


def layout_map(text: str) -> str:
    blocks = code_blocks(section(text, "Layout"))
    assert blocks, "the Layout section has no map (a fenced code block)"
    return blocks[0]


def entries(layout: str, root: Path = ROOT) -> list[Entry]:
    """Each line's paths: its first word from the repository's root, the others from that folder (else the root).

    A line that starts with spaces continues the line above it.
    """
    out: list[Entry] = []
    base: Path | None = None
    for line in layout.splitlines():
        if not line.strip():
            continue
        rest = line
        if not line[0].isspace():
            first, _, rest = line.partition(" ")
            base = root / first
        assert base is not None, f"the map's first line must start with a path: {line!r}"
        named, missing = [base], [] if base.exists() else [str(base.relative_to(root))]
        for m in _NAME.finditer(rest):
            name = m.group(1)
            here = (base if base.is_dir() else base.parent) / name
            found = here if here.exists() else root / name
            (named.append(found) if found.exists() else missing.append(name))
        out.append(Entry(line, base, tuple(named), tuple(missing)))
    return out


def packages() -> list[str]:
    """Every folder of `telemetria` that is a Python package, as `telemetria/<name>/`."""
    return sorted(f"{p.parent.relative_to(ROOT)}/" for p in PACKAGE.rglob("__init__.py") if p.parent != PACKAGE)


def top_packages() -> list[str]:
    return [p for p in packages() if p.count("/") == 2]


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if p.name != "__init__.py" and "__pycache__" not in p.parts)


def lines_starting_with(layout: str) -> set[str]:
    return {line.split(" ", 1)[0] for line in layout.splitlines() if line and not line[0].isspace()}


def test_the_readme_is_a_front_door_not_a_manual() -> None:
    size = len(README.read_text())
    assert size <= README_BUDGET, (
        f"README.md is {size:,} characters, over its {README_BUDGET:,}: move the detail into docs/ "
        "(trackers, api, operations, architecture, performance, reliability) and link it"
    )


def test_the_readme_gives_the_two_commands_and_ci_runs_the_second() -> None:
    text = README.read_text()
    commands = code_blocks(section(text, "The two commands"))[0]
    assert [line.split()[0:2] for line in commands.splitlines()] == [["./dev", "run"], ["./dev", "test"]]
    assert "`.ci/run` calls `./dev test`" in text
    assert "exec ./dev test" in (ROOT / ".ci" / "run").read_text()


def test_the_layout_map_is_near_the_top() -> None:
    text = README.read_text()
    assert text.index("\n## Layout\n") < 4_000, "the layout map belongs in the first screens of the README"


def test_the_readme_map_names_only_what_exists_and_every_package() -> None:
    layout = layout_map(README.read_text())
    assert [(e.line, e.missing) for e in entries(layout) if e.missing] == []
    missing = [p for p in top_packages() if p not in lines_starting_with(layout)]
    assert missing == [], f"README.md's layout map has no line for {missing}"


def test_the_architecture_map_names_only_what_exists_and_every_module() -> None:
    layout = layout_map(ARCHITECTURE.read_text())
    found = entries(layout)
    assert [(e.line, e.missing) for e in found if e.missing] == []
    missing = [p for p in packages() if p not in lines_starting_with(layout)]
    assert missing == [], f"docs/architecture.md's layout map has no line for {missing}"
    named = {p.resolve() for e in found for p in e.named}
    unnamed = [str(m.relative_to(ROOT)) for m in modules() if m.resolve() not in named]
    assert unnamed == [], f"docs/architecture.md's layout map does not name {unnamed}"


def test_the_map_reader_catches_a_moved_module(tmp_path: Path) -> None:
    (tmp_path / "pkg" / "sub").mkdir(parents=True)
    (tmp_path / "pkg" / "app.py").write_text("")
    (tmp_path / "pkg" / "sub" / "x.py").write_text("")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("")
    layout = (
        "pkg/        app.py (wiring) · cli.py · GET /api/v1/live · JSON/CSV · docs/a.md\n"
        "            sub/x.py, sub/ · e.g. SIRGAS 2000 / UTM\n"
        "pkg/gone/   y.py\n"
    )
    got = [(e.line.split()[0], e.missing) for e in entries(layout, tmp_path)]
    assert got == [("pkg/", ("cli.py",)), ("sub/x.py,", ()), ("pkg/gone/", ("pkg/gone", "y.py"))]
