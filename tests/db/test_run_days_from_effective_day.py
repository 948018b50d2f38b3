"""A registry change hands the detector the days from its effective day on, not the last 36 (issue 33,
migrations/0034): an edit effective today has today judged again, an edit of three days ago those days and
today, and the occurrences of the days before it stay as they are; an edit dated ahead hands nothing until its
day comes (registry_promote)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import asyncpg

from telemetria.localtime import LOCAL_TZ
from telemetria.occurrences.detection import detector
from tests.db.test_occurrence_derive import Script, add_route, add_vehicle, local, school_day_back, store, world


def today() -> date:
    return datetime.now(LOCAL_TZ).date()


def span(first: date, last: date) -> list[date]:
    return [first + timedelta(days=k) for k in range((last - first).days + 1)]


async def handed(conn: asyncpg.Connection) -> list[date]:
    return [r["day"] for r in await conn.fetch("SELECT day FROM detector_run_days ORDER BY day")]


async def edit(conn: asyncpg.Connection, sql: str, *args: object, effective: date | None = None) -> None:
    """One registry edit, as the API makes it: in a transaction, effective from `effective` (None: today)."""
    async with conn.transaction():
        if effective is not None:
            await conn.execute("SELECT set_config('telemetria.effective_from', $1, true)", effective.isoformat())
        await conn.execute(sql, *args)


async def fresh(conn: asyncpg.Connection) -> None:
    await conn.execute(
        "TRUNCATE detector_rescans, detector_run_days; UPDATE detector_state SET rescanned_through = NULL"
    )


async def registered_before(conn: asyncpg.Connection, day: date) -> None:
    """The registry as if entered on `day`: its first versions valid from then (an edit made on an item's first
    day supersedes its first version, which is in force from the beginning)."""
    await conn.execute("UPDATE registry_versions SET valid_from = $1", day)
    await conn.execute("TRUNCATE detector_run_days")


async def test_an_edit_hands_the_days_from_its_effective_day(conn: asyncpg.Connection, clean: None) -> None:
    await fresh(conn)
    t = today()
    w = await world(conn, t - timedelta(days=40), t)
    v, _ = await add_vehicle(conn, "RUN1A11", w["contractor"], w["l9"], t - timedelta(days=30))
    a = await conn.fetchval("SELECT id FROM route_assignments WHERE vehicle_id = $1", v)
    await registered_before(conn, t - timedelta(days=40))

    # Effective today (the default): today only, not the 35 days before it.
    await edit(conn, "UPDATE routes SET name = 'Linha 9 (nova)' WHERE id = $1", w["l9"])
    assert await handed(conn) == [t]

    # Effective three days ago: those days and today.
    await conn.execute("TRUNCATE detector_run_days")
    await edit(conn, "UPDATE route_assignments SET weekdays = '{1,2,3,4}' WHERE id = $1", a,
               effective=t - timedelta(days=3))  # fmt: skip
    assert await handed(conn) == span(t - timedelta(days=3), t)

    # Dated ahead: nothing now; its day is handed when it comes (the promotion, however late).
    await conn.execute("TRUNCATE detector_run_days")
    ahead = t + timedelta(days=10)
    await edit(conn, "UPDATE routes SET speed_limit_kmh = 50 WHERE id = $1", w["l9"], effective=ahead)
    assert await handed(conn) == []
    assert await conn.fetchval("SELECT registry_promote($1)", ahead - timedelta(days=1)) == 0
    assert await handed(conn) == []
    assert await conn.fetchval("SELECT registry_promote($1)", ahead + timedelta(days=2)) == 1
    assert await handed(conn) == span(ahead, ahead + timedelta(days=2))

    # Dated facts hand from their own day: a justification, a calendar day, a contract's end moved.
    await conn.execute("TRUNCATE detector_run_days")
    await conn.execute(
        "INSERT INTO run_justifications (route_id, day, run_no, reason) VALUES ($1, $2, 1, 'Ponte interditada')",
        w["l9"], t - timedelta(days=2),
    )  # fmt: skip
    assert await handed(conn) == span(t - timedelta(days=2), t)
    await conn.execute("TRUNCATE detector_run_days")
    await conn.execute(
        "INSERT INTO school_calendar_days (day, year, school, reason) VALUES ($1, $2, false, 'Recesso')",
        t - timedelta(days=1), (t - timedelta(days=1)).year,
    )  # fmt: skip
    assert await handed(conn) == [t - timedelta(days=1), t]
    await conn.execute("TRUNCATE detector_run_days")
    await conn.execute("UPDATE contracts SET valid_to = $2 WHERE id = $1", w["contract"], t + timedelta(days=90))
    assert await handed(conn) == []  # its end moved further ahead: no day up to today changed
    await conn.execute("UPDATE contracts SET valid_to = $2 WHERE id = $1", w["contract"], t - timedelta(days=4))
    assert await handed(conn) == span(t - timedelta(days=3), t)
    # A new assignment (its first version is in force from the beginning) from its own first day.
    await conn.execute("TRUNCATE detector_run_days")
    await conn.execute(
        "INSERT INTO route_assignments (route_id, vehicle_id, valid_from) VALUES ($1, $2, $3)",
        w["l10"], v, t - timedelta(days=6),
    )  # fmt: skip
    assert await handed(conn) == span(t - timedelta(days=6), t)
    # A new route's first version is in force from the beginning: from the day after its contract's closed month.
    closed = (t - timedelta(days=detector.RUN_DAYS_BACK)).replace(day=1)
    reopens = (closed + timedelta(days=31)).replace(day=1)
    await conn.execute(
        "INSERT INTO measurement_closures (contract_id, month, content, sha256, closed_by)"
        " VALUES ($1, $2, '\\x00', repeat('0', 64), 'fiscal')",
        w["contract"], closed,
    )  # fmt: skip
    await conn.execute("TRUNCATE detector_run_days")
    await add_route(conn, "L11", w["contract"])
    assert await handed(conn) == span(reopens, t)
    # Never more than RUN_DAYS_BACK back.
    await conn.execute("TRUNCATE detector_run_days")
    await edit(conn, "UPDATE vehicles SET contractor_id = NULL WHERE id = $1", v, effective=t - timedelta(days=200))
    assert await handed(conn) == span(t - timedelta(days=detector.RUN_DAYS_BACK), t)


async def test_an_edit_of_three_days_ago_leaves_older_occurrences_as_they_are(
    pool: asyncpg.Pool, conn: asyncpg.Connection, clean: None
) -> None:
    """The detector judges the runs of the days from the edit's effective day only: an older day (here one whose
    runs not made were never judged, so judging it again would show) stays as it is."""
    await fresh(conn)
    t = today()
    older = school_day_back(t - timedelta(days=3))  # a school day before the edit's day
    w = await world(conn, t - timedelta(days=40), t)
    # Another vehicle reported weeks ago (the service was receiving fixes then), nothing since.
    other, to = await add_vehicle(conn, "RUN2B22", w["contractor"], w["l10"], t - timedelta(days=30))
    await store(conn, other, to, Script(local(t - timedelta(days=20), "06:30")).park(600).rows)
    silent, _ = await add_vehicle(conn, "RUN3C33", w["contractor"], w["l9"], t - timedelta(days=30))
    await registered_before(conn, t - timedelta(days=40))
    now = datetime.now(UTC)
    count = "SELECT count(*) FROM occurrences WHERE kind = 'run_not_made' AND vehicle_id = $1 AND day = $2"

    await edit(conn, "UPDATE routes SET name = 'Linha 9 (corrigida)' WHERE id = $1", w["l9"],
               effective=t - timedelta(days=3))  # fmt: skip
    stats = await detector.run_round(pool, now=now)
    assert stats.failed == 0
    assert stats.days == 4  # the edit's three days and today, not 36
    assert await handed(conn) == []
    assert await conn.fetchval(count, silent, older) == 0  # not judged again

    # Judged, that day has the vehicle's two runs not made: the test above would see it.
    await conn.execute("INSERT INTO detector_run_days (day) VALUES ($1)", older)
    await detector.run_round(pool, now=now)
    assert await conn.fetchval(count, silent, older) == 2
