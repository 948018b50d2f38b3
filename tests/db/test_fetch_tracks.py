"""fetch.tracks (a detector chunk's fixes in one statement) gives what fetch.track gives for each piece."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import asyncpg
import numpy as np
import pytest

from telemetria.occurrences.detection import derive_queries as dq
from telemetria.reports.analysis.track import Track
from telemetria.reports.store import fetch
from tests.db.conftest import Tracker, register

T0 = datetime(2026, 3, 2, 10, tzinfo=UTC)


@pytest.fixture
async def other_tracker(conn: asyncpg.Connection, tracker: Tracker) -> Tracker:
    return await register(conn, "XYZ9K87", "860000000000002")


async def store(conn: asyncpg.Connection, tracker: Tracker, times: list[datetime]) -> None:
    rows = [(tracker.vehicle_id, tracker.id, t, -10.44 + k * 1e-5, -62.47, float(k % 90), True, t)
            for k, t in enumerate(times)]  # fmt: skip
    cols = ["vehicle_id", "tracker_id", "ts", "lat", "lon", "speed_kmh", "valid", "received_at"]
    await conn.copy_records_to_table("fixes", records=rows, columns=cols)


def same(a: Track, b: Track) -> bool:
    return all(np.array_equal(getattr(a, f), getattr(b, f), equal_nan=True) for f in Track.__slots__)


@pytest.mark.parametrize("context_fixes", [1000, 7])
async def test_each_piece_gets_the_fixes_and_context_track_gives_it(
    conn: asyncpg.Connection, tracker: Tracker, other_tracker: Tracker, context_fixes: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:  # fmt: skip
    monkeypatch.setattr(fetch, "CONTEXT_FIXES", context_fixes)  # 7: the count, not the 2 h, bounds the context
    rng = random.Random(7)
    for tr in (tracker, other_tracker):
        # Irregular fixes over 12 h, some exactly on the pieces' edges and at CONTEXT from them.
        times = {T0 + timedelta(seconds=rng.randrange(0, 12 * 3600)) for _ in range(400)}
        times |= {T0 + timedelta(hours=4), T0 + timedelta(hours=2), T0 + timedelta(hours=9)}
        await store(conn, tr, sorted(times))
    pieces = [
        (tracker.vehicle_id, T0 + timedelta(hours=4), T0 + timedelta(hours=7)),
        (tracker.vehicle_id, T0 + timedelta(hours=7), T0 + timedelta(hours=9)),
        (other_tracker.vehicle_id, T0 + timedelta(hours=1), T0 + timedelta(hours=2)),
        (other_tracker.vehicle_id, T0 + timedelta(hours=20), T0 + timedelta(hours=21)),  # nothing in it
    ]
    got = await fetch.tracks(conn, pieces)
    assert sorted(got) == sorted((v, s) for v, s, _ in pieces)
    for v, s, e in pieces:
        want = await fetch.track(conn, v, s, e)
        assert same(got[(v, s)], want), (v, s)
    assert len(got[(tracker.vehicle_id, T0 + timedelta(hours=4))]) > 0
    assert len(got[(other_tracker.vehicle_id, T0 + timedelta(hours=20))]) == 0


async def test_the_edges_of_many_pieces_are_those_of_each(
    conn: asyncpg.Connection, tracker: Tracker, other_tracker: Tracker
) -> None:
    await store(conn, tracker, [T0, T0 + timedelta(hours=3)])
    await store(conn, other_tracker, [T0 - timedelta(days=8), T0 + timedelta(hours=1)])
    v, w = tracker.vehicle_id, other_tracker.vehicle_id
    at = [(v, T0 + timedelta(hours=1)), (w, T0), (v, T0 + timedelta(hours=5)), (w, T0 + timedelta(hours=1))]
    week = timedelta(days=7)
    assert await dq.fixes_before(conn, at, week) == [await dq.fix_before(conn, x, t, week) for x, t in at]
    assert await dq.fixes_after(conn, at) == [await dq.fix_after(conn, x, t) for x, t in at]
    # Found and not found, both ways.
    assert [r is None for r in await dq.fixes_before(conn, at, week)] == [False, True, False, True]  # 8 days back
    assert [r is None for r in await dq.fixes_after(conn, at)] == [False, False, True, True]


@pytest.mark.parametrize("budget", [1, 3, 64])
async def test_batched_pieces_get_what_track_gives_each(
    conn: asyncpg.Connection, tracker: Tracker, other_tracker: Tracker, budget: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The km report's live days (issue 37): read a few vehicle-days per statement, the same Track per piece."""
    monkeypatch.setattr(fetch, "BATCH_VEHICLE_DAYS", budget)
    calls: list[int] = []
    tracks = fetch.tracks

    async def counted(
        c: asyncpg.Connection, pieces: list[tuple[int, datetime, datetime]]
    ) -> dict[tuple[int, datetime], Track]:
        calls.append(len(pieces))
        return dict(await tracks(c, pieces))

    monkeypatch.setattr(fetch, "tracks", counted)
    rng = random.Random(11)
    for tr in (tracker, other_tracker):
        times = {T0 + timedelta(seconds=rng.randrange(-3600, 4 * 86400)) for _ in range(600)}
        await store(conn, tr, sorted(times))
    days = [(T0 + timedelta(days=k), T0 + timedelta(days=k + 1)) for k in range(4)]
    pieces = [(v, s, e) for v in (tracker.vehicle_id, other_tracker.vehicle_id) for s, e in days]
    got: dict[tuple[int, datetime], Track] = {}
    async for batch in fetch.batched(conn, pieces):
        got.update(batch)
    assert sorted(got) == sorted((v, s) for v, s, _ in pieces)
    for v, s, e in pieces:
        assert same(got[(v, s)], await fetch.track(conn, v, s, e)), (v, s)
    assert sum(calls) == len(pieces)
    assert len(calls) == {1: 8, 3: 4, 64: 1}[budget], calls


