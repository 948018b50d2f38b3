"""The simulated month through the real API and database: the boletim against the ground truth (issue 17, Quality).

A contract of four routes and a second contract's route along the first route's roads, over March 2026
(telemetria/sim/month.py: runs made, one partial, one not made, one substitution, a school-free day, a late
batch; a morning-only day, an early dismissal; the second contract's vehicle kept in its garage one day while
the first's drove the same roads, paid once): the registry is set up through the API, every tracker's fixes
are posted as it sent them, and the boletim must give every run the truth's status, its payable km within
0.5 % of the truth's (the default rule applied to the true coverage) and amounts exact to the cent. The late
day's runs are not made while its batch is withheld (its day already closed and rolled up) and are once it
arrives. The same boletim, byte for byte, from rollups and computed live from the fixes posted in another order
to a database of its own, and after a route edit made after the month. Figures: test-artifacts/measurement-month.*.
"""

from __future__ import annotations

import random
from collections import Counter, defaultdict
from datetime import date
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson

from telemetria.contracts.api import local_today
from telemetria.contracts.money import METRE, to_cents
from telemetria.fix import Fix
from telemetria.reports.store import rollup
from telemetria.settings import Settings
from telemetria.sim.month import FLEET, PRICE_PER_KM, SPARE, Month, RunTruth, simulate_month
from telemetria.sim.wire import body
from tests.conftest import scratch_database
from tests.db import golden, simcontract
from tests.db.conftest import People, make_people
from tests.db.simcontract import Ids, app_client, ok

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
PER_REQUEST = 250  # fixes a request carries at most: a tracker's store-and-forward batch
KM_REL = Decimal("0.005")
STATUSES = ("made", "partial", "not_made", "justified")


@cache
def month() -> Month:
    return simulate_month()


async def set_up(client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, m: Month) -> Ids:
    """The month's registry (tests/db/simcontract.py): its routes, the school year without its school-free day."""
    return await simcontract.set_up(client, conn, people, m.routes, m.no_school, FLEET,
                                    morning_only=m.morning_only, dismissals=m.dismissals)  # fmt: skip


Request = tuple[int, bool, list[Fix]]  # fleet index, late, fixes


def requests_in_order(m: Month) -> list[Request]:
    """Each tracker's uploads in the order it sent them, joined into requests of up to PER_REQUEST fixes."""
    out: list[Request] = []
    open_: dict[tuple[int, bool], list[Fix]] = {}
    for p in m.posts:
        key = (p.vehicle, p.late)
        buf = open_.setdefault(key, [])
        if len(buf) + len(p.upload.fixes) > PER_REQUEST:
            out.append((p.vehicle, p.late, buf))
            buf = open_[key] = []
        buf.extend(p.upload.fixes)
    # What is left over: the live days' tails, then the late day's batch, after every live one.
    out += [(v, late, buf) for (v, late), buf in sorted(open_.items(), key=lambda kv: kv[0][1]) if buf]
    return out


def requests_shuffled(m: Month, seed: int = 5) -> list[Request]:
    """The same fixes in another order: the late batches first, the rest backwards, each request shuffled."""
    rng = random.Random(seed)
    reqs = requests_in_order(m)
    ordered = [r for r in reqs if r[1]] + [r for r in reqs if not r[1]][::-1]
    return [(v, late, rng.sample(fixes, len(fixes))) for v, late, fixes in ordered]


async def post_all(client: httpx.AsyncClient, ids: Ids, reqs: list[Request]) -> int:
    n = 0
    for vehicle, _, fixes in reqs:
        r = await client.post("/api/v1/fixes", content=body(fixes), headers=ids.auth[vehicle])
        assert r.status_code == 200, r.text
        n += len(fixes)
    return n


async def boletim(client: httpx.AsyncClient, people: People, ids: Ids, fmt: str = "json") -> bytes:
    params = {"from": "2026-03-01", "to": "2026-03-31", "format": fmt}  # both contracts
    r = await client.get("/api/v1/reports/measurement", params=params, headers=people.auth("auditor"))
    assert r.status_code == 200, r.text
    return r.content


