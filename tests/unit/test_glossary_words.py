"""One word for one thing (issue 36): no page, file, kind name or message uses a word the glossary rejects.

docs/glossario.md's table lists, for each word the service uses, the synonyms it must not ("Não use"). This test
reads that column, so a word added there is enforced here, and scans what reaches a reader:

- the page templates (telemetria/web/templates/*.html, without their comments);
- the page scripts (telemetria/web/static/js/**, ours, without their comments);
- every string of the Python package that is not a docstring (the files' column names and row words, the PDF's
  texts, the kind names of telemetria/words.py, the audit log's words, the messages of the API and the CLI).

A rejected word that the glossary qualifies ("ponto (para posição)") or that is also a right word elsewhere
("registro" of "registro de auditoria") cannot be judged by a scan: it is listed in CONTEXTUAL with the reason,
and a test makes sure every rejected word is either scanned or listed there.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "telemetria"
GLOSSARY = ROOT / "docs" / "glossario.md"
WEB = PACKAGE / "web"

# Rejected words a plain scan cannot judge: the glossary's own words use them in another sense.
CONTEXTUAL = {
    "registro": "'registro de auditoria' is the glossary's word; a registry row is a 'registro' too",
    "sinal": "'sem sinal' (the live map's state) and 'lacunas de sinal' name the signal, not a posição",
    "monitor": "the role's code in the API and the pages' scripts; the pages name the role 'servidor'",
    "log": "code (console.log, logging); the pages say 'registro de auditoria'",
    "escala": "'a escala do CTB' names the severity scale; only 'escala' for an atribuição is rejected",
    "assinatura": "the boletim's signature lines ('assinatura do fiscal') are signatures; only the selo's is rejected",
    "dia útil": "'dias úteis' are the legal deadlines' business days (Lei 14.133/2021, Art. 157, 166); only a "
    "school day must not be called so",
}
# Quotes of another product's own labels, which the page must repeat as that product shows them.
QUOTES = re.compile(r"«[^»]*»")


def rejected() -> dict[str, str]:
    """The glossary's "Não use" words, each with the word to use instead; qualified ones ("x (para y)") omitted."""
    out: dict[str, str] = {}
    for line in GLOSSARY.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("**"):
            continue
        use = re.sub(r"\*\*", "", cells[0])
        for word in re.split(r",\s*", re.sub(r"\([^)]*\)", lambda m: "(…)", cells[3])):
            word = word.strip()
            if word and word not in {"—", "-"} and "(…)" not in word:
                out[word.lower()] = use
    return out


def forms(word: str) -> list[str]:
    """The word and its plural (corrida → corridas, execução → execuções, viagem → viagens)."""
    last = word.split()[-1]
    if last.endswith("ção"):
        plural = last[:-3] + "ções"
    elif last.endswith("m"):
        plural = last[:-1] + "ns"
    elif last[-1] in "aeiou":
        plural = last + "s"
    else:
        return [word]
    return [word, word[: -len(last)] + plural]


def pattern(words: list[str]) -> re.Pattern[str]:
    alts = sorted({f for w in words for f in forms(w)}, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(re.escape(a) for a in alts) + r")(?![\w-])", re.IGNORECASE)


_JS_COMMENT = re.compile(r"/\*.*?\*/|(^|\s)//[^\n]*", re.S)
_HTML_COMMENT = re.compile(r"<!--.*?-->|\{#.*?#\}", re.S)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def texts() -> Iterator[tuple[str, int, str]]:
    """(file, line, text) of everything a reader may see."""
    for path in sorted((WEB / "templates").glob("*.html")):
        source = _HTML_COMMENT.sub("", path.read_text(encoding="utf-8"))
        for n, line in enumerate(source.splitlines(), 1):
            yield str(path.relative_to(ROOT)), n, line
    for path in sorted((WEB / "static" / "js").rglob("*.js")):
        source = _JS_COMMENT.sub(lambda m: m.group(1) or "", path.read_text(encoding="utf-8"))
        for n, line in enumerate(source.splitlines(), 1):
            yield str(path.relative_to(ROOT)), n, line
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docs = _docstring_nodes(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
                yield str(path.relative_to(ROOT)), node.lineno, node.value


def offences(words: list[str]) -> list[str]:
    rule = pattern(words)
    out = []
    for where, line, text in texts():
        for m in rule.finditer(QUOTES.sub("", text)):
            out.append(f"{where}:{line}: {m.group(0)!r} in {text.strip()[:100]!r}")
    return out


def test_the_glossary_lists_the_rejected_words() -> None:
    words = rejected()
    assert words["execução"] == "corrida" and "viagem" in words  # viagem: neither a corrida nor a trecho
    assert words["feita"] == "realizada / parcial / não realizada"
    assert "ponto" not in words  # "ponto (para posição)": qualified, a ponto is the right word for a route's place
    assert "percurso" in words and "dispositivo" in words


def test_every_rejected_word_is_scanned_or_its_context_is_said() -> None:
    assert set(CONTEXTUAL) <= set(rejected()), "a CONTEXTUAL word the glossary no longer rejects"


def test_no_page_file_or_message_uses_a_rejected_word() -> None:
    words = [w for w in rejected() if w not in CONTEXTUAL]
    assert len(words) >= 10
    found = offences(words)
    assert not found, "words the glossary rejects (docs/glossario.md):\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("text", "hit"),
    [
        ("Execuções devidas hoje", True),
        ("Viagem não realizada", True),
        ("Não feitas", True),
        ("Corridas devidas", False),
        ("Dever descumprido", False),  # a word boundary: not "cumprida"
        ("feito_fora_do_horario", False),  # a code, not a word
        ("no Traccar Client, «Identificador do dispositivo»", False),  # another product's label, quoted
    ],
)
def test_the_scan_finds_a_rejected_word_and_only_it(text: str, hit: bool) -> None:
    rule = pattern([w for w in rejected() if w not in CONTEXTUAL])
    assert bool(rule.search(QUOTES.sub("", text))) is hit
