"""`km`: km driven per vehicle (and per day) and the group total, from current rollups where they exist.

A full local day with the default knobs is read from its rollup when that is current; anything else
(today, a day with late fixes not yet refreshed, the partial days at the ends of the window, other
knobs) is computed from the fixes by the same pipeline, so the answer never depends on whether the
refresher has run.

A vehicle with no position at all reads "sem posições" (method `no_fixes`, km left blank on screen and in
the CSV), which is not "sem deslocamento" (positions, but no movement: 0 km). Days that have not begun
are not rows.

`planned_km` is what the routes assigned that day plan (each route's declared km, else its line's length;
None on a day with no route), summed over the days of a vehicle's row: the km the charts show beside it.
"""

from __future__ import annotations

import asyncio
from datetime import UTC, date, datetime
from typing import Any

from telemetria.db import Conn
from telemetria.reports.analysis.days import day_bounds, split
from telemetria.reports.analysis.facts import Facts, facts
from telemetria.reports.knobs import DEFAULT, ReportParams
from telemetria.reports.model import Context, Vehicle, Window
from telemetria.reports.output.csv import DATE, DATETIME, HMS, INT, KM, KMH, Column
from telemetria.reports.output.report import VEHICLE, Report, local, words
from telemetria.reports.store import rollup
from telemetria.reports.store.fetch import Args, analyze_all, analyze_piece, batched, piece_args


def method(f: Facts) -> str:
    """Which measurements produced the km: along the route, along the roads, chords, those present joined by '+'
    in that order ('route+chord', 'road', ...), none (no movement), or no fixes at all."""
    if f.fixes == 0:
        return "no_fixes"
    used = [name for name, m in (("route", f.route_m), ("road", f.road_m), ("chord", f.chord_m)) if m > 0]
    return "+".join(used) or "none"


async def daily_facts(
    conn: Conn, ctx: Context, win: Window, params: ReportParams, now: datetime | None = None
) -> dict[int, list[tuple[date, Facts, bool]]]:
    """Per vehicle, per day of the window in its zone up to now: the facts, and whether they all came from rollups."""
    now = now or datetime.now(UTC)
    days = win.local_days()
    stored: dict[tuple[int, date], Facts] = {}
    if params == DEFAULT and ctx.vehicles:
        stored = await rollup.current(conn, ctx, days[0], days[-1])
    zones = ctx.zones
    # Each vehicle's pieces, with its rollup when current; the others' fixes read in a few statements for all.
    pieces: list[tuple[Vehicle, date, datetime, datetime, Facts | None]] = []
    for v in ctx.vehicles:
        for day, s, e in split(win.start, win.end, win.tz):
            if s > now:
                break  # a day (or part of one) that has not begun: nothing to count, no row
            pieces.append((v, day, s, e, stored.get((v.id, day)) if (s, e) == day_bounds(day) else None))
    live = {(v.id, s): (v, day, s, e) for v, day, s, e, f in pieces if f is None and v.in_scope(day)}
    computed: dict[tuple[int, datetime], Facts] = {}
    async for fixes in batched(conn, [(v.id, s, e) for v, _, s, e in live.values()]):
        keys = list(fixes)
        args = [
            await piece_args(conn, v, zones, day, s, e, params, ctx.network_on(day), fixes[k])
            for k in keys
            for v, day, s, e in [live[k]]
        ]
        computed.update(zip(keys, await asyncio.to_thread(_facts_of, args), strict=True))
    out: dict[int, list[tuple[date, Facts, bool]]] = {v.id: [] for v in ctx.vehicles}
    for v, day, s, e, f in pieces:
        rows = out[v.id]
        rolled = f is not None
        if f is None:
            f = computed.get((v.id, s))
        if f is None:  # a day out of the reader's scope: analysed empty
            f = facts(await analyze_piece(conn, v, zones, day, s, e, params, ctx.network_on(day)))
        shown = s.astimezone(win.tz).date()
        if rows and rows[-1][0] == shown:  # a day of the report's zone cut by a local midnight
            merged = Facts()
            merged.add(rows[-1][1])
            merged.add(f)
            rows[-1] = (shown, merged, rows[-1][2] and rolled)
        else:
            rows.append((shown, f, rolled))
    return out


def _facts_of(pieces: list[Args]) -> list[Facts]:
    """The facts of each piece's analysis, in a worker thread."""
    return [facts(a) for a in analyze_all(pieces)]


def km_or_blank(key: str) -> Any:
    """A CSV getter: the km figure, blank for a row with no positions (no data is not 0 km)."""
    return lambda r: None if r["method"] == "no_fixes" else r[key]


