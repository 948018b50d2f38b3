"""What the fixes table can hold exactly, checked per item so that one bad value never sinks its batch.

PostgreSQL text refuses U+0000 and the UTF-8 encoder refuses lone surrogates (JSON can carry both as escapes);
jsonb goes through orjson (telemetria.db), which refuses integers wider than 64 bits and nesting past 255 and
writes NaN and infinities as null. A number beyond ±(2^53 − 1) is not stored either: orjson reads an integer
wider than 64 bits as a float without a word, and JSON readers that use doubles (browsers among them) would
change it when reading it back (I-JSON, RFC 7493); above 2^53 a double holds no fraction, so this bound
refuses only what would not come back as it was sent.
"""

from __future__ import annotations

import math
import re
from typing import Any

import orjson

# An escaped NUL in orjson's output: an odd run of backslashes before u0000 (an even run is a literal "\u0000").
NUL_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")
MAX_EXACT_INT = 2**53 - 1
_TOO_WIDE = f"a number beyond ±{MAX_EXACT_INT} (2^53 − 1) cannot be stored exactly; send it as text"


def text_problem(text: str) -> str | None:
    """Why a text column cannot hold `text` (a NUL, a lone surrogate), or None if it can."""
    if "\x00" in text:
        return "contains a NUL character"
    if not text.isascii():
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return "contains invalid Unicode (a lone surrogate)"
    return None


def json_problem(value: Any, max_depth: int, max_bytes: int) -> str | None:
    """Why jsonb cannot hold `value` exactly in at most `max_bytes` of JSON (too deep, a number it would change,
    unencodable, a NUL in its text, too large), or None if it can."""
    if _deeper_than(value, max_depth):
        return f"nested deeper than {max_depth} levels"
    if problem := _inexact(value):
        return problem
    try:
        encoded = orjson.dumps(value)
    except orjson.JSONEncodeError as e:  # a lone surrogate
        return f"cannot be stored as JSON ({e})"
    if NUL_ESCAPE.search(encoded):
        return "text contains a NUL character"
    if len(encoded) > max_bytes:
        return f"{len(encoded)} bytes as JSON, at most {max_bytes} per fix"
    return None


def _inexact(value: Any) -> str | None:
    """The first number in `value` that would not be stored and read back as sent (depth already bounded)."""
    if isinstance(value, dict):
        return next((p for child in value.values() if (p := _inexact(child))), None)
    if isinstance(value, list):
        return next((p for child in value if (p := _inexact(child))), None)
    if isinstance(value, float):
        if not math.isfinite(value):
            return "NaN or an infinite number cannot be stored (it would become null)"
        if abs(value) > MAX_EXACT_INT:
            return _TOO_WIDE
    elif isinstance(value, int) and not isinstance(value, bool) and not -MAX_EXACT_INT <= value <= MAX_EXACT_INT:
        return _TOO_WIDE
    return None


def _deeper_than(value: Any, levels: int) -> bool:
    # Bounded by `levels`, so absurd nesting costs no more than the limit and never exhausts the stack.
    if isinstance(value, dict):
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return False
    return levels <= 0 or any(_deeper_than(child, levels - 1) for child in children)
