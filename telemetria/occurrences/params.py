"""The detector's own thresholds, in one frozen object (the reports' knobs, ReportParams, give the rest)."""

from __future__ import annotations

from dataclasses import dataclass

from telemetria.reports.knobs import DEFAULT as REPORT_DEFAULT
from telemetria.reports.knobs import ReportParams


@dataclass(frozen=True, slots=True)
class DetectParams:
    """Thresholds of the occurrence rules that the reports do not have (docs/occurrences.md explains each)."""

    # A stop off the authorized places during a run with pupils on board shorter than this is not an occurrence
    # (Art. 38 IX: stopping "para embarque e desembarque"): what a boarding takes, ~60 s (setting
    # unauthorized_stop_min_s). The stops it judges are the reports' (at least ReportParams.stop_min_s).
    unauthorized_stop_min_s: float = 60.0
    delay_tolerance_min: float = 10.0  # a scheduled stop reached more than this late is a delay (Art. 37 XI)
    # A boarding stop left more than this before its scheduled time is an early departure (Art. 37 XI: pupils left
    # behind); wider than lateness's because schedules are given to the minute and buses wait less than they drive.
    early_tolerance_min: float = 15.0
    run_grace_s: float = 600.0  # a run is judged not made only this long after its window ended (Art. 39 I)
    silent_s: float = 300.0  # no fix for longer than this is a silence (Art. 15 §1 XII, §2)
    silent_moved_m: float = 500.0  # reported in a silence's facts only (no longer a silence by itself: issue 32)
    late_after_s: float = 300.0  # a completing fix that arrived this long after its fix time marks the candidate late
    report: ReportParams = REPORT_DEFAULT  # the reports' knobs the rules share (speeding, deviation, stops, legs)


DEFAULT = DetectParams()
