"""The values the measurement passes between its parts (pure): a run a route is due to make, what GPS shows of
it for one vehicle, and a boletim's run line.

Pipeline (docs/contracts.md): due runs (calendar × assignments, `due.py`) → run plans of each route version
(`plans.py`: the run's time window and the stretch of the route line it covers) → observations per vehicle
(`coverage.py` pure over an Analysis, `observe.py` from rollups or the fixes) → status and pay by the contract's
rule (`contracts/rule.py`) → boletim lines and totals (`boletim.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal


@dataclass(frozen=True, slots=True)
class RunPlan:
    """One run a route makes on a local day, by the route version in force that day.

    A route's runs are one per day unless its stops' scheduled times define more (plans.py); each run covers the
    stretch [m_from, m_to] of the route line (metres along it) and is worth `share` of the route's declared km.
    """

    route_id: int
    day: date
    run_no: int  # 1, 2, ... in the day, by scheduled time
    start: float  # epoch s: GPS evidence for the run counts from here ...
    end: float  # ... to here
    m_from: float  # metres along the route's line
    m_to: float
    share: Decimal  # fraction of the route's declared km this run is worth; a day's runs sum to 1
    due_at: float | None = None  # epoch s: its first scheduled time (its timetable's; None: the route has none)


@dataclass(frozen=True, slots=True)
class Observation:
    """What one vehicle's fixes show of one planned run (computed by fix time, order-independent)."""

    route_id: int
    day: date
    run_no: int
    vehicle_id: int
    coverage: float  # 0..1: share of [m_from, m_to] traversed along the route (gaps bridged when plausible)
    route_km: float  # km measured along the route inside the run's window
    off_route_km: float  # other km the vehicle drove inside the run's window
    first: float | None  # epoch s of the first / last fix on the route in the window (None: never on it)
    last: float | None
