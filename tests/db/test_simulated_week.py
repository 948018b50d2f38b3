"""The simulated week through the real database and the detector: its confusion matrix (issue 18, Quality).

sim/week.py plants known events in a school week of six vehicles (speeding, detours, unauthorised stops, a late
start, a skipped run, an authorised and an unauthorised substitution, a tracker off while moving, signal losses
filled in later, a late batch, an on-board leg over 2 h). Its registry goes in through the API; its fixes go
through the ingest writer (the path that keeps the detector's dirty marks) in ARRIVAL order, each stored with
its simulated arrival as received_at, and the detector runs a round (`run_round(pool, now=<simulated now>)`)
every ROUND_S of simulated time. Then: every planted event found exactly once with its start within 30 s,
nothing found where nothing happened, a withdrawn live alert (with its reason) for every silence later filled
in; and the same final occurrences when the same fixes arrive all at once after the week, in a database of its
own. The matrix is printed (pytest -s) and written to test-artifacts/simulated-week.md; docs/reliability.md
"The simulated week" shows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache, partial
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest

from telemetria.db import connect
from telemetria.ingest.writer import Writer
from telemetria.occurrences.detection.detector import run_round
from telemetria.occurrences.model import Kind
from telemetria.reports.knobs import DEFAULT as KNOBS
from telemetria.reports.store import rollup
from telemetria.settings import Settings
from telemetria.sim.week import FLEET, INACTIVE, Arrival, Week, simulate_week
from telemetria.sim.week_score import Item, Score, describe, markdown, score
from tests.conftest import ScratchDb, scratch_database
from tests.db import golden, simcontract
from tests.db.conftest import People, make_people
from tests.db.simcontract import Ids, app_client, ok

ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
ROUND_S = 1200  # simulated seconds between detector rounds (a planted silence lasts 1800 s)
START_TOLERANCE_S = 30.0

SET_RECEIVED = """
UPDATE fixes f SET received_at = u.at
FROM unnest($1::int[], $2::timestamptz[], $3::timestamptz[]) AS u(v, ts, at)
WHERE f.vehicle_id = u.v AND f.ts = u.ts"""
# latest_fixes keeps the newest valid fix's arrival too (the live map's age of a position).
SET_LATEST_RECEIVED = """
UPDATE latest_fixes l SET received_at = f.received_at
FROM fixes f WHERE f.vehicle_id = l.vehicle_id AND f.ts = l.valid_ts AND l.vehicle_id = ANY ($1::int[])"""
OCCURRENCES = """
SELECT o.id, o.kind, o.vehicle_id, o.route_id, o.run_no, o.natural_key, o.start_ts, o.end_ts, o.status, o.late,
       o.facts, (SELECT h.text FROM occurrence_history h WHERE h.occurrence_id = o.id AND h.action = 'withdrawn'
                 ORDER BY h.id DESC LIMIT 1) AS withdrawn_because
FROM occurrences o ORDER BY o.start_ts, o.vehicle_id, o.kind"""


@cache
def week() -> Week:
    return simulate_week()


class Feeder:
    """Stores arrivals through the ingest writer, then sets each fix's received_at to its simulated arrival."""

    def __init__(self, db: ScratchDb, settings: Settings, pool: asyncpg.Pool, ids: Ids) -> None:
        self.writer = Writer(partial(connect, settings, db.dsn), max_link_s=KNOBS.max_link_s)
        self.pool = pool
        self.ids = ids
        self.fixes = 0

    async def __call__(self, arrivals: Sequence[Arrival]) -> None:
        by_vehicle: dict[int, list[Arrival]] = defaultdict(list)
        for a in arrivals:
            by_vehicle[a.vehicle].append(a)
        results = await asyncio.gather(
            *(self.writer.write(self.ids.trackers[v], list(range(len(xs))), [x.fix for x in xs])
              for v, xs in by_vehicle.items())
        )  # fmt: skip
        self.fixes += sum(r.accepted for r in results)
        vids = [self.ids.vehicles[a.vehicle] for a in arrivals]
        await self.pool.execute(SET_RECEIVED, vids, [a.fix.ts for a in arrivals], [a.at for a in arrivals])
        await self.pool.execute(SET_LATEST_RECEIVED, sorted(set(vids)))


async def registry(db: ScratchDb, client: Any, w: Week) -> tuple[Ids, People]:
    conn = await asyncpg.connect(db.dsn)
    try:
        people = await make_people(conn)
        ids = await simcontract.set_up(client, conn, people, w.routes, (), FLEET, "SEM", "sim-week")
    finally:
        await conn.close()
    patch = {"active": False}  # still the contractor's, and still reporting: an unauthorised substitute
    ok(await client.patch(f"/api/v1/vehicles/{ids.vehicles[INACTIVE]}", json=patch, headers=people.auth("admin")))
    return ids, people


