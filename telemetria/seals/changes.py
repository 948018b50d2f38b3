"""What a new version of a vehicle-day's seal changes against the one before, and undoing it: pure.

A change is `{"op": "+" | "-", "line": <canonical line>}`, a removed one with `"at"`: its index in the version
before; a version's changes name every line it adds and every line of the version before it no longer has (as many
times as it occurs), in line order. Undoing a version's changes on its lines gives the lines of the version before,
each removed line back at its index (changes stored without `at` put it after the lines of its UTC second: two
fixes of the same second may then come back swapped).
"""

from __future__ import annotations

import bisect
import zlib
from collections import Counter
from collections.abc import Sequence
from typing import Any

Change = dict[str, str | int]
_TIME = 20  # a canonical line starts with its UTC second, `2026-03-02T10:15:30Z`: what orders the lines


def diff(before: Sequence[str], after: Sequence[str]) -> list[Change]:
    """Every line `after` adds to `before` ("+") and every line of `before` it lacks ("-"), in line order."""
    gone = Counter(before) - Counter(after)
    new = Counter(after) - Counter(before)
    out: list[Change] = []
    for at, text in enumerate(before):  # the first occurrences of a repeated line: the same text wherever it is
        if gone[text] > 0:
            gone[text] -= 1
            out.append({"op": "-", "line": text, "at": at})
    out += [{"op": "+", "line": text} for text, n in new.items() for _ in range(n)]
    return sorted(out, key=lambda c: (str(c["line"]), str(c["op"])))


def counts(changes: Sequence[Change]) -> tuple[int, int]:
    """(added, removed) lines."""
    added = sum(1 for c in changes if c["op"] == "+")
    return added, len(changes) - added


def undo(after: Sequence[str], changes: Sequence[Any]) -> list[str]:
    """The lines of the version before, from a version's lines and its changes."""
    lines = list(after)
    for c in changes:
        if c["op"] == "+":
            lines.remove(c["line"])  # ValueError: the changes are not this version's
    gone = [c for c in changes if c["op"] == "-"]
    if all("at" in c for c in gone):
        for c in sorted(gone, key=lambda c: int(c["at"])):  # each index is the line's once those before it are back
            lines.insert(c["at"], c["line"])
        return lines
    keys = [text[:_TIME] for text in lines]  # changes stored before `at`: by UTC second
    for c in gone:
        at = bisect.bisect_right(keys, c["line"][:_TIME])
        lines.insert(at, c["line"])
        keys.insert(at, c["line"][:_TIME])
    return lines


def pack(lines: Sequence[str]) -> bytes:
    """The lines as the sealer keeps them (seal_lines.lines)."""
    return zlib.compress("".join(lines).encode("utf-8"), 6)


def unpack(blob: bytes) -> list[str]:
    return zlib.decompress(blob).decode("utf-8").splitlines(keepends=True)