def pair_runs(m: Month, ids: Ids, runs: list[dict[str, Any]]) -> list[tuple[RunTruth, dict[str, Any] | None]]:
    """Each true run with the boletim's line for it (by date, route and run order in the day), or None."""
    by_key: dict[tuple[str, int], list[dict[str, Any]]] = defaultdict(list)
    for line in runs:
        by_key[(line["date"], line["route_id"])].append(line)
    for lines in by_key.values():
        lines.sort(key=lambda x: x.get("run_no", 0))
    out: list[tuple[RunTruth, dict[str, Any] | None]] = []
    for t in m.runs:
        lines = by_key.get((t.day.isoformat(), ids.routes[t.route]), [])
        out.append((t, lines[t.run_no - 1] if len(lines) >= t.run_no else None))
    return out


def figures(m: Month, pairs: list[tuple[RunTruth, dict[str, Any] | None]]) -> dict[str, Any]:
    """The status confusion matrix (truth × boletim) and the errors of payable km, realized km and coverage."""
    confusion: Counter[tuple[str, str]] = Counter()
    pay_err, real_err, cov_err = [], [], []
    cases = []
    for t, line in pairs:
        got = line["status"] if line else "missing"
        confusion[(t.status, got)] += 1
        if line is None:
            continue
        want = m.expected_payable_km(t)
        pay = Decimal(str(line["payable_km"]))
        if want:  # a run not paid has no relative error; check_lines wants its 0 exactly
            pay_err.append(float(abs(pay - want) / want))
        real_err.append(abs(float(line["realized_km"]) - t.route_km))
        cov_err.append(abs(float(line["coverage"]) - t.coverage))
        if t.kind != "made":
            shown = ("status", "coverage", "payable_km", "amount", "plate", "substitution")
            truth = {"status": t.status, "coverage": round(t.coverage, 4), "payable_km": float(round(want, 3))}
            cases.append({"date": t.day.isoformat(), "code": m.routes[t.route].code, "run_no": t.run_no,
                          "case": t.kind, "truth": truth, "boletim": {k: line[k] for k in shown}})  # fmt: skip
    rows = ["made", "partial", "not_made"]
    cols = [*STATUSES, "missing"]
    return {
        "runs": len(pairs),
        "confusion": {r: {c: confusion[(r, c)] for c in cols} for r in rows},
        "payable_km_rel_error": {"max": max(pay_err, default=0.0), "mean": sum(pay_err) / max(len(pay_err), 1)},
        "realized_km_abs_error_km": {"max": max(real_err, default=0.0), "mean": sum(real_err) / max(len(real_err), 1)},
        "coverage_abs_error": {"max": max(cov_err, default=0.0), "mean": sum(cov_err) / max(len(cov_err), 1)},
        "cases": cases,
    }


def write_figures(fig: dict[str, Any], extra: dict[str, Any]) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "measurement-month.json").write_bytes(orjson.dumps({**fig, **extra}, option=orjson.OPT_INDENT_2))
    cols = [*STATUSES, "missing"]
    lines = [
        f"Simulated month (telemetria/sim/month.py, seed {month().seed}): {fig['runs']} runs due",
        "",
        "status confusion (rows: truth, columns: boletim)",
        "truth \\ boletim  " + "  ".join(f"{c:>8}" for c in cols),
    ]
    for r, row in fig["confusion"].items():
        lines.append(f"{r:<16} " + "  ".join(f"{row[c]:>8}" for c in cols))
    p, k, c = fig["payable_km_rel_error"], fig["realized_km_abs_error_km"], fig["coverage_abs_error"]
    lines += [
        "",
        f"payable km vs truth, relative error: max {100 * p['max']:.3f} %, mean {100 * p['mean']:.3f} %",
        f"realized km vs truth, absolute error: max {k['max']:.3f} km, mean {k['mean']:.3f} km",
        f"coverage vs truth, absolute error: max {100 * c['max']:.2f} pts, mean {100 * c['mean']:.2f} pts",
    ]
    lines += ["", "the cases other than a plain run made (truth → boletim):"]
    for x in fig["cases"]:
        t, b = x["truth"], x["boletim"]
        sub = " (substitution)" if b["substitution"] else ""
        lines.append(
            f"  {x['date']} {x['code']} run {x['run_no']} {x['case']}: {t['status']} {100 * t['coverage']:.2f} %"
            f" {t['payable_km']:.3f} km → {b['status']} {100 * b['coverage']:.2f} % {b['payable_km']:.3f} km"
            f" R$ {b['amount']:.2f} by {b['plate']}{sub}"
        )
    lines += [f"{key}: {value}" for key, value in extra.items()]
    (ARTIFACTS / "measurement-month.txt").write_text("\n".join(lines) + "\n")


