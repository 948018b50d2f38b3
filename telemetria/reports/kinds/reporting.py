"""`reporting`: did each tracker report every 30 s while in service (Art. 15 §1 XII, §§2–3)? Per vehicle and day.

In service: the stretches between consecutive usable fixes where the vehicle moved or its ignition
was on, and the windows of the runs it was due to make (reports/due.py: as the boletim counts them), up to
now: a tracker silent during its due runs is in service and reads 0 %, not "no time in service"
(issue 36; Art. 15 §2: silence is what the rule is about). Coverage is the share of that time within one
reporting interval (plus 1 s of clock slack) of a fix: a 90 s gap while driving covers 31 of its 90 s. Late
fixes are those that reached us more than LATE_S after they were taken: the store-and-forward evidence of §3.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from math import inf
from typing import Any

import numpy as np

from telemetria.db import Conn
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.analysis.engine import Analysis
from telemetria.reports.analysis.track import IGN_ON
from telemetria.reports.due import DueFactory, DueSource
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

    def add(self, a: Analysis, params: ReportParams, due: Sequence[tuple[float, float]] = (), now: float = inf) -> None:
        """Fold in the figures of one analysis (a day, or a piece of one); `due`: the windows [start, end) (epoch
        s) of the runs the vehicle was due to make that day, in service up to `now` whether it reported or not."""
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
        windows = [(max(lo, a.start), min(hi, a.end, now)) for lo, hi in due]
        windows = [(lo, hi) for lo, hi in windows if hi > lo]
        if windows:
            links = list(zip(tr.t[prev][service].tolist(), tr.t[cur][service].tolist(), strict=True))
            spent, covered = in_service(links + windows, tr.t[idx].tolist(), limit)
            self.service_s += spent
            self.covered_s += covered
        else:
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


def merged(spans: Iterable[tuple[float, float]]) -> list[tuple[float, float]]:
    """The union of closed spans as disjoint spans in time order."""
    out: list[tuple[float, float]] = []
    for lo, hi in sorted(spans):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def in_service(spans: Iterable[tuple[float, float]], fixes: Sequence[float], limit: float) -> tuple[float, float]:
    """(time in service, of it the time within `limit` s after a fix) for the union of `spans` (epoch s); pure.
    Over the links between consecutive fixes alone it gives what summing min(gap, limit) per link gives."""
    service = merged(spans)
    cover = merged((t, t + limit) for t in fixes)
    total = sum(hi - lo for lo, hi in service)
    covered, j = 0.0, 0
    for lo, hi in service:
        while j < len(cover) and cover[j][1] <= lo:
            j += 1
        k = j
        while k < len(cover) and cover[k][0] < hi:
            covered += max(0.0, min(hi, cover[k][1]) - max(lo, cover[k][0]))
            k += 1
    return total, covered


def _max(current: float | None, values: np.ndarray) -> float | None:
    if not len(values):
        return current
    top = float(values.max())
    return top if current is None else max(current, top)


async def due_windows(conn: Conn, due: DueSource, a: Analysis) -> list[tuple[float, float]]:
    """The windows of the runs due, on the local day of analysis `a`, of the routes the vehicle was assigned."""
    day = datetime.fromtimestamp(a.start, LOCAL_TZ).date()
    return [w for r in a.routes for w in await due.windows(conn, r, day)]


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


async def report(
    conn: Conn, ctx: Context, win: Window, params: ReportParams, due_source: DueFactory, now: datetime | None = None
) -> Report:
    """One row per vehicle and day of the window (days of the report's zone) that has begun by `now`; `due_source`
    gives the runs due (reports/due.py)."""
    now = now or datetime.now(UTC)
    rows = []
    due = due_source()
    for v in ctx.vehicles:
        days: dict[date, Day] = {}
        async for a in analyses(conn, ctx, v, win, params):
            if a.start > now.timestamp():
                break  # days that have not begun are not rows
            windows = await due_windows(conn, due, a)
            days.setdefault(datetime.fromtimestamp(a.start, win.tz).date(), Day()).add(
                a, params, windows, now.timestamp()
            )
        rows += [{**v.label(), "date": d, **day.row()} for d, day in days.items()]
    return Report("reporting", win, "days", rows, COLUMNS)
