"""What a SETE import does to each item (pure): a three-way comparison of SETE now, ours now, and what was imported.

Per field: SETE changed it and we did not → it is updated (a dated version); we changed it and SETE did not →
our edit is kept ("local edit"); both changed it → a conflict, ours kept. An item met for the first time is
new, or, when we already hold one with its natural key (plate, CPF, route code), linked to it with every
field that differs reported as a conflict (ours kept). Nothing is ever deleted: an item gone from SETE stays.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from telemetria.sete.convert import Item

NEW, CHANGED, UNCHANGED, CONFLICT, SKIPPED, LINKED = "new", "changed", "unchanged", "conflict", "skipped", "linked"


@dataclass
class Action:
    item: Item
    status: str
    local_id: int | None = None
    apply: dict[str, Any] = field(default_factory=dict)  # fields to write (all of them for a new item)
    conflicts: list[str] = field(default_factory=list)
    local_edits: list[str] = field(default_factory=list)
    imported: dict[str, Any] = field(default_factory=dict)  # what the link remembers after this run
    reason: str | None = None

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.item.kind, "label": self.item.label, "status": self.status}
        if self.item.kind != "driver":
            out["sete_id"] = self.item.key
        if self.local_id is not None:
            out["id"] = self.local_id
        for key in ("conflicts", "local_edits"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        if self.apply and self.status != NEW:
            out["changed"] = sorted(self.apply)
        if self.reason:
            out["reason"] = self.reason
        if self.item.extra:
            out["sete"] = self.item.extra
        return out


def decide(item: Item, imported: dict[str, Any] | None, local: dict[str, Any] | None, local_id: int | None) -> Action:
    """The action for `item`: `imported` is the link's memory (None: never imported), `local` our row's values
    (None: no row; for an unlinked item, the row found by its natural key, if any)."""
    if item.skip:
        return Action(item, SKIPPED, local_id, reason=item.skip)
    sete = item.values
    if imported is None:
        if local is None:
            return Action(item, NEW, apply=dict(sete), imported=dict(sete))
        differ = [f for f in sete if local.get(f) != sete[f]]
        return Action(item, LINKED, local_id, conflicts=differ, imported=dict(sete),
                      reason="already registered here; linked, ours kept" if differ else None)  # fmt: skip
    if local is None:
        return Action(item, CONFLICT, local_id, imported=imported, reason="deleted here; not created again")
    act = Action(item, UNCHANGED, local_id, imported=dict(imported))
    for f, s in sete.items():
        was, ours = imported.get(f), local.get(f)
        if s == was:
            if ours != was:
                act.local_edits.append(f)
        elif ours == was:
            act.apply[f] = s
            act.imported[f] = s
        elif ours == s:
            act.imported[f] = s  # both made the same change
        else:
            act.conflicts.append(f)
    act.status = CHANGED if act.apply else CONFLICT if act.conflicts else UNCHANGED
    return act


def summary(actions: list[Action]) -> dict[str, int]:
    counts = dict.fromkeys((NEW, CHANGED, UNCHANGED, CONFLICT, LINKED, SKIPPED), 0)
    for a in actions:
        counts[a.status] += 1
    return counts
