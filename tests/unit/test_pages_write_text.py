"""Page scripts and templates never write data as HTML: a lint over the source, and the rule it enforces.

Leaflet writes a tooltip's, popup's or divIcon's content as HTML when it is a string, so every such
content must be built as DOM nodes with `tip(...)` (mapbase.js) or `el(...)` (api.js) right where it
is handed over; and no script may use the browser's HTML sinks at all. The browser test
tests/browser/test_markup_is_text.py proves the pages with markup stored in every free-text field.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from telemetria.web.pages import HERE, templates

SCRIPTS = sorted((HERE / "static" / "js").rglob("*.js"))  # ours; Leaflet lives in static/vendor/
SINKS = re.compile(r"\b(innerHTML|outerHTML|insertAdjacentHTML|document\.write(ln)?|createContextualFragment|"
                   r"DOMParser|srcdoc|parseHTMLUnsafe|setHTMLUnsafe)\b")  # fmt: skip
CONTENT = re.compile(r"\.(bindTooltip|bindPopup|setTooltipContent|setPopupContent|setContent)\(\s*(?P<arg>[^)]{0,40})")
ICON_HTML = re.compile(r"\bhtml\s*(?P<sep>[:,}])\s*(?P<arg>[^,}]{0,40})")
BUILDERS = re.compile(r"(tip|el)\(")
COMMENT = re.compile(r"(^|\s)//\s.*$", re.M)


def problems(source: str) -> list[str]:
    """Where a script would write data as HTML: one line per place, empty when none."""
    code = COMMENT.sub("", source)
    out = [f"uses {m.group(1)}" for m in SINKS.finditer(code)]
    for m in CONTENT.finditer(code):
        if not BUILDERS.match(m.group("arg")):
            out.append(f"{m.group(1)}({m.group('arg')}…) is not built with tip() or el()")
    for m in ICON_HTML.finditer(code):
        if m.group("sep") != ":" or not BUILDERS.match(m.group("arg")):
            out.append(f"icon html {m.group('sep')} {m.group('arg')}… is not built with tip() or el()")
    return out


def test_there_are_page_scripts_to_check() -> None:
    names = {p.name for p in SCRIPTS}
    assert {"mapbase.js", "live.js", "history.js", "draw.js", "stops.js", "zones.js"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.relative_to(HERE).as_posix())
def test_no_page_script_writes_data_as_html(script: Path) -> None:
    assert problems(script.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(
    "line",
    [
        "marker.bindTooltip(title);",
        "line.bindTooltip(`Rota ${r.code}: ${r.name}`).addTo(layers);",
        'marker.bindPopup("");',
        "m.setPopupContent(popup(v));",
        "cursor.setTooltipContent(m.title);",
        "tooltip.setContent('<b>' + name + '</b>');",
        "box.innerHTML = name;",
        'row.insertAdjacentHTML("beforeend", html);',
        "L.divIcon({ className: 'x', html: `<span>${name}</span>` });",
        "L.divIcon({ className: 'x', html });",
        "document.write(name);",
    ],
)
def test_the_lint_finds_html_written_from_data(line: str) -> None:
    assert problems(line), line


@pytest.mark.parametrize(
    "line",
    [
        "dot(latlng, colour, title).bindTooltip(tip(title));",
        "marker.bindPopup(tip(...details(v)));",
        'm.bindTooltip(el("span", {}, name));',
        "L.divIcon({ className: 'x', html: el(\"span\", {}, String(i + 1)), iconSize: [24, 24] });",
        "note.textContent = name; // not innerHTML: text",
        "fetch('https://example.org/x'); // a comment after a URL",
    ],
)
def test_the_lint_lets_nodes_and_text_through(line: str) -> None:
    assert problems(line) == []


def test_templates_escape_what_they_are_given() -> None:
    for path in (HERE / "templates").glob("*.html"):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"\|\s*safe\b|autoescape\s+false|Markup\(", text), path.name
    for path in HERE.glob("*.py"):
        assert not re.search(r"\bMarkup\b|autoescape\s*=\s*False", path.read_text(encoding="utf-8")), path.name
    markup = '<img src=x id=injected><meta http-equiv="refresh" content="0;url=http://127.0.0.1:9/">'
    page = templates.get_template("error.html").render(
        title=markup, message=markup, user=None, menu=[], current="/", version="v", config={"next": markup}
    )
    assert "<img" not in page and "<meta http-equiv" not in page
    assert "&lt;img src=x id=injected&gt;" in page
