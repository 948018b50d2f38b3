"""Km, stops and their durations on real OSM extracts and on hand-made streets, against simulated bus drives whose
truth is known (telemetria/roads/drives.py; issue 34); no database. The full table: bench/road_accuracy.py."""

from __future__ import annotations

import itertools
import random
from functools import cache

import numpy as np
import numpy.typing as npt
import pytest

from bench.road_accuracy import km_before, km_of, network, table
from telemetria.geo.geodesic import GEOD
from telemetria.reports.analysis.clean import keep_mask, stationary_mask
from telemetria.reports.analysis.stops import find_stops
from telemetria.reports.analysis.track import Track
from telemetria.reports.knobs import DEFAULT
from telemetria.roads import drives, steps
from telemetria.roads.model import Way

LON0, LAT0 = -51.2, -30.03


def _pt(x: float, y: float) -> tuple[float, float]:
    lon, lat, _ = GEOD.fwd(LON0, LAT0, 90.0, x)
    lon, lat, _ = GEOD.fwd(lon, lat, 0.0, y)
    return float(lat), float(lon)


@cache
def avenue() -> tuple[steps.RoadNet, dict[str, list[int]]]:
    """A dual carriageway (one-way carriageways 24 m apart: y = 0 eastbound, y = 24 westbound, joined by a
    crossing every 100 m), a two-way street 100 m north of it and one 100 m south, and cross streets every 100 m:
    where a bus stopping between two fixes can be given a detour round a block or across the median."""
    ids: dict[tuple[int, int], int] = {}

    def node(x: int, y: int) -> int:
        return ids.setdefault((x, y), len(ids) + 1)

    xs = range(0, 2001, 100)
    rows = {"east": [node(x, 0) for x in xs], "west": [node(x, 24) for x in xs]}
    rows |= {"north": [node(x, 124) for x in xs], "south": [node(x, -100) for x in xs]}
    where = {v: k for k, v in ids.items()}

    def way(osm: int, nodes: list[int], oneway: bool, name: str, kind: str = "residential") -> Way:
        lat, lon = zip(*(_pt(*where[n]) for n in nodes), strict=True)
        return Way(osm, kind, name, None, "asphalt", oneway, tuple(nodes), tuple(lat), tuple(lon))

    ways = [
        way(1, rows["east"], True, "Avenida (sul)", "primary"),
        way(2, rows["west"][::-1], True, "Avenida (norte)", "primary"),
        way(3, rows["north"], False, "Rua Norte"),
        way(4, rows["south"], False, "Rua Sul"),
    ]
    for i in range(len(xs)):
        ways.append(way(10 + i, [rows["south"][i], rows["east"][i]], False, f"Travessa {i}"))
        ways.append(way(40 + i, [rows["east"][i], rows["west"][i]], False, f"Retorno {i}"))
        ways.append(way(70 + i, [rows["west"][i], rows["north"][i]], False, f"Travessa {i}"))
    net = steps.build(1, ways)
    return net, {k: [net.junction_of[n] for n in v] for k, v in rows.items()}


def error_pct(net: steps.RoadNet, d: drives.Drive, before: bool = False) -> float:
    track = Track.of(d.fixes)
    net.forget()
    km = km_before(net, track) if before else km_of(net, track)
    return (km / d.length_m - 1) * 100


@pytest.mark.parametrize("interval", [30.0, 60.0])
def test_a_dual_carriageway_with_a_stop_between_two_fixes_is_not_over_counted(interval: float) -> None:
    # The rule before took, per segment, the plausible path closest to the reported speeds × time: where the bus
    # stopped between two fixes that was a detour across the median and back (+3 % to +26 % on these drives).
    net, j = avenue()
    path = drives.through(net, [j["east"][0], j["east"][-1]])
    errors = [
        error_pct(net, drives.drive(net, path, seed, interval, stops_at_m=[(300.0 + 97 * seed, 20.0), (900.0, 40.0),
                                                                         (1500.0, 30.0)]))
        for seed in range(5)
    ]  # fmt: skip
    assert max(abs(e) for e in errors) <= 1.5, errors
    assert np.mean(np.abs(errors)) <= 0.75, errors