def round_times(w: Week) -> list[datetime]:
    """A round at the first ROUND_S boundary after each arrival (every ROUND_S while data flows), and at the week's
    end: the Monday after it starts, before its runs are due (the week has no fixes of that day)."""
    step = ROUND_S
    times = {datetime.fromtimestamp(math.ceil(a.at.timestamp() / step) * step, UTC) for a in w.arrivals}
    return [*sorted(times), w.end]


async def feed_live(feed: Feeder, pool: asyncpg.Pool, w: Week) -> int:
    """The arrivals in order, a detector round at each round time; returns the rounds run."""
    pending = list(w.arrivals)
    i = 0
    rounds = round_times(w)
    for now in rounds:
        j = i
        while j < len(pending) and pending[j].at <= now:
            j += 1
        if j > i:
            await feed(pending[i:j])
            i = j
        stats = await run_round(pool, now=now)
        assert not stats.skipped and not stats.failed, (now, stats)
    assert i == len(pending)
    return len(rounds)


async def occurrences(pool: asyncpg.Pool) -> list[asyncpg.Record]:
    return list(await pool.fetch(OCCURRENCES))


def items(rows: Sequence[asyncpg.Record], ids: Ids) -> list[Item]:
    return [
        Item(r["kind"], ids.vehicles.index(r["vehicle_id"]), r["start_ts"], f"#{r['id']} {r['status']} {r['facts']}")
        for r in rows
        if r["status"] != "withdrawn"
    ]


def final_set(rows: Sequence[asyncpg.Record], ids: Ids) -> set[tuple[Any, ...]]:
    """What must not depend on arrival order: every non-withdrawn occurrence, by fleet and route index."""
    return {
        (r["kind"], ids.vehicles.index(r["vehicle_id"]), r["start_ts"], r["end_ts"],
         None if r["route_id"] is None else ids.routes.index(r["route_id"]), r["run_no"], r["late"])
        for r in rows if r["status"] != "withdrawn"
    }  # fmt: skip


def truth(w: Week) -> list[Item]:
    return [Item(e.kind, e.vehicle, e.start, f"{e.note} route {e.route} run {e.run_no}".strip()) for e in w.events]


def write_matrix(s: Score, w: Week, extra: list[str]) -> str:
    text = "\n".join(
        [
            f"Simulated week (telemetria/sim/week.py, seed {w.seed}): {len(w.events)} planted occurrences, "
            f"{len(w.arrivals)} fixes, {len(w.silences)} silences filled in later",
            "",
            markdown(s),
            *extra,
            describe(s),
        ]
    )
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "simulated-week.md").write_text(text + "\n")
    return text


@dataclass
class Outcome:
    """What the detector stored from the week: fed live (in arrival order) and all at once after the week."""

    live: list[asyncpg.Record]
    ids: Ids
    at_once: list[asyncpg.Record]
    ids_at_once: Ids
    score: Score
    text: str
    reports_rolled: dict[str, bytes]  # live arrivals, read from the rollups
    reports_computed: dict[str, bytes]  # all at once, computed from the fixes


@contextlib.asynccontextmanager
async def _fed_world(base_settings: Settings, name: str, w: Week) -> AsyncIterator[World]:
    """A database of its own with the week's registry, a service on it (no detector of its own), a feeder whose
    writer runs until the caller stops it (stopping twice is harmless) or the block ends."""
    async with scratch_database(base_settings, name) as db, app_client(db, detector_interval_s=0) as client:
        ids, people = await registry(db, client, w)
        pool = client.app.state.pool  # type: ignore[attr-defined]
        feed = Feeder(db, db.settings(), pool, ids)
        feed.writer.start()
        try:
            yield World(pool, feed, ids, client, people)
        finally:
            await feed.writer.stop()


@dataclass
class World:
    pool: asyncpg.Pool
    feed: Feeder
    ids: Ids
    client: httpx.AsyncClient
    people: People
    sources: dict[str, int] | None = None  # the km report's vehicle_days: from rollups, computed live


REPORTS = golden.REPORTS
GOLDEN = golden.DIR / "week.json"


async def reports(world: World, w: Week) -> dict[str, bytes]:
    """Every report of the week as the API answers the auditor (golden.reports); where its days came from kept."""
    out, world.sources = await golden.reports(world.client, world.people.auth("auditor"), w.days[0], w.days[-1])
    return out


