"""Schedule adherence and runs not made: the matcher on hand-made stops, and against the simulator's truth."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date, datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest

from telemetria.geo.geodesic import GEOD
from telemetria.localtime import LOCAL_TZ
from telemetria.reports.analysis import clean
from telemetria.reports.analysis.days import day_bounds
from telemetria.reports.analysis.engine import analyze, line
from telemetria.reports.analysis.schedule import (
    PASSED,
    PENDING,
    SERVED,
    SKIPPED,
    Path,
    Run,
    evaluate,
    runs_of,
    still_open,
)
from telemetria.reports.analysis.stops import Stop, find_stops
from telemetria.reports.analysis.track import Track
from telemetria.reports.kinds.schedule import COLUMNS, row
from telemetria.reports.knobs import DEFAULT
from telemetria.reports.model import Point, Route, Vehicle
from telemetria.sim import JARU, Truth, simulate_vehicle
from tests.unit.csvfile import iter_csv_chunks

DAY = date(2026, 3, 2)  # a Monday
R = DEFAULT.authorized_radius_m
LAT0, LON0 = JARU


def at(east_m: float) -> tuple[float, float]:
    """lat, lon east_m metres east of Jaru along its parallel (west when negative)."""
    lon, lat, _ = GEOD.fwd(LON0, LAT0, 90.0 if east_m >= 0 else 270.0, abs(east_m))
    return float(lat), float(lon)


def hm(h: int, m: int, s: int = 0) -> float:
    """Epoch seconds of a local time on DAY."""
    return datetime(DAY.year, DAY.month, DAY.day, h, m, s, tzinfo=LOCAL_TZ).timestamp()


# Garage → Ponto 1 → Ponto 2 → school → Ponto 2 (volta) → Ponto 1 (volta) → garage, along a straight road.
PLAN = [
    ("Garagem", "garage", 0.0, "06:00:00"),
    ("Ponto 1", "boarding", 1000.0, "06:05:00"),
    ("Ponto 2", "boarding", 2000.0, "06:10:00"),
    ("Escola", "school", 3000.0, "06:20:00"),
    ("Ponto 2 (volta)", "boarding", 2000.0, "06:35:00"),
    ("Ponto 1 (volta)", "boarding", 1000.0, "06:40:00"),
    ("Garagem (chegada)", "garage", 0.0, "06:50:00"),
]


def points(scheduled: bool = True) -> list[Point]:
    out = []
    for seq, (name, kind, x, when) in enumerate(PLAN):
        lat, lon = at(x)
        out.append(Point(name, kind, lat, lon, seq, when if scheduled else None, 1))
    return out


def stop(x: float, start: float, dur_s: float = 60.0, off_m: float = 0.0) -> Stop:
    lat, lon = at(x + off_m)
    return Stop(0, 0, start, start + dur_s, lat, lon, 3, False)


def on_time(shift_min: float = 0.0, skip: Sequence[int] = ()) -> list[Stop]:
    """A stop at each point of PLAN at its scheduled time plus shift (the garage: parked until then)."""
    out = [stop(0.0, hm(5, 0) + 60 * shift_min, 3600.0)]  # parked, leaves at 06:00 + shift
    for i, (_, _, x, when) in enumerate(PLAN[1:], start=1):
        if i not in skip:
            h, m, _s = (int(v) for v in when.split(":"))
            out.append(stop(x, hm(h, m) + 60 * shift_min))
    return out


def run(found: Sequence[Stop], path: Path | None = None, scheduled: bool = True) -> Run:
    return evaluate(points(scheduled), found, DAY, R, path, DEFAULT.gap_s)


def statuses(r: Run) -> list[str]:
    return [v.status for v in r.visits]


def test_on_time_run() -> None:
    r = run(on_time())
    assert statuses(r) == [SERVED] * len(PLAN) and r.made
    assert r.visits[0].departure == hm(6, 0) and r.visits[3].arrival == hm(6, 20)
    assert [r.delay_min(i) for i in range(len(PLAN))] == [0.0] * len(PLAN)


def test_late_run() -> None:
    r = run(on_time(shift_min=12.5))
    assert statuses(r) == [SERVED] * len(PLAN) and r.made
    assert r.delay_min(0) == 12.5 and r.delay_min(3) == 12.5
    early = run(on_time(shift_min=-3))
    assert early.delay_min(3) == -3.0


def test_skipped_point_without_a_path() -> None:
    r = run(on_time(skip=[2]))
    assert statuses(r) == [SERVED, SERVED, SKIPPED, SERVED, SERVED, SERVED, SERVED]
    assert r.count(SKIPPED) == 1 and r.made and r.delay_min(2) is None


def drive_by(x0: float, x1: float, t0: float, t1: float, step_s: float) -> Path:
    """Fixes moving from x0 to x1 metres between t0 and t1, one every step_s."""
    t = np.arange(t0, t1 + 1e-9, step_s)
    xs = x0 + (x1 - x0) * (t - t0) / (t1 - t0)
    ll = [at(float(x)) for x in xs]
    return t, np.array([p[0] for p in ll]), np.array([p[1] for p in ll])


def test_passed_without_stopping() -> None:
    # 250 m per 30 s fix: no fix falls within 50 m of Ponto 2 (x = 1900 m at 06:09:50, then 2150 m at 06:10:20),
    # but the line between them crosses it, at 06:10:02.
    path = drive_by(1900.0 - 250.0 * 4, 2150.0 + 250.0 * 4, hm(6, 9, 50) - 120, hm(6, 10, 20) + 120, 30.0)
    r = run(on_time(skip=[2]), path)
    assert statuses(r)[2] == PASSED and r.count(SKIPPED) == 0
    v = r.visits[2]
    assert v.arrival == pytest.approx(hm(6, 10, 2), abs=0.5) and v.distance_m == pytest.approx(0.0, abs=1.0)
    assert r.delay_min(2) == 0.0  # 2 s late, to the tenth of a minute
    # The same two fixes 90 s apart (over gap_s): no line is drawn between them, so the point was skipped.
    sparse = drive_by(1900.0, 2150.0, hm(6, 9, 50), hm(6, 11, 20), 90.0)
    assert statuses(run(on_time(skip=[2]), sparse))[2] == SKIPPED


def test_out_and_back_with_repeated_coordinates() -> None:
    for scheduled in (True, False):
        # Ponto 1 missed on the way out, served on the way back: the return stop goes to "Ponto 1 (volta)".
        r = run(on_time(skip=[1]), scheduled=scheduled)
        assert statuses(r) == [SERVED, SKIPPED, SERVED, SERVED, SERVED, SERVED, SERVED], scheduled
        assert r.visits[5].arrival == hm(6, 40)
        # Served on the way out only: the outbound stop is not claimed by the return point.
        r = run(on_time(skip=[5]), scheduled=scheduled)
        assert statuses(r) == [SERVED, SERVED, SERVED, SERVED, SERVED, SKIPPED, SERVED], scheduled
        assert r.visits[1].arrival == hm(6, 5)


def test_consecutive_stops_at_a_point_are_one_visit() -> None:
    found = on_time()
    # Moved up 40 m inside the garage yard before leaving: departure is the end of the second stop.
    found = [replace(found[0], end=hm(5, 50)), stop(0.0, hm(5, 52), 8 * 60.0, off_m=-40.0), *found[1:]]
    r = run(found)
    assert r.visits[0].status == SERVED and r.visits[0].departure == hm(6, 0)


def test_runs_not_made() -> None:
    nothing = run([])
    assert statuses(nothing) == [SKIPPED] * len(PLAN) and not nothing.made
    garage_only = run([stop(0.0, hm(5, 0), 6 * 3600.0)])  # parked all morning: one garage point served
    assert garage_only.count(SERVED) == 1 and not garage_only.made
    # Two of four boarding points and no school: made; one of four: not made.
    assert run(on_time(skip=[1, 2, 3])).made
    assert not run(on_time(skip=[1, 2, 3, 4])).made
    # The school alone makes it.
    assert run(on_time(skip=[1, 2, 4, 5])).made
    # The same run four hours late is outside the morning run's search window.
    late = run(on_time(shift_min=240))
    assert not late.made and late.count(SERVED) == 0


def test_points_still_to_come_in_an_open_run_are_pending_not_skipped() -> None:
    # 06:07: the bus left the garage and served Ponto 1; Ponto 2, the school and the way back are still ahead.
    now = hm(6, 7)
    morning = [s for s in on_time() if s.start <= now]
    r = still_open(run(morning), now)
    assert statuses(r) == [SERVED, SERVED, PENDING, PENDING, PENDING, PENDING, PENDING]
    assert r.count(SKIPPED) == 0 and not r.made
    # A point the bus went past without stopping stays skipped: only those after the last visit are pending.
    later = hm(6, 12)
    r = still_open(run([s for s in on_time() if s.start <= later and not hm(6, 4) < s.start < hm(6, 6)]), later)
    assert statuses(r) == [SERVED, SKIPPED, SERVED, PENDING, PENDING, PENDING, PENDING]
    # Once the run's window has closed, what was not visited was skipped.
    closed = run(morning)
    assert still_open(closed, closed.closes) == closed and closed.count(SKIPPED) == 5
    # The row and its CSV line: "Pendente", no point counted as skipped.
    vehicle = Vehicle(1, "ABC1D23", None, None, None, None)
    route = Route(7, "R-07", "Linha 7", [], [], 60.0, 100.0, tuple(points()))
    out = row(vehicle, route, still_open(run(morning), now), LOCAL_TZ, pending=True)
    assert out["made"] is None and out["points_skipped"] == 0 and out["points_pending"] == 5 and out["skipped"] == []
    header, line1 = b"".join(iter_csv_chunks(COLUMNS, [out], LOCAL_TZ)).decode("utf-8-sig").splitlines()[:2]
    cells = dict(zip(header.split(";"), line1.split(";"), strict=True))
    assert cells["Realizada"] == "Pendente" and cells["Pontos pulados"] == "0" and cells["Pontos pendentes"] == "5"
    assert cells["Nomes dos pontos pulados"] == ""


# --- against the simulator --------------------------------------------------------------------

T0 = datetime(2026, 3, 2, 6, 0, tzinfo=LOCAL_TZ)


def local_hms(t: datetime) -> str:
    return t.astimezone(LOCAL_TZ).strftime("%H:%M:%S")


def sim_points(truth: Truth) -> list[Point]:
    """The planned stops scheduled at their true times, between a garage (origin and end) at the line's start."""
    planned = [s for s in truth.stops if s.kind in ("boarding", "school")]
    line = truth.route.line
    garage = (float(line.lat[0]), float(line.lon[0]))
    depart = next(s for s in truth.stops if s.kind == "garage")
    pts = [Point("Garagem", "garage", *garage, 0, local_hms(truth.time(depart.t_end_s)), 7)]
    for i, (plan, true) in enumerate(zip(truth.route.stops, planned, strict=True), start=1):
        when = local_hms(truth.time(true.t_start_s))
        pts.append(Point(f"{plan.kind} {i}", plan.kind, plan.lat, plan.lon, i, when, 7))
    return [*pts, Point("Garagem (chegada)", "garage", *garage, len(pts), None, 7)]