async def test_a_bounded_read_counts_first_and_stops_at_its_budget(
    conn: asyncpg.Connection, tracker: Tracker, other_tracker: Tracker, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A detector chunk's read ahead (issue 33, the soak's memory): at most about `statement_fixes` fixes a
    statement, a vehicle with more alone, and no statement after `most_fixes`; what it gives is what track gives."""
    calls: list[list[int]] = []
    tracks = fetch.tracks

    async def counted(
        c: asyncpg.Connection, pieces: list[tuple[int, datetime, datetime]]
    ) -> dict[tuple[int, datetime], Track]:
        calls.append([v for v, _, _ in pieces])
        return dict(await tracks(c, pieces))

    monkeypatch.setattr(fetch, "tracks", counted)
    third = await register(conn, "QWE4R56", "860000000000093")
    for tr, n in ((tracker, 300), (other_tracker, 40), (third, 50)):
        await store(conn, tr, [T0 + timedelta(seconds=30 * k) for k in range(n)])
    day = (T0 - timedelta(hours=1), T0 + timedelta(hours=5))
    v, w, x = tracker.vehicle_id, other_tracker.vehicle_id, third.vehicle_id
    pieces = [(w, *day), (x, *day), (v, *day)]

    got = await fetch.bounded(conn, pieces, statement_fixes=100, most_fixes=10_000)
    assert calls == [[w, x], [v]]  # 40 + 50 together; 300 alone, past a statement's share
    for p, s, e in pieces:
        assert same(got[(p, s)], await fetch.track(conn, p, s, e)), p

    calls.clear()
    got = await fetch.bounded(conn, pieces, statement_fixes=100, most_fixes=90)
    assert calls == [[w, x]] and sorted(got) == sorted([(w, day[0]), (x, day[0])])  # the budget spent: v left out
