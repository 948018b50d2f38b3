"""How fresh a vehicle's newest fix is, against the 30 s reporting rule (Lei 3.588/2023 Art. 15 §2)."""

from __future__ import annotations

from enum import StrEnum


class Freshness(StrEnum):
    ONLINE = "online"  # reporting as §2 asks (within `online_s`, a little over one 30 s period)
    LATE = "late"  # missed some reports: signal loss, or the tracker is buffering (§3)
    OFFLINE = "offline"  # silent for longer than `offline_s`
    NEVER = "never"  # no fix ever stored


def freshness(age_s: float | None, online_s: float, offline_s: float) -> Freshness:
    """The state of a fix `age_s` seconds old (None: no fix); a fix from the future counts as online."""
    if age_s is None:
        return Freshness.NEVER
    if age_s <= online_s:
        return Freshness.ONLINE
    return Freshness.LATE if age_s <= offline_s else Freshness.OFFLINE