@pytest.mark.parametrize("seed", range(6))
def test_simulated_run_is_served_on_time(seed: int) -> None:
    sim = simulate_vehicle(seed, T0)
    truth = sim.truth
    planned = [s for s in truth.stops if s.kind in ("boarding", "school")]
    assert [s.kind for s in planned] == [s.kind for s in truth.route.stops]
    pts = sim_points(truth)
    track = Track.of([f for u in sim.uploads for f in u.fixes])
    keep = clean.keep_mask(track, DEFAULT)
    still = clean.stationary_mask(track, DEFAULT, keep)
    found = find_stops(
        track.t, track.lat, track.lon, track.speed_kmh, track.ignition, keep, DEFAULT,
        min_s=DEFAULT.onboard_stop_min_s, still=still,
    )  # fmt: skip
    path = (track.t[keep], track.lat[keep], track.lon[keep])
    r = evaluate(pts, found, T0.date(), R, path, DEFAULT.gap_s)
    assert r.made
    for i, (v, true) in enumerate(zip(r.visits[1:-1], planned, strict=True), start=1):
        assert v.status == SERVED, (v, true)
        assert v.arrival is not None and abs(v.arrival - truth.time(true.t_start_s).timestamp()) <= 30.0, (v, true)
        delay = r.delay_min(i)
        assert delay is not None and abs(delay) <= 0.5
    assert r.visits[0].status == SERVED and r.visits[-1].status == SERVED
    depart = next(s for s in truth.stops if s.kind == "garage")
    assert r.visits[0].departure == pytest.approx(truth.time(depart.t_end_s).timestamp(), abs=30.0)


