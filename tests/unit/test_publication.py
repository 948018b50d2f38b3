"""The public area's pure pieces: boarding places on the grid, the published line, a route for the public, the
CSV tables, the month counted, the cache validators."""

from __future__ import annotations

import csv
import io
import math
import random
from datetime import date
from decimal import Decimal

import pytest
from pyproj import Transformer

from telemetria.geo.geodesic import distance_m
from telemetria.geo.metric import JARU_ZONE, zone_plane
from telemetria.localtime import LOCAL_TZ
from telemetria.measurement.boletim import RouteTotals
from telemetria.publication import tables
from telemetria.publication.cache import etag_of, matches
from telemetria.publication.grid import max_shift_m, snap
from telemetria.publication.itinerary import public_route, route_json
from telemetria.publication.lines import public_line
from telemetria.publication.service import month_span, per_route

PLANE = zone_plane(JARU_ZONE)  # Jaru's UTM zone, 20S

JARU = (-10.4389, -62.4664)
SCALE = 1.0005  # the UTM plane's scale error in Jaru is under 0.04 %


@pytest.mark.parametrize("cell_m", [25, 100, 250, 1000])
def test_a_boarding_point_moves_at_most_half_a_cell_diagonal(cell_m: int) -> None:
    rng = random.Random(cell_m)
    lat = [JARU[0] + rng.uniform(-0.3, 0.3) for _ in range(2000)]
    lon = [JARU[1] + rng.uniform(-0.3, 0.3) for _ in range(2000)]
    moved = [distance_m(o, a, so, sa) for a, o, (sa, so) in zip(lat, lon, snap(lat, lon, cell_m), strict=True)]
    assert max(moved) <= max_shift_m(cell_m) * SCALE + 0.2  # + the published decimals (~0.1 m)
    # and they do move: a random point is rarely within a few metres of its cell's centre
    assert sum(moved) / len(moved) > cell_m * 0.3


def test_nearby_points_collapse_into_one_place_and_far_ones_do_not() -> None:
    # Three homes a few metres apart, in the middle of one 100 m cell; one 300 m away.
    x, y = [500_050.0, 500_060.0, 500_041.0, 500_350.0], [8_850_050.0, 8_850_030.0, 8_850_071.0, 8_850_050.0]
    lon, lat = PLANE.to_lonlat(x, y)
    got = snap(list(lat), list(lon), 100)
    assert got[0] == got[1] == got[2]
    assert got[3] != got[0]
    assert distance_m(got[0][1], got[0][0], got[3][1], got[3][0]) == pytest.approx(300, abs=1)


def test_precision_zero_publishes_the_places_as_registered() -> None:
    lat, lon = [-10.4389123], [-62.4664567]
    assert snap(lat, lon, 0) == [(-10.438912, -62.466457)]
    assert snap([], [], 100) == []


def _line(n: int = 200) -> tuple[list[float], list[float]]:
    """A road going east 2 km with a gentle wiggle of under a metre, then north 1 km."""
    lon = [JARU[1] + i * 0.0001 + (0.000003 if i % 2 else 0) for i in range(n)]
    lat = [JARU[0]] * n
    lon += [lon[-1]] * 100
    lat += [JARU[0] + i * 0.0001 for i in range(1, 101)]
    return lon, lat


def test_the_published_line_is_simplified_and_its_ends_are_on_the_grid() -> None:
    lon, lat = _line()
    exact = public_line(lon, lat, 0)
    assert 3 <= len(exact) < 10  # a corner and two ends, not 300 vertices
    assert exact[0] == [round(lat[0], 6), round(lon[0], 6)]
    rounded = public_line(lon, lat, 100)
    first = snap([lat[0]], [lon[0]], 100)[0]
    last = snap([lat[-1]], [lon[-1]], 100)[0]
    assert tuple(rounded[0]) == first and tuple(rounded[-1]) == last
    assert public_line([1.0], [2.0], 100) == []


def test_a_spur_to_a_boarding_place_loses_its_tip() -> None:
    # Along a road, then out 800 m to a farm gate (the boarding place) and back, then on: the tip is the home.
    x0, y0 = PLANE.to_metric([JARU[1]], [JARU[0]])
    xs = [x0[0] + d for d in (0, 1000, 1000, 1000, 2000)]
    ys = [y0[0] + d for d in (0, 0, 800, 0, 0)]
    lon, lat = PLANE.to_lonlat(xs, ys)
    gate = (float(lon[2]), float(lat[2]))
    exact = public_line(list(lon), list(lat), 0, hide=[gate])
    assert [round(gate[1], 6), round(gate[0], 6)] in exact  # precision 0: as registered
    published = public_line(list(lon), list(lat), 100, hide=[gate])
    px, py = PLANE.to_metric([p[1] for p in published], [p[0] for p in published])
    assert min(math.hypot(a - xs[2], b - ys[2]) for a, b in zip(px, py, strict=True)) > 100


