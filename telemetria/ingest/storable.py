"""What the fixes table can hold, checked per item at decode time so that one bad value never sinks its batch.

PostgreSQL text refuses U+0000 and the UTF-8 encoder refuses lone surrogates (JSON can carry both as escapes);
jsonb goes through orjson (telemetria.db), which refuses integers wider than 64 bits and nesting past 255.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

# An escaped NUL in orjson's output: an odd run of backslashes before u0000 (an even run is a literal "\u0000").
_NUL_ESCAPE = re.compile(rb"(?<!\\)(?:\\\\)*\\u0000")


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


def json_problem(value: Any, max_depth: int) -> str | None:
    """Why jsonb cannot hold `value` (too deep, unencodable, a NUL in its text), or None if it can."""
    if _deeper_than(value, max_depth):
        return f"nested deeper than {max_depth} levels"
    try:
        encoded = orjson.dumps(value)
    except orjson.JSONEncodeError as e:  # an integer wider than 64 bits, a lone surrogate
        return f"cannot be stored as JSON ({e})"
    return "text contains a NUL character" if _NUL_ESCAPE.search(encoded) else None


def _deeper_than(value: Any, levels: int) -> bool:
    # Bounded by `levels`, so absurd nesting costs no more than the limit and never exhausts the stack.
    if isinstance(value, dict):
        children: Any = value.values()
    elif isinstance(value, list):
        children = value
    else:
        return False
    return levels <= 0 or any(_deeper_than(child, levels - 1) for child in children)