def test_rows_from_the_engine_and_csv() -> None:
    sim = simulate_vehicle(3, T0)
    truth = sim.truth
    route = Route(7, "R-07", "Linha 7", list(truth.route.line.lon), list(truth.route.line.lat), 60.0, 100.0,
                  tuple(sim_points(truth)))  # fmt: skip
    vehicle = Vehicle(1, "ABC1D23", None, None, None, None)
    d0, d1 = day_bounds(T0.date())
    track = Track.of([f for u in sim.uploads for f in u.fixes])
    a = analyze(track, vehicle, [route], [line(route)], [], d0.timestamp(), d1.timestamp(), DEFAULT)
    [(got, r)] = runs_of(a, T0.date(), DEFAULT)
    tz = ZoneInfo("America/Sao_Paulo")  # the report's zone, an hour ahead of the service's
    out = row(vehicle, got, r, tz, pending=False)
    assert out["made"] is True and out["route_code"] == "R-07" and out["points_skipped"] == 0
    assert out["points_served"] == out["points_total"] == len(route.points) and out["skipped"] == []
    depart = next(s for s in truth.stops if s.kind == "garage")  # parked until then
    assert out["departure"].tzinfo == tz and out["scheduled_departure"] == truth.time(depart.t_end_s).astimezone(tz)
    assert abs(out["delay_school_min"]) <= 0.5 and abs(out["delay_departure_min"]) <= 0.5
    assert [p["status"] for p in out["points"]] == [SERVED] * len(route.points)
    assert out["points"][-1]["scheduled"] is None and out["points"][-1]["delay_min"] is None
    text = b"".join(iter_csv_chunks(COLUMNS, [out], tz)).decode("utf-8-sig")
    header, line1 = text.splitlines()[:2]
    assert "Realizada" in header and "Chegada à escola (America/Sao_Paulo)" in header
    assert ";Sim;" in line1 and line1.startswith("1;ABC1D23;02/03/2026;7;R-07;Linha 7;")