def _route(**over: object) -> dict[str, object]:
    lon, lat = _line()
    coords = [[a, b] for a, b in zip(lon, lat, strict=True)]
    data: dict[str, object] = {
        "code": "R01", "name": "Linha Boa Vista", "school_year": 2026, "shift": "matutino", "length_m": 3012.3456,
        "declared_km": 3.1, "geometry": {"type": "LineString", "coordinates": coords},
        "stops": [
            {"seq": 3, "name": "EMEF Jaru", "kind": "school", "lat": -10.4301, "lon": -62.4465,
             "scheduled_time": "07:10:00"},
            {"seq": 1, "name": "Garagem da Empresa", "kind": "garage", "lat": -10.44, "lon": -62.47,
             "scheduled_time": None},
            {"seq": 2, "name": "Casa da família Souza", "kind": "boarding", "lat": -10.43891, "lon": -62.45642,
             "scheduled_time": "06:40:00"},
        ],
    }  # fmt: skip
    return {**data, **over}


def test_a_route_for_the_public_hides_the_garage_and_the_boarding_names_while_rounded() -> None:
    r = public_route(_route(), 100)
    assert [s.kind for s in r.stops] == ["boarding", "school"]
    assert [s.order for s in r.stops] == [1, 2]
    boarding, school = r.stops
    assert boarding.name is None and boarding.scheduled_time == "06:40"
    # Worked out apart from the code (issue 33: the expectation was grid.snap's own answer): in SIRGAS 2000 / UTM 20S
    # the published place is the centre of the 100 m cell the home falls in, at most 70.7 m from it.
    utm = Transformer.from_crs("EPSG:4326", "EPSG:31980", always_xy=True)
    hx, hy = utm.transform(-62.45642, -10.43891)
    px, py = utm.transform(boarding.lon, boarding.lat)
    assert (px, py) == pytest.approx(((hx // 100 + 0.5) * 100, (hy // 100 + 0.5) * 100), abs=0.2)
    assert 1.0 < math.hypot(px - hx, py - hy) <= 100 * math.sqrt(2) / 2
    assert (school.name, school.lat, school.lon, school.scheduled_time) == ("EMEF Jaru", -10.4301, -62.4465, "07:10")
    assert r.schools == ["EMEF Jaru"]
    assert r.declared_km == Decimal("3.100") and r.length_km == Decimal("3.012")
    body = str(route_json(r))
    assert "Garagem" not in body and "Souza" not in body
    assert public_route(_route(), 0).stops[0].name == "Casa da família Souza"  # 0: as registered


def test_km_says_which_it_is() -> None:
    import orjson

    declared = orjson.loads(orjson.dumps(route_json(public_route(_route(), 100))))
    assert (declared["km"], declared["km_basis"], declared["length_km"]) == (3.1, "declared", 3.012)
    traced = orjson.loads(orjson.dumps(route_json(public_route(_route(declared_km=None), 100))))
    assert (traced["km"], traced["km_basis"], traced["declared_km"]) == (3.012, "traced", None)


def _read(body: bytes) -> list[list[str]]:
    assert body.startswith("\ufeff".encode())
    return list(csv.reader(io.StringIO(body.decode("utf-8-sig"), newline=""), delimiter=";"))


def test_itineraries_csv_has_a_row_per_published_stop_in_pt_br() -> None:
    routes = [public_route(_route(), 100), public_route(_route(code="R02", stops=[]), 100)]
    rows = _read(tables.csv_bytes(tables.ITINERARY_COLUMNS, tables.itinerary_rows(2026, routes), LOCAL_TZ))
    assert rows[0] == ["Ano letivo", "Rota", "Nome da rota", "Turno", "Km declarado", "Km do traçado", "Escolas",
                       "Ordem", "Tipo", "Local", "Latitude", "Longitude", "Horário"]  # fmt: skip
    assert [r[1] for r in rows[1:]] == ["R01", "R01", "R02"]
    first = rows[1]
    assert first[4:6] == ["3,100", "3,012"] and first[6] == "EMEF Jaru"
    assert first[7:10] == ["1", "embarque", ""] and first[12] == "06:40"
    assert "," in first[10] and "." not in first[10]
    assert rows[2][8:10] == ["escola", "EMEF Jaru"]
    assert rows[3][7:] == ["", "", "", "", "", ""]


def _totals(route_id: int, code: str, due: int, made: int, km: str) -> RouteTotals:
    z = Decimal(0)
    return RouteTotals(route_id, code, Decimal(1), due, made, 0, due - made, 0, z, Decimal(km), z, z)


def test_service_adds_up_a_route_across_contracts_and_writes_its_csv() -> None:
    routes = per_route([_totals(2, "B", 20, 18, "40.500"), _totals(1, "A", 10, 9, "12.250"),
                        _totals(2, "B", 2, 2, "4.000")], {1: "Linha A", 2: "Linha B"})  # fmt: skip
    assert [(r.code, r.name, r.runs_due, r.runs_made, r.km_made) for r in routes] == [
        ("A", "Linha A", 10, 9, Decimal("12.250")), ("B", "Linha B", 22, 20, Decimal("44.500"))]  # fmt: skip
    rows = _read(tables.csv_bytes(tables.SERVICE_COLUMNS, tables.service_rows("2026-03", date(2026, 3, 31), routes),
                                  LOCAL_TZ))  # fmt: skip
    assert rows[0] == ["Linha", "Mês", "Rota", "Nome da rota", "Corridas devidas", "Corridas realizadas",
                       "Km realizado", "Contado até"]  # fmt: skip
    assert rows[1] == ["rota", "2026-03", "A", "Linha A", "10", "9", "12,250", "31/03/2026"]
    assert rows[-1] == ["total", "2026-03", "", "", "32", "29", "56,750", "31/03/2026"]


def test_a_month_in_progress_counts_up_to_yesterday() -> None:
    assert month_span(date(2026, 3, 1), date(2026, 12, 2)) == (date(2026, 3, 1), date(2026, 3, 31))
    assert month_span(date(2026, 2, 1), date(2026, 3, 1)) == (date(2026, 2, 1), date(2026, 2, 28))
    assert month_span(date(2026, 12, 1), date(2026, 12, 2)) == (date(2026, 12, 1), date(2026, 12, 1))
    assert month_span(date(2026, 12, 1), date(2026, 12, 1)) is None
    assert month_span(date(2027, 1, 1), date(2026, 12, 2)) is None


def test_etags_match_as_http_says() -> None:
    tag = etag_of(b"abc")
    assert tag.startswith('"') and tag.endswith('"') and tag != etag_of(b"abd")
    assert matches(tag, tag) and matches(f'"x", W/{tag}', tag) and matches("*", tag)
    assert not matches(None, tag) and not matches('"other"', tag) and not matches("", tag)


def test_the_memo_keeps_an_answer_for_its_ttl_and_a_bounded_number_of_them() -> None:
    from telemetria.publication.cache import Memo

    memo = Memo(ttl_s=300, size=2)
    memo.put("a", 1, now=0)
    assert memo.get("a", now=299) == 1 and memo.get("a", now=300) is None
    memo.put("a", 1, now=0)
    memo.put("b", 2, now=0)
    memo.put("c", 3, now=0)
    assert memo.get("a", now=1) is None and (memo.get("b", now=1), memo.get("c", now=1)) == (2, 3)


def test_a_place_far_from_jaru_moves_no_more_than_half_a_cells_diagonal_and_alone() -> None:
    # Recife (zone 25, 28° east of Jaru's meridian): on Jaru's plane a 100 m cell was 89.5 m of ground, and a place
    # moved up to 70.7 m of the plane was up to 63 m of ground; on its own zone's plane the cell is 100 m ± 0.1 %.
    rng = random.Random(7)
    pts = [(-8.05 + rng.uniform(-0.05, 0.05), -34.9 + rng.uniform(-0.05, 0.05)) for _ in range(200)]
    got = snap([p[0] for p in pts], [p[1] for p in pts], 100)
    shifts = [distance_m(p[1], p[0], g[1], g[0]) for p, g in zip(pts, got, strict=True)]
    assert max(shifts) <= max_shift_m(100) * 1.0011
    assert max(shifts) > max_shift_m(100) * 0.9  # not a cell shrunk to nothing
    # Two places 100 m apart along a parallel are never in the same cell: ground cells are not wider than 100 m.
    apart = [(-8.05, -34.9 + k * 1e-5) for k in range(0, 3000, 7)]
    cells = snap([a for a, _ in apart], [o for _, o in apart], 100)
    pairs = list(zip(apart, cells, strict=True))
    compared = 0
    for (p, c), (q, d) in zip(pairs, pairs[14:], strict=False):  # 14 steps of 7e-5°: ~108 m of ground
        if distance_m(p[1], p[0], q[1], q[0]) > 100.2:
            assert c != d
            compared += 1
    assert compared > 400  # the pairs are compared at all (11 steps, 85 m, never were)
    # And cells are that wide: places 11 m apart along a meridian over 1.1 km share about 11 cells, not 100.
    north = [(-8.05 + k * 1e-4, -34.9) for k in range(100)]
    assert 11 <= len(set(snap([a for a, _ in north], [o for _, o in north], 100))) <= 13
    # A place's cell does not depend on the places published with it.
    assert snap([pts[0][0]], [pts[0][1]], 100) == got[:1]