def same(got: bytes, want: bytes, what: str) -> None:
    """Byte for byte the same boletim; when not, both kept under test-artifacts/ to compare."""
    if got != want:
        ARTIFACTS.mkdir(exist_ok=True)
        for name, body in (("want", want), ("got", got)):
            (ARTIFACTS / f"measurement-month-{what}-{name}.json").write_bytes(body)
    assert got == want, f"{what}: the boletim changed (test-artifacts/measurement-month-{what}-*.json)"


def _d(x: float) -> Decimal:
    """A JSON number (fixed places, read as a float) as the Decimal it was written from."""
    return Decimal(repr(x))


def check_lines(m: Month, ids: Ids, report: dict[str, Any]) -> None:
    """Every run's status, vehicle, pay and amount against the truth; route lines and totals sums of runs."""
    price = PRICE_PER_KM
    pairs = pair_runs(m, ids, report["runs"])
    assert len(report["runs"]) == len(m.runs), "one line per due run, none on the school-free day"
    for t, line in pairs:
        assert line is not None, t
        assert line["status"] == t.status, (t, line)
        assert line["substitution"] is t.substitution, (t, line)
        if t.vehicle is not None:
            assert line["vehicle_id"] == ids.vehicles[t.vehicle], (t, line)
        route = m.routes[t.route]
        contracted = _d(line["contracted_km"])  # declared km × the run's share of the day, to the metre
        assert abs(contracted - route.declared_km * route.share(t.run_no)) <= METRE, (t, line)
        want = m.expected_payable_km(t)
        pay = _d(line["payable_km"])
        assert abs(pay - want) <= KM_REL * want, (t, line, want)
        if t.status == "made":
            assert pay == contracted, (t, line)
        # Payable km to the metre, then × price rounded to the cent once per line.
        assert _d(line["amount"]) == to_cents(pay * price), (t, line)
        assert line["off_route_km"] >= 0 and line["justification"] is None
        assert line["off_schedule"] is None, (t, line)  # the early dismissal was in the calendar: on schedule
    assert {r["vehicle_id"] for t, r in pairs if t.substitution and r} == {ids.vehicles[SPARE]}
    assert [c["contract_id"] for c in report["contracts"]] == ids.contracts
    for k, route in enumerate(m.routes):
        c = report["contracts"][route.contract]
        assert _d(c["price_per_km"]) == price and c["runs_pending"] == 0
        (line,) = [r for r in c["routes"] if r["route_id"] == ids.routes[k]]
        mine = [(t, r) for t, r in pairs if t.route == k and r]
        count = Counter(t.status for t, _ in mine)
        assert (
            line["runs_due"],
            line["runs_made"],
            line["runs_partial"],
            line["runs_not_made"],
            line["runs_justified"],
        ) == (len(mine), count["made"], count["partial"], count["not_made"], 0)
        for key in ("amount", "payable_km", "contracted_km", "realized_km"):
            assert _d(line[key]) == sum(_d(r[key]) for _, r in mine), (route.code, key)
        worth = sum((route.declared_km * route.share(t.run_no) for t, _ in mine), Decimal(0))  # morning-only: half
        assert abs(_d(line["contracted_km"]) - worth) <= METRE * len(mine)
    for c in report["contracts"]:
        for key in ("amount", "payable_km"):
            assert _d(c[key]) == sum(_d(r[key]) for r in c["routes"]), key