@pytest.mark.parametrize("speeds", [True, False])
def test_a_lap_round_a_block_is_followed(speeds: bool) -> None:
    # Along the avenue, round the block north of it (up a cross street, 100 m west on Rua Norte, down the next)
    # and on east: fixes every 30 s. A place taken with no direction let the shortest path cut the lap short.
    net, j = avenue()
    e, w, n = j["east"], j["west"], j["north"]
    path = drives.through(net, [e[0], e[10], w[10], n[10], n[9], w[9], e[9], e[10], e[-1]])
    errors = [error_pct(net, drives.drive(net, path, seed, 30.0, stops_at_m=[], speeds=speeds)) for seed in range(5)]
    assert max(abs(x) for x in errors) <= 1.5, errors


@cache
def stop_drives(interval: float, dwell: float) -> list[tuple[drives.Drive, Track]]:
    """Drives of 1.2-2 km on the Porto Alegre extract with one stop of `dwell` seconds after 600 m."""
    net = network("porto-alegre")
    rnd = random.Random(f"stops-{interval}-{dwell}")
    out = []
    for k in range(100):
        path = drives.chain(net, rnd, rnd.uniform(1200.0, 2000.0))
        d = drives.drive(net, path, 500 + k, interval, stops_at_m=[(600.0, dwell)])
        out.append((d, Track.of(d.fixes)))
    return out


def found_stop_s(d: drives.Drive, track: Track) -> float | None:
    """Duration of the stop found over the true one (None: not found)."""
    keep = keep_mask(track, DEFAULT)
    still = stationary_mask(track, DEFAULT, keep)
    stops = find_stops(track.t, track.lat, track.lon, track.speed_kmh, track.ignition, keep, DEFAULT, still=still)
    true = d.stops[0]
    hits = [s for s in stops if s.start <= true.end_s and s.end >= true.start_s]
    return hits[0].duration_s if len(hits) == 1 else None


@pytest.mark.parametrize(("interval", "dwell"), [(30.0, 75.0), (30.0, 180.0), (60.0, 75.0), (60.0, 180.0)])
def test_stop_durations_are_unbiased(interval: float, dwell: float) -> None:
    # From the first to the last stationary fix a 180 s stop read 150 s at 30 s fixes (120 s at 60 s), and a 75 s
    # boarding stop was often not a stop at all (seen standing 30 s, under stop_min_s).
    got = [found_stop_s(d, tr) for d, tr in stop_drives(interval, dwell)]
    found = np.array([g for g in got if g is not None], dtype=float)
    assert len(found) >= 0.95 * len(got), got  # the rest: GPS noise split the standstill in two
    assert abs(float(np.mean(found)) - dwell) < 5.0, found
    assert np.max(np.abs(found - dwell)) <= interval, found
    if (interval, dwell) == (30.0, 180.0):  # issue 34's target: 180 ± 15 s (a few: one noisy fix moved an end)
        assert float(np.mean(np.abs(found - dwell) <= 15.0)) >= 0.95, found


@pytest.fixture(scope="module")
def quick_table() -> dict[tuple[str, float, str], tuple[float, float]]:
    rows = table(["porto-alegre", "sao-paulo", "aguascalientes"], [30.0, 60.0], 6, 3000.0, 8000.0)
    return {(r.extract, r.interval_s, r.method): (r.mean_abs, r.worst) for r in rows}


@pytest.mark.parametrize("extract", ["porto-alegre", "sao-paulo", "aguascalientes"])
def test_the_matcher_beats_the_rule_it_replaced_on_real_extracts(
    quick_table: dict[tuple[str, float, str], tuple[float, float]], extract: str
) -> None:
    # The quick form of the accuracy table (docs/roads.md has the full one): fixes every 30 s, the service's km
    # against the truth, on three real cities' streets.
    road, before = quick_table[(extract, 30.0, "road")], quick_table[(extract, 30.0, "road, before")]
    assert road[0] < before[0] and road[0] <= 2.5, (road, before)
    chords = quick_table[(extract, 30.0, "chords")]
    assert road[0] < chords[0]


@pytest.mark.parametrize("extract", ["porto-alegre", "sao-paulo"])
def test_at_sixty_seconds_the_brazilian_cities_are_measured_better_than_before(
    quick_table: dict[tuple[str, float, str], tuple[float, float]], extract: str
) -> None:
    road, before = quick_table[(extract, 60.0, "road")], quick_table[(extract, 60.0, "road, before")]
    assert road[0] < before[0] and road[0] <= 2.5, (road, before)


