"""SETE's records to ours (pure): the 3857 → 4326 conversion, the three-way plan, what is never imported."""

from __future__ import annotations

import math

import orjson
import pytest
from pyproj import Geod

from telemetria.sete.convert import driver_item, mask_cpf, mercator_to_lonlat, route_item, route_line, vehicle_item
from telemetria.sete.plan import CHANGED, CONFLICT, LINKED, NEW, SKIPPED, UNCHANGED, decide
from tests.sete_double import recorded

R = 6378137.0  # EPSG:3857's sphere
GEOD = Geod(ellps="WGS84")


def truth(x: float, y: float) -> tuple[float, float]:
    """The spherical Mercator inverse, written out: the truth pyproj must agree with."""
    return math.degrees(x / R), math.degrees(2 * math.atan(math.exp(y / R)) - math.pi / 2)


@pytest.mark.parametrize(
    ("x", "y", "lon", "lat"),
    [
        (0.0, 0.0, 0.0, 0.0),
        (-6955631.403, -1168841.459, -62.4835, -10.4416),  # Jaru/RO
        (-5331279.657, -2600256.14, -47.8917, -22.7371),  # Piracicaba/SP
    ],
)
def test_a_known_3857_point_lands_within_1_m_of_its_4326_truth(x: float, y: float, lon: float, lat: float) -> None:
    got = mercator_to_lonlat(x, y)
    exact = truth(x, y)
    assert GEOD.inv(got[0], got[1], exact[0], exact[1])[2] < 1.0
    assert GEOD.inv(got[0], got[1], lon, lat)[2] < 0.01  # the reference point the metres were written from


def test_recorded_route_converts_and_drops_the_pupils_point() -> None:
    data = recorded()
    raw = {**data["rotas"]["data"][0], "_shape": data["shape_101"]["data"]["shape"],
           "_escolas": data["escolas_101"]["data"]}  # fmt: skip
    item = route_item(raw, 2026)
    assert item.skip is None and item.geo is not None
    lon, lat = item.geo.coords[0]
    assert GEOD.inv(lon, lat, -62.48, -10.45)[2] < 1.0
    assert 2_000 < item.geo.length_m < 4_000
    assert [s.kind for s in item.geo.stops] == ["school"]  # the school, not the pupil's home in the shape
    assert "INEP 11006340" in item.geo.stops[0].name
    assert item.values["declared_km"] == "18.400" and item.values["shift"] == "matutino"
    assert item.extra["timetable"]["hora_ida_inicio"] == "05:50"
    assert "Aluno" not in orjson.dumps(item.extra).decode() and "pupils" not in item.extra


X, Y = -6955631.403, -1168841.459


def test_several_lines_that_do_not_join_take_the_longest() -> None:
    fc = {"type": "FeatureCollection", "features": [
        {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[X, Y], [X + 100, Y]]}},
        {"type": "Feature", "geometry": {"type": "LineString", "coordinates": [[X + 50000, Y], [X + 52000, Y]]}},
    ]}  # fmt: skip
    assert 1_900 < route_line(orjson.dumps(fc).decode()).length_m < 2_100


def test_vehicle_and_driver_from_recorded_records() -> None:
    data = recorded()
    v = vehicle_item(data["veiculos"]["data"][0])
    assert v.values == {"plate": "NEA1234", "capacity": 29, "kind": "micro-onibus"}
    jose, maria = (driver_item(d) for d in data["motoristas"]["data"])
    assert jose.values == {"name": "José da Silva", "cnh_category": "AD"}
    assert jose.extra["cnh_valid_until"] == "2027-08-31"
    assert "52998224725" not in jose.label and mask_cpf("52998224725") in jose.label
    assert maria.skip and "cnh_category" in maria.skip  # category B cannot drive school transport here


def _item():
    return vehicle_item(recorded()["veiculos"]["data"][0])


def test_three_way_plan() -> None:
    it = _item()
    sete = dict(it.values)
    assert decide(it, None, None, None).status == NEW
    assert decide(it, sete, dict(sete), 1).status == UNCHANGED
    assert decide(it, None, {**sete, "capacity": 30}, 1).status == LINKED
    # SETE changed, we did not: updated
    it.values = {**sete, "capacity": 33}
    act = decide(it, sete, dict(sete), 1)
    assert act.status == CHANGED and act.apply == {"capacity": 33} and act.imported["capacity"] == 33
    # we changed it, SETE did not: our edit kept
    it.values = dict(sete)
    act = decide(it, sete, {**sete, "capacity": 25}, 1)
    assert act.status == UNCHANGED and act.local_edits == ["capacity"] and not act.apply
    # both changed: conflict, ours kept, and still a conflict on the next run
    it.values = {**sete, "capacity": 33}
    act = decide(it, sete, {**sete, "capacity": 25}, 1)
    assert act.status == CONFLICT and act.conflicts == ["capacity"] and not act.apply
    assert act.imported["capacity"] == 29
    # deleted here: never created again
    assert decide(it, sete, None, 1).status == CONFLICT
    it.skip = "no"
    assert decide(it, None, None, None).status == SKIPPED
