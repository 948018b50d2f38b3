"""The registry's versions as reports see them, by local day: pure, no database."""

from __future__ import annotations

from datetime import date

from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Assignment, Context, Route, SpeedZone, Vehicle, zones_on
from telemetria.reports.store.context import clip

JUN1, JUN2, JUN3 = date(2026, 6, 1), date(2026, 6, 2), date(2026, 6, 3)
AREA = {"type": "Polygon", "coordinates": [[[0, 0], [1, 0], [1, 1], [0, 0]]]}


def test_clip_cuts_a_period_to_a_versions_days() -> None:
    assert clip(JUN1, None, None, None) == (JUN1, None)
    assert clip(JUN1, None, None, JUN3) == (JUN1, JUN2)  # hi is exclusive
    assert clip(JUN1, JUN3, JUN2, None) == (JUN2, JUN3)
    assert clip(JUN1, JUN2, JUN3, None) is None
    assert clip(JUN2, None, None, JUN2) is None


def test_a_vehicle_has_the_limit_and_routes_of_each_day() -> None:
    old = Route(1, "R1", "Linha", [0.0, 1.0], [0.0, 0.0], 60.0, 100.0, (), version=10)
    new = Route(1, "R1", "Linha", [0.0, 1.0], [0.0, 0.5], 60.0, 100.0, (), version=11)
    v = Vehicle(1, "AAA1A11", None, None, None, 50.0, limits=((None, JUN1, 40.0), (JUN2, None, 50.0)))
    v.assignments.extend([Assignment(old, JUN1, JUN1, frozenset(range(1, 8))),
                          Assignment(new, JUN2, None, frozenset(range(1, 8)))])  # fmt: skip
    assert (v.limit_on(JUN1), v.limit_on(JUN2)) == (40.0, 50.0)
    assert v.as_on(JUN1).limit_kmh == 40.0 and v.as_on(JUN2) is v
    assert [r.version for r in v.routes_on(JUN1)] == [10] and [r.version for r in v.routes_on(JUN3)] == [11]
    zones = [SpeedZone(30.0, AREA, valid_to=JUN1), SpeedZone(20.0, AREA, valid_from=JUN2)]
    assert [z.limit_kmh for z in zones_on(zones, JUN1)] == [30.0]
    ctx = Context([v], zones, 1)
    assert ctx.zones_digest(JUN2) == ctx.zones_digest(JUN3) != ctx.zones_digest(JUN1)
    assert ctx.basis(v, JUN2) == ctx.basis(v, JUN3) != ctx.basis(v, JUN1)
    assert v.basis(JUN1, ctx.zones_digest(JUN1), DEFAULT) == ctx.basis(v, JUN1)
