"""VehicleInfo.contractor_on: the contractor that had a vehicle on a day, from its spans (issue 33)."""

from __future__ import annotations

from datetime import date

from telemetria.measurement.boletim import VehicleInfo


def test_the_contractor_of_each_day_from_the_spans() -> None:
    moved = date(2026, 3, 10)
    v = VehicleInfo(7, "AAA1A11", True, 2, ((None, moved, 1), (moved, None, 2)))
    assert [v.contractor_on(d) for d in (date(2020, 1, 1), date(2026, 3, 9), moved, date(2030, 1, 1))] == [1, 1, 2, 2]
    gap = VehicleInfo(8, "BBB2B22", True, None, ((None, moved, 1), (moved, None, None)))
    assert (gap.contractor_on(date(2026, 3, 9)), gap.contractor_on(moved)) == (1, None)


def test_without_spans_todays_contractor_on_every_day() -> None:
    assert VehicleInfo(7, "AAA1A11", True, 3).contractor_on(date(2026, 3, 9)) == 3
