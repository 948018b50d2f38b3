"""What the fixes table can hold: text without NUL or lone surrogates, jsonb orjson can write, bounded nesting."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from telemetria.ingest.storable import json_problem, text_problem


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("CARD42", None),
        ("Motorista 🚌 José 漢字", None),
        ("'); DROP TABLE fixes; --", None),
        ("C:\\u0000", None),  # a backslash and five characters, not a NUL
        ("\x00", "NUL"),
        ("ab\x00", "NUL"),
        ("\ud800", "lone surrogate"),
        ("x\udfffy", "lone surrogate"),
    ],
)
def test_text_problem(text: str, problem: str | None) -> None:
    got = text_problem(text)
    assert got is None if problem is None else problem in (got or "")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ({"batt": 80, "note": "ok", "nested": {"a": [1, 2.5, None, True]}}, None),
        ({"path": "C:\\u0000", "two": "\\\\u0000"}, None),  # escaped backslashes before u0000: still no NUL
        ({"a": "x\x00"}, "NUL"),
        ({"a": {"\x00": 1}}, "NUL"),
        ({"a": ["\\\x00"]}, "NUL"),  # a backslash, then a NUL
        ({"a": "\ud800"}, "cannot be stored"),
        ({"\udfff": 1}, "cannot be stored"),
        ({"big": 2**64}, "cannot be stored"),
        ({"a": float("nan")}, None),  # written as null
    ],
)
def test_json_problem(value: object, problem: str | None) -> None:
    got = json_problem(value, 16)
    assert got is None if problem is None else problem in (got or "")


@pytest.mark.parametrize(("depth", "ok"), [(1, True), (16, True), (17, False), (300, False), (100_000, False)])
def test_json_depth_limit(depth: int, ok: bool) -> None:
    value: object = 1
    for _ in range(depth - 1):
        value = [value]
    value = {"a": value}  # the object itself is level 1
    assert (json_problem(value, 16) is None) == ok


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),  # text() draws NUL and lone surrogates
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=15,
)


@given(json_like)
def test_json_problem_never_raises_and_none_means_writable(value: object) -> None:
    if json_problem(value, 16) is None:
        assert b"\\u0000" not in orjson.dumps(value).replace(b"\\\\", b"")