def planned(v: Vehicle, days: list[date]) -> float | None:
    """km the vehicle's assigned routes plan over local `days`, None when no route was assigned on any of them."""
    each = [p for day in days if (p := v.planned_km(day)) is not None]
    return round(sum(each), 3) if each else None


def vehicle_row(v: Vehicle, f: Facts, win: Window) -> dict[str, Any]:
    return {
        **v.label(),
        "prefix": v.prefix,
        "contractor": v.contractor,
        "km": round(f.km, 3),
        "method": method(f),
        "route_km": round(f.route_m / 1000, 3),
        "chord_km": round(f.chord_m / 1000, 3),
        "road_km": round(f.road_m / 1000, 3),
        "gap_km": round(f.gap_m / 1000, 3),
        "paved_km": round(f.paved_m / 1000, 3),
        "unpaved_km": round(f.unpaved_m / 1000, 3),
        "odometer_km": None if f.odometer_m is None else round(f.odometer_m / 1000, 3),
        "fixes": f.fixes,
        "fixes_used": f.kept,
        "driving_s": round(f.moving_s),
        "max_kmh": None if f.max_kmh is None else round(f.max_kmh, 1),
        "first_fix": local(f.first_ts.timestamp(), win.tz) if f.first_ts else None,
        "last_fix": local(f.last_ts.timestamp(), win.tz) if f.last_ts else None,
    }


KM_COLUMNS = [
    *VEHICLE,
    Column("Prefixo", "prefix"),
    Column("Contratada", "contractor"),
    Column("Data", "date", DATE),
    Column("Km", km_or_blank("km"), KM),
    Column("Método", words("method")),
    Column("Km pela rota", km_or_blank("route_km"), KM),
    Column("Km em linha reta", km_or_blank("chord_km"), KM),
    Column("Km pelas estradas", km_or_blank("road_km"), KM),
    Column("Km em lacunas de sinal", km_or_blank("gap_km"), KM),
    Column("Km pavimentados", km_or_blank("paved_km"), KM),
    Column("Km não pavimentados", km_or_blank("unpaved_km"), KM),
    Column("Km do odômetro (conferência)", "odometer_km", KM),
    Column("Posições recebidas", "fixes", INT),
    Column("Posições usadas", "fixes_used", INT),
    Column("Tempo em movimento", "driving_s", HMS),
    Column("Velocidade máxima (km/h)", "max_kmh", KMH),
    Column("Primeira posição", "first_fix", DATETIME),
    Column("Última posição", "last_fix", DATETIME),
    Column("Km planejado (rotas)", "planned_km", KM),
]


async def km(
    conn: Conn, ctx: Context, win: Window, params: ReportParams, by_day: bool, now: datetime | None = None
) -> Report:
    """Km per vehicle (per day with by_day), the group total, method and gap share (Art. 15 §5)."""
    per = await daily_facts(conn, ctx, win, params, now)
    rows: list[dict[str, Any]] = []
    total = Facts()
    total_planned: list[float] = []
    rolled = live = 0
    for v in ctx.vehicles:
        whole = Facts()
        for day, f, from_rollup in per[v.id]:
            whole.add(f)
            rolled, live = rolled + from_rollup, live + (not from_rollup)
            if by_day:
                rows.append({**vehicle_row(v, f, win), "planned_km": planned(v, [day]), "date": day})
        plan = planned(v, [day for day, _, _ in per[v.id]])
        if not by_day:
            rows.append({**vehicle_row(v, whole, win), "planned_km": plan})
        if plan is not None:
            total_planned.append(plan)
        total.add(whole)
    plan_total = round(sum(total_planned), 3) if total_planned else None
    header = {"by": "day" if by_day else "vehicle"}

    def footer() -> dict[str, Any]:
        return {
            "total_km": round(total.km, 3),
            "total_route_km": round(total.route_m / 1000, 3),
            "total_chord_km": round(total.chord_m / 1000, 3),
            "total_road_km": round(total.road_m / 1000, 3),
            "total_paved_km": round(total.paved_m / 1000, 3),
            "total_unpaved_km": round(total.unpaved_m / 1000, 3),
            "total_gap_km": round(total.gap_m / 1000, 3),
            "total_planned_km": plan_total,
            "vehicle_days": {"from_rollups": rolled, "computed_live": live},
        }

    def totals() -> list[dict[str, Any]]:
        row = vehicle_row(Vehicle(0, "TOTAL", None, None, None, None), total, win)
        blank = {"vehicle_id": None, "date": None, "first_fix": None, "last_fix": None}
        return [{**row, "planned_km": plan_total, **blank}]

    columns = KM_COLUMNS if by_day else [c for c in KM_COLUMNS if c.header != "Data"]
    return Report("km", win, "vehicles", rows, columns, header, footer, totals=totals)
