"""The knobs of every derivation, in one frozen object: a report is a pure function of fixes, registry and these."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass
from functools import lru_cache

# The version of the derivation's rules themselves (cleaning, segments, map matching, stops, episodes, runs). Part
# of every rollup's basis with the knobs: a release that changes what a day's fixes yield bumps it, so every
# rollup computed by the old rules is stale at once. Reads compute such days from the fixes (never an old figure
# beside a new one in one report) and the refresher recomputes them in the background (rollup.check_bases).
# 1: up to issue 33; 2: issue 34's matcher on the imported roads and unbiased instants (midpoints between fixes).
ANALYSIS_VERSION = 2


@dataclass(frozen=True, slots=True)
class ReportParams:
    # Cleaning.
    max_jump_kmh: float = 150.0  # implied speed above this between fixes: the odd fix out is an outlier
    stationary_kmh: float = 3.0  # reported speed at or below this counts as standing still
    jitter_floor_m: float = 15.0  # displacement under max(this, fix accuracy) while stationary is GPS jitter
    # A fix whose path from its neighbours implies more than factor × (their top reported speed) + margin is a
    # spike even under max_jump_kmh: at 30 s a 1 km jump is only ~120 km/h, yet the speeds say 50.
    spike_speed_factor: float = 1.25
    spike_speed_margin_kmh: float = 15.0
    # Segments: consecutive fixes further apart than gap_s are a gap (the law wants one every 30 s,
    # so a gap is more than one missed report); further apart than max_link_s they are not joined at all.
    report_interval_s: float = 30.0
    gap_s: float = 60.0
    max_link_s: float = 6 * 3600.0
    # Stops and trips.
    stop_min_s: float = 60.0
    stop_radius_m: float = 30.0
    authorized_radius_m: float = 50.0
    onboard_max_s: float = 2 * 3600.0  # Art. 9 §1: under 2 h on board, boarding to school and back
    # On-board legs start and end at stops this long or longer: pupils often board in well under stop_min_s,
    # and missing the first boarding stop would understate the time on board. 0: one stationary fix will do.
    onboard_stop_min_s: float = 0.0
    # Speeding (CTB Art. 218 tiers at 20 % and 50 %).
    default_limit_kmh: float = 60.0  # CTB Art. 61 where nothing else applies
    speeding_min_s: float = 20.0
    speeding_min_fixes: int = 2
    # Route deviation (Art. 26).
    deviation_tolerance_m: float = 100.0  # when the route has none of its own
    deviation_min_s: float = 30.0  # with deviation_min_fixes: both must hold; at 30 s reporting, 2 fixes
    deviation_min_fixes: int = 2

    def fingerprint(self) -> str:
        """Changes whenever any knob or the rules' version (ANALYSIS_VERSION) does: stored with rollups so that
        old ones are recognized as stale."""
        return _fingerprint(self)


DEFAULT = ReportParams()


@lru_cache(maxsize=64)
def _fingerprint(params: ReportParams) -> str:
    return hashlib.sha256(repr((ANALYSIS_VERSION, sorted(asdict(params).items()))).encode()).hexdigest()[:16]
