"""The configuration reference cannot drift from telemetria/settings.py.

docs/operations.md's settings tables are what `python -m telemetria.settings_doc` writes from the
fields of `Settings` (their docstrings are the descriptions), and every TELEMETRIA_* name the
docs mention is a setting or one of the few variables read elsewhere.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from telemetria import settings_doc
from telemetria.settings import Settings
from tests.markdown import ROOT, documents

_NAME = re.compile(r"\bTELEMETRIA_[A-Z0-9_]*[A-Z0-9]\b")


class Toy(BaseSettings):
    """A settings class the generator is tried on (its docstrings are read from this file's source)."""

    model_config = SettingsConfigDict(env_prefix="TELEMETRIA_", use_attribute_docstrings=True)

    flush_s: float = Field(default=2.0, gt=0)
    """how often to flush"""
    mode: str = "a"
    """which mode | with a pipe"""
    limit_bytes: int = 16 * 1024


def test_the_doc_holds_exactly_what_the_generator_writes() -> None:
    current = settings_doc.extract_block(settings_doc.DOC.read_text())
    assert current is not None, "docs/operations.md has no settings block: run python -m telemetria.settings_doc"
    assert current == settings_doc.block(), (
        "docs/operations.md's settings tables differ from telemetria/settings.py: "
        "run python -m telemetria.settings_doc (never edit the tables by hand)"
    )
    assert settings_doc.main(["--check"]) == 0


def test_every_setting_has_a_row_and_every_row_is_a_setting() -> None:
    block = settings_doc.extract_block(settings_doc.DOC.read_text()) or ""
    rows = set(re.findall(r"^\| `(TELEMETRIA_\w+)` \|", block, re.M))
    fields = {settings_doc.variable(name) for name in Settings.model_fields}
    others = {v.name for v in settings_doc.OTHER_VARIABLES}
    assert rows == fields | others
    assert not fields & others, "a variable is listed both as a setting and as read outside the settings"


def test_every_setting_has_a_description() -> None:
    assert [name for name, info in Settings.model_fields.items() if not (info.description or "").strip()] == []


def test_the_variables_read_outside_the_settings_are_read_somewhere() -> None:
    source = "\n".join(p.read_text() for p in (ROOT / "telemetria").rglob("*.py") if p.name != "settings_doc.py")
    unread = [v.name for v in settings_doc.OTHER_VARIABLES if f'"{v.name}"' not in source]
    assert unread == [], f"settings_doc.OTHER_VARIABLES lists variables no code reads: {unread}"


@pytest.mark.parametrize("path", documents(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_variable_the_docs_name_exists(path: Path) -> None:
    known = {settings_doc.variable(name) for name in Settings.model_fields} | {
        v.name for v in settings_doc.OTHER_VARIABLES
    }
    unknown = sorted({n for n in _NAME.findall(path.read_text()) if n not in known})
    assert unknown == [], f"{path.relative_to(ROOT)} names variables that are not settings: {unknown}"


def test_the_generator_writes_a_row_per_field_and_refuses_an_undocumented_one() -> None:
    with pytest.raises(settings_doc.UndocumentedSetting, match="limit_bytes"):
        settings_doc.settings_table(Toy)

    class Documented(Toy):
        limit_bytes: int = Field(default=16 * 1024, description="the most bytes")

    assert settings_doc.settings_table(Documented)[2:] == [
        "| `TELEMETRIA_FLUSH_S` | number (seconds), > 0 | `2` | how often to flush |",
        "| `TELEMETRIA_MODE` | text | `a` | which mode \\| with a pipe |",
        "| `TELEMETRIA_LIMIT_BYTES` | integer (bytes) | `16384` (16 KiB) | the most bytes |",
    ]


def test_replacing_the_block_keeps_the_text_around_it() -> None:
    text = f"intro\n{settings_doc.BEGIN}\nold\n{settings_doc.END}\nafter\n"
    new = settings_doc.block()
    assert settings_doc.replace_block(text, new) == f"intro\n{new}\nafter\n"
    with pytest.raises(ValueError, match="no settings block"):
        settings_doc.replace_block("no markers here", new)


def test_a_settings_unit_is_read_from_its_names_longest_suffix() -> None:
    """A rate is not a duration: `_requests_per_s` was described as "seconds" by the `_s` rule."""
    assert settings_doc.unit_text("public_requests_per_s") == "requests a second"
    assert settings_doc.unit_text("body_min_bytes_per_s") == "bytes a second"
    assert settings_doc.unit_text("body_timeout_s") == "seconds"
    assert settings_doc.unit_text("public_burst") == ""
