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
        ({"big": 2**64}, "cannot be stored exactly"),
        # Numbers: what would not come back as sent is refused, not changed (2^53: I-JSON, RFC 7493).
        ({"n": 2**53 - 1, "m": -(2**53 - 1), "f": 9007199254740991.0, "g": -1.5e-300}, None),
        ({"n": 2**53}, "beyond ±9007199254740991"),
        ({"n": -(2**53)}, "beyond ±9007199254740991"),
        ({"a": [1, {"b": 2**63 - 1}]}, "beyond ±9007199254740991"),
        ({"f": 1.8446744073709552e19}, "beyond ±9007199254740991"),  # how orjson reads 2^64 + 1
        ({"a": float("nan")}, "NaN or an infinite number"),  # orjson would write null
        ({"a": [float("-inf")]}, "NaN or an infinite number"),
        ({"flag": True, "zero": 0}, None),
        # Size: the encoded JSON, at most max_bytes
        ({"a": "x" * 4088}, None),  # {"a":"…"} is 8 bytes around the text: 4096 in all
        ({"a": "x" * 4089}, "4097 bytes as JSON, at most 4096 per fix"),
    ],
)
def test_json_problem(value: object, problem: str | None) -> None:
    got = json_problem(value, 16, 4096)
    assert got is None if problem is None else problem in (got or "")


@pytest.mark.parametrize(("depth", "ok"), [(1, True), (16, True), (17, False), (300, False), (100_000, False)])
def test_json_depth_limit(depth: int, ok: bool) -> None:
    value: object = 1
    for _ in range(depth - 1):
        value = [value]
    value = {"a": value}  # the object itself is level 1
    assert (json_problem(value, 16, 4096) is None) == ok


json_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),  # text() draws NUL and lone surrogates
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=15,
)


@given(json_like)
def test_json_problem_never_raises_and_none_means_writable(value: object) -> None:
    if json_problem(value, 16, 1 << 20) is None:
        encoded = orjson.dumps(value)
        assert b"\\u0000" not in encoded.replace(b"\\\\", b"")
        assert orjson.loads(encoded) == value  # stored exactly: what is read back is what was sent