async def _live(base_settings: Settings, w: Week) -> tuple[list[asyncpg.Record], Ids, int, float, dict[str, bytes]]:
    t0 = time.perf_counter()
    async with _fed_world(base_settings, "telemetria_week_a", w) as world:
        pool, feed = world.pool, world.feed
        rounds = await feed_live(feed, pool, w)
        await feed.writer.stop()
        assert feed.fixes == len({(a.vehicle, a.fix.ts) for a in w.arrivals})
        live_s = time.perf_counter() - t0
        # Here the reports read rollups (every day of the week closed and rolled up); at once, the fixes.
        assert await rollup.refresh_all(pool, now=w.end + timedelta(days=1)) > 0
        rolled = await reports(world, w)
        # Vehicle-days with no rollup (no fix stored that day: nothing to mark) are computed, as always.
        assert world.sources is not None and world.sources["from_rollups"] >= 20, world.sources
        return await occurrences(pool), world.ids, rounds, live_s, rolled


async def _at_once(base_settings: Settings, w: Week) -> tuple[list[asyncpg.Record], Ids, dict[str, bytes]]:
    async with _fed_world(base_settings, "telemetria_week_b", w) as world:
        pool, feed = world.pool, world.feed
        await feed(w.arrivals)
        await feed.writer.stop()
        for _ in range(3):  # the first round queues the closed days, the next ones work through them
            stats = await run_round(pool, now=w.end)
            assert not stats.failed, stats
        computed = await reports(world, w)
        assert world.sources is not None and world.sources["from_rollups"] == 0, world.sources
        return await occurrences(pool), world.ids, computed


@pytest.fixture(scope="module")
async def outcome(base_settings: Settings) -> Outcome:
    w = week()
    live, ids, rounds, live_s, rolled = await _live(base_settings, w)
    at_once, ids2, computed = await _at_once(base_settings, w)
    s = score(truth(w), items(live, ids), START_TOLERANCE_S, kinds=[k.value for k in Kind])
    withdrawn = [r for r in live if r["status"] == "withdrawn"]
    extra = [f"{rounds} detector rounds (every {ROUND_S} s of simulated time) in {live_s:.0f} s; "
             f"{len(withdrawn)} occurrences withdrawn:", ""]  # fmt: skip
    extra += [f"- withdrawn: {r['kind']} vehicle {ids.vehicles.index(r['vehicle_id'])} {r['start_ts'].isoformat()} "
              f"→ {r['end_ts'] and r['end_ts'].isoformat()} ({r['withdrawn_because']})" for r in withdrawn]  # fmt: skip
    extra.append("")
    text = write_matrix(s, w, extra)
    print("\n" + text)
    return Outcome(live, ids, at_once, ids2, s, text, rolled, computed)


def test_every_planted_event_is_found_once_with_its_start_within_30_s(outcome: Outcome) -> None:
    s = outcome.score
    assert not s.missed and not s.duplicates, "\n" + describe(s)


def test_nothing_is_found_where_nothing_happened(outcome: Outcome) -> None:
    assert not outcome.score.false, "\n" + describe(outcome.score)


def test_a_live_alert_is_withdrawn_for_every_silence_filled_in_later(outcome: Outcome) -> None:
    ids, problems = outcome.ids, []
    withdrawn = [r for r in outcome.live if r["status"] == "withdrawn" and r["kind"] == "tracker_silent"]
    for hole in week().silences:
        mine = [
            r for r in withdrawn
            if ids.vehicles.index(r["vehicle_id"]) == hole.vehicle
            and r["start_ts"] <= hole.end and (r["end_ts"] is None or r["end_ts"] >= hole.start)
        ]  # fmt: skip
        if not mine:
            problems.append(f"no withdrawn live alert for {hole}")
        elif not all("preenchido" in (r["withdrawn_because"] or "") for r in mine):
            problems.append(f"withdrawn without the reason: {[dict(r) for r in mine]}")
    assert not problems, "\n".join(problems)


def test_the_same_occurrences_whatever_the_arrival_order(outcome: Outcome) -> None:
    a, b = final_set(outcome.live, outcome.ids), final_set(outcome.at_once, outcome.ids_at_once)
    assert a == b, f"only live: {sorted(a - b)}\nonly at once: {sorted(b - a)}"


def test_the_nine_reports_are_the_same_whatever_the_arrival_order_and_from_rollups(outcome: Outcome) -> None:
    for name, _ in REPORTS:
        assert outcome.reports_rolled[name] == outcome.reports_computed[name], name


def test_the_reports_of_the_week_are_what_this_analysis_version_gave(outcome: Outcome) -> None:
    """Every report's bytes pinned per ANALYSIS_VERSION (tests/data/reports_golden/week.json): work that must not
    change a figure (issue 37's speed) cannot, and a change of the rules that does must bump the version, which
    outdates every stored rollup (reports/knobs.py). After a deliberate bump, write the new digests with
    TELEMETRIA_WRITE_GOLDEN=1 and say in the commit what changed and why."""
    golden.check(GOLDEN, outcome.reports_computed)