def test_a_heading_across_the_road_counts_against_the_place() -> None:
    # The rule before: a moving fix's heading counted only beyond 100° from the direction of travel, so a fix
    # heading 88° off (a bus already turning round a block at 60 s fixes) sat on the cross street at no cost.
    from telemetria.roads.match import HEADING_M, _heading_m
    from telemetria.roads.model import Place

    places = tuple(Place(0, 0.0, 0.0, bearing, True) for bearing in (0.0, 88.0, 180.0))
    cost = _heading_m(places, 0.0, True)
    assert cost[0] == 0.0
    assert 0.4 * HEADING_M < cost[1] < 0.6 * HEADING_M
    assert cost[2] == pytest.approx(HEADING_M)
    assert not _heading_m(places, 0.0, False).any()  # a standing fix's heading says nothing


def test_speeds_weigh_a_path_as_driving_on_or_stopping_between() -> None:
    # Two fixes a minute apart, both at 36 km/h: a path of about speed × time (600 m) is what a bus that drove on
    # covers; a bus that stopped between covers anything less, so a 150 m path is less likely but never ruled out
    # (the rule before: any length between the braking bound and the top speed weighed the same).
    from telemetria.roads.match import _speed_ll

    def one(lengths: list[float], v0: float, v1: float, dt: float) -> npt.NDArray[np.float64]:
        return _speed_ll(np.array([lengths]), np.array([v0]), np.array([v1]), np.array([dt]))[0]

    ll = one([150.0, 300.0, 600.0, 700.0, 1500.0], 36.0, 36.0, 60.0)
    assert ll[2] == pytest.approx(0.0, abs=0.05)
    assert ll[0] < ll[2] and ll[1] < ll[2] and ll[4] < ll[3] < ll[2]
    assert ll[0] > -3.0  # a stop between the fixes stays plausible: not a pull towards speed × time
    assert not one([150.0, 600.0], 0.0, 36.0, 60.0).any()  # one end stands: the bounds only
    # weighed for many segments at once, each row by its own speeds and time, as one at a time
    both = _speed_ll(
        np.array([[150.0, 600.0], [150.0, 600.0], [300.0, 1200.0]]),
        np.array([36.0, 0.0, 72.0]),
        np.array([36.0, 36.0, 72.0]),
        np.array([60.0, 60.0, 30.0]),
    )
    assert both[0].tolist() == one([150.0, 600.0], 36.0, 36.0, 60.0).tolist()
    assert both[1].tolist() == [0.0, 0.0]
    assert both[2].tolist() == one([300.0, 1200.0], 72.0, 72.0, 30.0).tolist()
    # Two speeds: the path expected is their mean × time, 54 km/h for 30 s = 450 m (by hand), not either one's.
    mixed = _speed_ll(np.array([[450.0, 300.0]]), np.array([36.0]), np.array([72.0]), np.array([30.0]))[0]
    assert mixed[0] == pytest.approx(0.0, abs=0.05) and mixed[1] < mixed[0]
    assert mixed[0] > one([450.0], 72.0, 72.0, 30.0)[0] and mixed[0] > one([450.0], 36.0, 36.0, 30.0)[0]


def test_places_found_all_at_once_are_those_found_one_at_a_time() -> None:
    # The matcher finds every fix's places in one projection and one STRtree query (RoadNet.prepare), not one query
    # a fix: the same places to the last bit, so the same road paths and the same metres.
    net = network("aguascalientes")
    d = drives.drive(net, drives.chain(net, random.Random(7), 4000.0), 3, 30.0)
    lat, lon = np.array([f.lat for f in d.fixes]), np.array([f.lon for f in d.fixes])
    net.forget()
    alone = [net._directed(net.places(a, b)) for a, b in zip(lat.tolist(), lon.tolist(), strict=True)]
    net.prepare(lat, lon)
    together = [net._places_of(a, b) for a, b in zip(lat.tolist(), lon.tolist(), strict=True)]
    assert sum(len(p) for p in alone) > 4 * len(lat)  # a city: several places a fix
    assert together == alone
    pairs = list(zip(lat.tolist(), lon.tolist(), strict=True))
    prepared = [net.links(*p, *q, 600.0).length_m for p, q in itertools.pairwise(pairs)]
    net.forget()
    fresh = [net.links(*p, *q, 600.0).length_m for p, q in itertools.pairwise(pairs)]
    assert len(prepared) == len(lat) - 1 > 0
    assert all(a.tobytes() == b.tobytes() for a, b in zip(prepared, fresh, strict=True))
    net.forget()
