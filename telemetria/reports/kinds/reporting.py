"""`reporting`: did each tracker report every 30 s while in service (Art. 15 §1 XII, §§2–3)? Per vehicle and day.

In service: the stretches between consecutive usable fixes where the vehicle moved or its ignition
was on. Coverage is the share of that time within one reporting interval (plus 1 s of clock slack)
of a fix: a 90 s gap while driving covers 31 of its 90 s. Late fixes are those that reached us more
than LATE_S after they were taken: the store-and-forward evidence of §3.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any

import numpy as np

from telemetria.db import Conn
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.track import IGN_ON
from telemetria.reports.knobs import ReportParams
from telemetria.reports.model import Context, Window
from telemetria.reports.output.csv import DATE, INT, SHARE, Column
from telemetria.reports.output.report import VEHICLE, Report
from telemetria.reports.store.fetch import analyses

LATE_S = 60.0
SLACK_S = 1.0


@dataclass(slots=True)
class Day:
    """Reporting figures of one vehicle over (pieces of) one day, in seconds and counts."""

    fixes: int = 0
    used: int = 0
    service_s: float = 0.0
    covered_s: float = 0.0
    gaps: int = 0
    max_gap_s: float | None = None
    late: int = 0
    max_delay_s: float | None = None

    def add(self, a: Analysis, params: ReportParams) -> None:
        """Fold in the figures of one analysis (a day, or a piece of one)."""
        tr = a.track
        idx = np.flatnonzero(a.keep)
        still = a.still
        prev, cur = idx[:-1], idx[1:]
        dt = tr.t[cur] - tr.t[prev]
        # Moving: not standing at both ends, or gone somewhere in between (a gap from one stop to the next).
        moving = ~(still[prev] & still[cur]) | (a.seg.length_m[cur] > 0)
        engine_on = (tr.ignition[prev] == IGN_ON) | (tr.ignition[cur] == IGN_ON)
        service = a.own[cur] & (dt <= params.max_link_s) & (moving | engine_on)
        limit = params.report_interval_s + SLACK_S
        delay = tr.received[a.own] - tr.t[a.own]
        self.fixes += int(a.own.sum())
        self.used += int((a.own & a.keep).sum())
        self.service_s += float(dt[service].sum())
        self.covered_s += float(np.minimum(dt, limit)[service].sum())
        self.gaps += int((service & moving & (dt > limit)).sum())
        self.max_gap_s = _max(self.max_gap_s, dt[service & moving])
        self.late += int((delay > LATE_S).sum())
        self.max_delay_s = _max(self.max_delay_s, delay)

    def row(self) -> dict[str, Any]:
        return {
            "fixes": self.fixes,
            "fixes_used": self.used,
            "in_service_s": round(self.service_s),
            "coverage": round(self.covered_s / self.service_s, 4) if self.service_s > 0 else None,
            "gaps_over_30s": self.gaps,
            "max_gap_s": None if self.max_gap_s is None else round(self.max_gap_s),
            "late_fixes": self.late,
            "max_delay_s": None if self.max_delay_s is None else round(self.max_delay_s),
        }


def _max(current: float | None, values: np.ndarray) -> float | None:
    if not len(values):
        return current
    top = float(values.max())
    return top if current is None else max(current, top)


COLUMNS = [
    *VEHICLE,
    Column("Data", "date", DATE),
    Column("Posições recebidas", "fixes", INT),
    Column("Posições usadas", "fixes_used", INT),
    Column("Tempo em serviço (s)", "in_service_s", INT),
    Column("Cobertura a cada 30 s (%)", "coverage", SHARE),
    Column("Lacunas acima de 30 s em movimento", "gaps_over_30s", INT),
    Column("Maior lacuna em movimento (s)", "max_gap_s", INT),
    Column("Posições enviadas com atraso", "late_fixes", INT),
    Column("Maior atraso de envio (s)", "max_delay_s", INT),
]


async def report(conn: Conn, ctx: Context, win: Window, params: ReportParams, now: datetime | None = None) -> Report:
    """One row per vehicle and day of the window (days of the report's zone) that has begun by `now`."""
    now = now or datetime.now(UTC)
    rows = []
    for v in ctx.vehicles:
        days: dict[date, Day] = {}
        async for a in analyses(conn, ctx, v, win, params):
            if a.start > now.timestamp():
                break  # days that have not begun are not rows
            days.setdefault(datetime.fromtimestamp(a.start, win.tz).date(), Day()).add(a, params)
        rows += [{**v.label(), "date": d, **day.row()} for d, day in days.items()]
    return Report("reporting", win, "days", rows, COLUMNS)
