"""Scores detected occurrences against a simulated week's truth: a confusion matrix per kind (pure).

A detection matches a true event of the same kind and vehicle whose start is within `tolerance_s` of its own;
each true event is matched at most once (the nearest detections first). Per kind: true positives (events
found), false negatives (events not found), false positives (detections matching no event), duplicates
(further detections of an event already found) and the largest start error of the matches, seconds.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime


@dataclass(frozen=True, slots=True)
class Item:
    """One occurrence, true or detected: kind, vehicle (any id, the same on both sides), start (aware)."""

    kind: str
    vehicle: int
    start: datetime
    label: str = ""


@dataclass(slots=True)
class KindScore:
    kind: str
    truth: int = 0
    tp: int = 0
    fn: int = 0
    fp: int = 0
    dup: int = 0
    max_start_err_s: float = 0.0


@dataclass(slots=True)
class Score:
    kinds: dict[str, KindScore]
    missed: list[Item] = field(default_factory=list)  # true events not found
    false: list[Item] = field(default_factory=list)  # detections of nothing
    duplicates: list[Item] = field(default_factory=list)

    @property
    def perfect(self) -> bool:
        """Every event found exactly once, nothing else found."""
        return not (self.missed or self.false or self.duplicates)


def score(truth: Sequence[Item], detected: Sequence[Item], tolerance_s: float = 30.0,
          kinds: Iterable[str] = ()) -> Score:  # fmt: skip
    """The confusion matrix of `detected` against `truth`; `kinds` lists kinds to show even when absent."""
    names = dict.fromkeys([*kinds, *(t.kind for t in truth), *(d.kind for d in detected)])
    out = Score({k: KindScore(k) for k in names})
    pairs = sorted(
        (abs((d.start - t.start).total_seconds()), i, j)
        for i, t in enumerate(truth)
        for j, d in enumerate(detected)
        if t.kind == d.kind and t.vehicle == d.vehicle and abs((d.start - t.start).total_seconds()) <= tolerance_s
    )
    matched: dict[int, int] = {}  # truth index → detection index
    used: set[int] = set()
    for err, i, j in pairs:
        if i in matched or j in used:
            continue
        matched[i] = j
        used.add(j)
        k = out.kinds[truth[i].kind]
        k.max_start_err_s = max(k.max_start_err_s, err)
    near_found = {j for _, i, j in pairs if i in matched}
    for i, t in enumerate(truth):
        k = out.kinds[t.kind]
        k.truth += 1
        if i in matched:
            k.tp += 1
        else:
            k.fn += 1
            out.missed.append(t)
    for j, d in enumerate(detected):
        if j in used:
            continue
        if j in near_found:
            out.kinds[d.kind].dup += 1
            out.duplicates.append(d)
        else:
            out.kinds[d.kind].fp += 1
            out.false.append(d)
    return out


def markdown(s: Score) -> str:
    """The matrix as a Markdown table, a totals row last."""
    head = "| kind | planted | found (TP) | missed (FN) | false (FP) | duplicates | max start error (s) |"
    lines = [head, "|---|---:|---:|---:|---:|---:|---:|"]
    tot = KindScore("**total**")
    for k in s.kinds.values():
        lines.append(f"| `{k.kind}` | {k.truth} | {k.tp} | {k.fn} | {k.fp} | {k.dup} | {k.max_start_err_s:.0f} |")
        tot.truth, tot.tp, tot.fn, tot.fp, tot.dup = (tot.truth + k.truth, tot.tp + k.tp, tot.fn + k.fn,
                                                      tot.fp + k.fp, tot.dup + k.dup)  # fmt: skip
        tot.max_start_err_s = max(tot.max_start_err_s, k.max_start_err_s)
    t = tot
    lines.append(f"| {t.kind} | {t.truth} | {t.tp} | {t.fn} | {t.fp} | {t.dup} | {t.max_start_err_s:.0f} |")
    return "\n".join(lines) + "\n"


def describe(s: Score) -> str:
    """The misses, false detections and duplicates, one a line (empty when perfect)."""
    out = []
    for title, items in (("missed", s.missed), ("false", s.false), ("duplicate", s.duplicates)):
        out += [f"{title}: {x.kind} vehicle {x.vehicle} at {x.start.isoformat()} {x.label}".rstrip() for x in items]
    return "\n".join(out)
