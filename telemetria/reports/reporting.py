"""`reporting`: did each tracker report every 30 s while in service (Art. 15 §1 XII, §§2–3)? Per vehicle and day.

In service: the stretches between consecutive usable fixes where the vehicle moved or its ignition
was on. Coverage is the share of that time within one reporting interval (plus 1 s of clock slack)
of a fix: a 90 s gap while driving covers 31 of its 90 s. Late fixes are those that reached us more
than LATE_S after they were taken: the store-and-forward evidence of §3.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np

from telemetria.db import Conn
from telemetria.reports import clean
from telemetria.reports.context import Context
from telemetria.reports.csvout import DATE, INT, Column, decimal
from telemetria.reports.engine import Analysis
from telemetria.reports.output import VEHICLE, Report
from telemetria.reports.params import ReportParams
from telemetria.reports.request import Window
from telemetria.reports.runner import analyses
from telemetria.reports.track import IGN_ON

LATE_S = 60.0
SLACK_S = 1.0


def day_row(a: Analysis, params: ReportParams, win: Window) -> dict[str, Any]:
    """The reporting figures of one analysed day."""
    tr = a.track
    idx = np.flatnonzero(a.keep)
    still = clean.stationary_mask(tr, params, a.keep)
    prev, cur = idx[:-1], idx[1:]
    dt = tr.t[cur] - tr.t[prev]
    # Moving: not standing at both ends, or gone somewhere in between (a gap from one stop to the next).
    moving = ~(still[prev] & still[cur]) | (a.seg.length_m[cur] > 0)
    engine_on = (tr.ignition[prev] == IGN_ON) | (tr.ignition[cur] == IGN_ON)
    owned = a.own[cur] & (dt <= params.max_link_s)
    service = owned & (moving | engine_on)
    limit = params.report_interval_s + SLACK_S
    covered = np.minimum(dt, limit)
    service_s = float(dt[service].sum())
    gaps = service & moving & (dt > limit)
    own = a.own
    delay = tr.received[own] - tr.t[own]
    return {
        **a.vehicle.label(),
        "date": datetime.fromtimestamp(a.start, win.tz).date(),
        "fixes": int(own.sum()),
        "fixes_used": int((own & a.keep).sum()),
        "in_service_s": round(service_s),
        "coverage": round(float(covered[service].sum()) / service_s, 4) if service_s > 0 else None,
        "gaps_over_30s": int(gaps.sum()),
        "max_gap_s": round(float(dt[service & moving].max())) if (service & moving).any() else None,
        "late_fixes": int((delay > LATE_S).sum()),
        "max_delay_s": round(float(delay.max())) if len(delay) else None,
    }


COLUMNS = [
    *VEHICLE,
    Column("Data", "date", DATE),
    Column("Posições recebidas", "fixes", INT),
    Column("Posições usadas", "fixes_used", INT),
    Column("Tempo em serviço (s)", "in_service_s", INT),
    Column("Cobertura a cada 30 s", "coverage", decimal(4)),
    Column("Lacunas acima de 30 s em movimento", "gaps_over_30s", INT),
    Column("Maior lacuna em movimento (s)", "max_gap_s", INT),
    Column("Posições enviadas com atraso", "late_fixes", INT),
    Column("Maior atraso de envio (s)", "max_delay_s", INT),
]


async def report(conn: Conn, ctx: Context, win: Window, params: ReportParams) -> Report:
    """One row per vehicle and local day of the window."""
    rows = [
        day_row(a, params, win) for v in ctx.vehicles async for a in analyses(conn, ctx, v, win.start, win.end, params)
    ]
    return Report("reporting", win, "days", rows, COLUMNS)