async def test_the_simulated_month_boletim_is_right_and_stable(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People, base_settings: Settings
) -> None:
    m = month()
    ids = await set_up(client, conn, people, m)
    reqs = requests_in_order(m)
    pool = client.app.state.pool  # type: ignore[attr-defined]

    # Every day but the late one, its days closed and rolled up: the late day's runs are not made (yet). Its
    # morning run's stretch shares 64 % of its roads with SIM-01, whose vehicle drove its own run in that window:
    # busy with its own run, it is no substitute (boletim.busy), so both runs are not made, on their own vehicle.
    posted = await post_all(client, ids, [r for r in reqs if not r[1]])
    assert await rollup.refresh_all(pool) > 0
    late_day = next(p.day for p in m.posts if p.late)
    early = orjson.loads(await boletim(client, people, ids))
    waiting = [r for r in early["runs"] if r["date"] == late_day.isoformat() and r["route_id"] == ids.routes[3]]
    assert [(r["run_no"], r["status"], r["substitution"], r["vehicle_id"]) for r in waiting] == [
        (1, "not_made", False, ids.vehicles[m.routes[3].vehicle]),
        (2, "not_made", False, ids.vehicles[m.routes[3].vehicle]),
    ], waiting
    before = [{k: r[k] for k in ("run_no", "status", "vehicle_id", "substitution", "coverage")} for r in waiting]

    # The late batch arrives (store-and-forward): its day is measured again, live and once rolled up.
    posted += await post_all(client, ids, [r for r in reqs if r[1]])
    late = await boletim(client, people, ids)
    assert await rollup.refresh(pool) > 0
    final = await boletim(client, people, ids)
    same(late, final, "late-live-vs-rolled")
    report = orjson.loads(final)
    fig = figures(m, pair_runs(m, ids, report["runs"]))
    extra = {"fixes_posted": posted, "contract_amounts": [c["amount"] for c in report["contracts"]],
             "before_late_batch": before}  # fmt: skip
    write_figures(fig, extra)
    check_lines(m, ids, report)
    # The boletim (JSON, CSV) and the nine reports over the month, their bytes pinned per rules' version: speed
    # work (issue 37) cannot change a figure unseen (tests/db/golden.py).
    answers, _ = await golden.reports(client, people.auth("auditor"), date(2026, 3, 1), date(2026, 3, 31))
    for arrival in ("track", "reporting"):  # they show when each fix arrived: here, the test's own clock
        del answers[arrival]
    answers |= {"boletim": final, "boletim-csv": await boletim(client, people, ids, "csv")}
    golden.check(golden.DIR / "month.json", answers)

    # The same fixes in another order (the late day first), to a database of its own: the same boletim, byte for
    # byte, there computed live from the fixes (here it came from rollups).
    async with scratch_database(base_settings, "telemetria_month_b") as other, app_client(other) as c2:
        conn2 = await asyncpg.connect(other.dsn)
        try:
            people2 = await make_people(conn2)
            ids2 = await set_up(c2, conn2, people2, m)
        finally:
            await conn2.close()
        assert (ids2.contract, ids2.routes, ids2.vehicles) == (ids.contract, ids.routes, ids.vehicles)
        assert await post_all(c2, ids2, requests_shuffled(m)) == posted
        same(await boletim(c2, people2, ids2), final, "other-order")

    # A route edit after the month (from today) leaves the month's boletim as it was, rollups refreshed or not.
    edit = {"declared_km": float(m.routes[0].declared_km) + 5, "effective_from": local_today().isoformat()}
    ok(await client.patch(f"/api/v1/routes/{ids.routes[0]}", json=edit, headers=people.auth("monitor")))
    same(await boletim(client, people, ids), final, "route-edit")
    await rollup.refresh(pool)
    same(await boletim(client, people, ids), final, "route-edit-refreshed")
    csv = await boletim(client, people, ids, "csv")
    assert m.routes[0].code.encode() in csv
