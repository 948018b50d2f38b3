"""POST /api/v1/fixes against the real database: exactly-once storage, rejections, auth, limits."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta

import asyncpg
import httpx
import orjson
import pytest

from telemetria.app import create_app
from telemetria.registry import fleet
from tests.db.conftest import Tracker, register

T0 = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=8)


def fix(i: int, **kw: object) -> dict[str, object]:
    """A valid fix i*30 s after T0 on a straight line north of Jaru."""
    base: dict[str, object] = {
        "ts": (T0 + timedelta(seconds=30 * i)).isoformat(),
        "lat": -10.43 + i * 0.001,
        "lon": -62.47,
        "speed_kmh": 40.0,
    }
    base.update(kw)
    return base


async def post(client: httpx.AsyncClient, tracker: Tracker, body: object) -> httpx.Response:
    return await client.post(
        "/api/v1/fixes", content=orjson.dumps(body), headers={**tracker.auth, "Content-Type": "application/json"}
    )


async def count(conn: asyncpg.Connection, vehicle_id: int | None = None) -> int:
    if vehicle_id is None:
        return int(await conn.fetchval("SELECT count(*) FROM fixes"))
    return int(await conn.fetchval("SELECT count(*) FROM fixes WHERE vehicle_id = $1", vehicle_id))


async def test_single_fix_is_stored_with_every_field(client, tracker, conn) -> None:
    body = fix(
        0,
        heading_deg=370.0,
        altitude_m=150.5,
        accuracy_m=4.0,
        hdop=0.9,
        satellites=9,
        ignition=True,
        odometer_m=12345.6,
        driver_id="CARD42",
        valid=True,
        attributes={"batt": 87},
        fuel=12,
    )
    r = await post(client, tracker, body)
    assert r.status_code == 200, r.text
    assert r.json() == {"accepted": 1, "duplicates": 0, "rejected": []}
    row = await conn.fetchrow("SELECT * FROM fixes")
    assert row["vehicle_id"] == tracker.vehicle_id and row["tracker_id"] == tracker.id
    assert row["ts"] == T0
    assert (row["lat"], row["lon"]) == (-10.43, -62.47)
    assert row["heading_deg"] == pytest.approx(10.0)
    assert row["satellites"] == 9 and row["ignition"] is True and row["driver_id"] == "CARD42"
    assert row["odometer_m"] == pytest.approx(12345.6)
    # Unknown keys are kept, not dropped.
    assert row["attributes"] == {"batt": 87, "fuel": 12}
    assert row["received_at"] >= row["ts"]


async def test_epoch_seconds_and_milliseconds(client, tracker, conn) -> None:
    s = int(T0.timestamp())
    r = await post(client, tracker, {"fixes": [fix(0, ts=s), fix(1, ts=(s + 30) * 1000 + 250)]})
    assert r.json()["accepted"] == 2
    got = [r["ts"] for r in await conn.fetch("SELECT ts FROM fixes ORDER BY ts")]
    assert got == [T0, T0 + timedelta(seconds=30, milliseconds=250)]


# Small flushes are one INSERT of arrays, large ones a COPY that falls back to a staged insert
# when it meets a duplicate: every dedup test runs on both paths.
SIZES = pytest.mark.parametrize("n", [40, 300], ids=["insert-path", "copy-path"])


@SIZES
async def test_batch_and_exact_resend_store_once(client, tracker, conn, n) -> None:
    batch = {"fixes": [fix(i) for i in range(n)]}
    assert (await post(client, tracker, batch)).json() == {"accepted": n, "duplicates": 0, "rejected": []}
    assert (await post(client, tracker, batch)).json() == {"accepted": 0, "duplicates": n, "rejected": []}
    assert await count(conn) == n


@SIZES
async def test_partially_overlapping_resend(client, tracker, conn, n) -> None:
    await post(client, tracker, {"fixes": [fix(i) for i in range(0, n)]})
    r = await post(client, tracker, {"fixes": [fix(i) for i in range(n - 10, 2 * n)]})
    assert r.json() == {"accepted": n, "duplicates": 10, "rejected": []}
    assert await count(conn) == 2 * n


@SIZES
async def test_same_instant_twice_in_one_batch_counts_once(client, tracker, conn, n) -> None:
    r = await post(client, tracker, {"fixes": [fix(0), fix(0, lat=-10.5)] + [fix(i) for i in range(1, n)]})
    assert r.json() == {"accepted": n, "duplicates": 1, "rejected": []}
    # The first occurrence is the one kept.
    assert await conn.fetchval("SELECT lat FROM fixes WHERE ts = $1", T0) == -10.43


async def test_out_of_order_and_days_late_batches(client, tracker, conn) -> None:
    live = [fix(i) for i in range(100, 110)]
    late = [fix(i, ts=(T0 - timedelta(days=3, seconds=30 * i)).isoformat()) for i in range(20)]
    late.reverse()
    assert (await post(client, tracker, {"fixes": live})).json()["accepted"] == 10
    assert (await post(client, tracker, {"fixes": late[::2] + late[1::2]})).json()["accepted"] == 20
    rows = await conn.fetch("SELECT ts FROM fixes WHERE vehicle_id = $1 ORDER BY ts", tracker.vehicle_id)
    assert len(rows) == 30
    assert rows[0]["ts"] == T0 - timedelta(days=3, seconds=30 * 19)


REJECTIONS = [
    (fix(1, lat=91.0), "lat/lon"),
    (fix(1, lon=-180.5), "lat/lon"),
    (fix(1, lat=0.0, lon=0.0), "(0, 0)"),
    # A day ahead, not minutes: this list is built when tests are collected, maybe many minutes before it runs.
    (fix(1, ts=(datetime.now(UTC) + timedelta(days=1)).isoformat()), "future"),
    (fix(1, ts=(datetime.now(UTC) - timedelta(days=800)).isoformat()), "retention"),
    (fix(1, speed_kmh=-1.0), "speed_kmh"),
    (fix(1, speed_kmh=301.0), "speed_kmh"),
    (fix(1, lat="-10.4"), "lat: expected a number"),
    (fix(1, lat=None), "lat: expected a number"),
    ({"lat": -10.4, "lon": -62.4}, "ts: required"),
    (fix(1, ts="2026-11-30T10:00:00"), "no UTC offset"),
    (fix(1, ts="yesterday"), "ts:"),
    (fix(1, ts=True), "ts:"),
    (fix(1, ignition="yes"), "ignition"),
    (fix(1, satellites=3.5), "satellites"),
    (fix(1, accuracy_m=-3.0), "accuracy_m"),
    (fix(1, driver_id={"a": 1}), "driver_id"),
    (fix(1, attributes=[1, 2]), "attributes"),
    ("not an object", "expected an object"),
]


@pytest.mark.parametrize(("bad", "reason"), REJECTIONS, ids=[r for _, r in REJECTIONS])
async def test_each_rejection_names_its_reason_and_spares_the_batch(client, tracker, conn, bad, reason) -> None:
    r = await post(client, tracker, {"fixes": [fix(0), bad, fix(2)]})
    assert r.status_code == 200
    body = r.json()
    assert body["accepted"] == 2
    assert [x["index"] for x in body["rejected"]] == [1]
    assert reason in body["rejected"][0]["error"]
    assert await count(conn) == 2


async def test_single_invalid_fix_is_422_naming_the_field(client, tracker, conn) -> None:
    r = await post(client, tracker, fix(0, lat=123.0))
    assert r.status_code == 422
    assert "lat" in r.json()["detail"]
    assert r.json()["rejected"][0]["index"] == 0
    assert await count(conn) == 0


async def test_non_finite_numbers_reject_only_their_item(client, tracker, conn) -> None:
    body = (
        b'{"fixes": ['
        + orjson.dumps(fix(0))
        + b', {"ts": 1764500000, "lat": NaN, "lon": 1e999}, '
        + orjson.dumps(fix(2))
        + b"]}"
    )
    r = await client.post("/api/v1/fixes", content=body, headers=tracker.auth)
    assert r.status_code == 200
    assert r.json()["accepted"] == 2 and r.json()["rejected"][0]["index"] == 1
    assert "finite" in r.json()["rejected"][0]["error"]


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        (b"{not json", 400, "not valid JSON"),
        (b"[" * 5000 + b"]" * 5000, 400, "not valid JSON"),
        (b'"a string"', 422, "body"),
        (b"42", 422, "body"),
        (b'{"fixes": {"ts": 1}}', 422, "fixes: expected an array"),
        (b"", 400, "not valid JSON"),
    ],
)
async def test_malformed_bodies(client, tracker, conn, body, status, words) -> None:
    r = await client.post("/api/v1/fixes", content=body, headers={**tracker.auth, "Content-Type": "application/json"})
    assert r.status_code == status
    assert words in r.json()["detail"]
    assert await count(conn) == 0


async def test_wrong_content_type_is_415(client, tracker) -> None:
    r = await client.post(
        "/api/v1/fixes",
        content=b"lat=1&lon=2",
        headers={**tracker.auth, "Content-Type": "application/x-www-form-urlencoded"},
    )
    assert r.status_code == 415


async def test_limits_on_body_and_batch_size(client, tracker, conn) -> None:
    too_many = {"fixes": [fix(i) for i in range(10_001)]}
    r = await post(client, tracker, too_many)
    assert r.status_code == 413 and "10000" in r.json()["detail"]
    huge = b'{"fixes": [], "pad": "' + b"x" * (17 * 1024 * 1024) + b'"}'
    r = await client.post("/api/v1/fixes", content=huge, headers=tracker.auth)
    assert r.status_code == 413
    assert await count(conn) == 0


async def test_auth_failures(client, tracker, conn) -> None:
    assert (await client.post("/api/v1/fixes", json=fix(0))).status_code == 401
    r = await client.post("/api/v1/fixes", json=fix(0), headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer")
    r = await client.post("/api/v1/fixes", json=fix(0), headers={"Authorization": f"Basic {tracker.token}"})
    assert r.status_code == 401
    # Deactivation applies at once, even while the token is still in the auth cache.
    assert (await post(client, tracker, fix(0))).status_code == 200
    await fleet.set_tracker_active(conn, tracker.unique_id, False)
    r = await post(client, tracker, fix(1))
    assert r.status_code == 401
    assert await count(conn) == 1


async def test_ten_thousand_fix_batch(client, tracker, conn) -> None:
    fixes = [fix(i, ts=(T0 - timedelta(seconds=i)).isoformat()) for i in range(10_000)]
    r = await post(client, tracker, {"fixes": fixes})
    assert r.json() == {"accepted": 10_000, "duplicates": 0, "rejected": []}
    assert await count(conn) == 10_000


@pytest.mark.parametrize("size", [5, 150], ids=["insert-path", "copy-path"])
async def test_concurrent_requests_group_commit_exactly_once(test_db, tracker, conn, size) -> None:
    """Many requests at once, overlapping: every fix stored once and credited once."""
    bodies = [{"fixes": [fix(j) for j in range(i, i + size)]} for i in range(0, 200, 2)]
    # One tracker sends all 100 at once: more than its default share of requests in flight.
    app = create_app(test_db.settings(rollup_interval_s=0, ingest_max_inflight_requests_per_tracker=len(bodies)))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client:
            answers = await asyncio.gather(*(post(client, tracker, b) for b in bodies))
    assert all(a.status_code == 200 for a in answers)
    accepted = sum(a.json()["accepted"] for a in answers)
    dups = sum(a.json()["duplicates"] for a in answers)
    stored = await count(conn)
    assert stored == 198 + size and accepted == stored
    assert accepted + dups == size * len(bodies)


async def test_fix_before_installation_is_rejected(client, conn, clean) -> None:
    since = T0 + timedelta(minutes=10)
    t = await register(conn, "NBX1234", "imei-late", since=since)
    r = await post(client, t, {"fixes": [fix(0), fix(40)]})
    assert r.json()["accepted"] == 1
    assert "not installed" in r.json()["rejected"][0]["error"]


async def test_late_batch_follows_the_installation_at_fix_time(client, conn, tracker) -> None:
    """The tracker moves to another vehicle; a buffered batch from before the move still counts for the first."""
    await fleet.add_vehicle(conn, "QRS2E45")
    other = await conn.fetchval("SELECT id FROM vehicles WHERE plate = 'QRS2E45'")
    move_at = T0 + timedelta(minutes=10)  # fix(20)
    await fleet.move_tracker(conn, tracker.unique_id, "QRS2E45", move_at)
    r = await post(client, tracker, {"fixes": [fix(i) for i in range(40)]})
    assert r.json()["accepted"] == 40
    assert await count(conn, tracker.vehicle_id) == 20
    assert await count(conn, other) == 20
    assert await conn.fetchval("SELECT max(ts) FROM fixes WHERE vehicle_id = $1", tracker.vehicle_id) < move_at


async def test_retroactive_move_reattributes_stored_fixes(client, conn, tracker) -> None:
    await post(client, tracker, {"fixes": [fix(i) for i in range(40)]})
    await fleet.add_vehicle(conn, "QRS2E45")
    result = await fleet.move_tracker(conn, tracker.unique_id, "QRS2E45", T0 + timedelta(minutes=10))
    assert result.fixes_reattributed == 20 and result.from_plate == "ABC1D23"
    assert await count(conn, tracker.vehicle_id) == 20
    # A resend of the whole buffer after the move adds nothing.
    r = await post(client, tracker, {"fixes": [fix(i) for i in range(40)]})
    assert r.json() == {"accepted": 0, "duplicates": 40, "rejected": []}


async def test_data_the_database_refuses_sinks_only_its_own_request(client, conn, tracker) -> None:
    other = await register(conn, "NBX1234", "imei-2")
    poison = fix(0, attributes={"nested": {"text": "a\u0000b"}})
    good = {"fixes": [fix(i) for i in range(1, 6)]}
    bad_r, good_r = await asyncio.gather(post(client, tracker, poison), post(client, other, good))
    assert good_r.status_code == 200 and good_r.json()["accepted"] == 5
    assert bad_r.status_code == 422
    assert await count(conn) == 5


async def test_database_down_answers_503_and_acknowledges_nothing(client, conn, tracker, test_db) -> None:
    admin = await asyncpg.connect(test_db.admin_dsn)
    try:
        await admin.execute(f'ALTER DATABASE "{test_db.name}" ALLOW_CONNECTIONS false')
        app_pids = [
            p
            for p in await admin.fetch(
                "SELECT pid FROM pg_stat_activity WHERE datname = $1 AND pid <> $2",
                test_db.name,
                await conn.fetchval("SELECT pg_backend_pid()"),
            )
        ]
        for p in app_pids:
            await admin.execute("SELECT pg_terminate_backend($1)", p["pid"])
        r = await post(client, tracker, {"fixes": [fix(i) for i in range(5)]})
        assert r.status_code == 503
        assert int(r.headers["retry-after"]) > 0
        assert "accepted" not in r.json()
    finally:
        await admin.execute(f'ALTER DATABASE "{test_db.name}" ALLOW_CONNECTIONS true')
        await admin.close()
    assert await count(conn) == 0
    r = await post(client, tracker, {"fixes": [fix(i) for i in range(5)]})
    assert r.status_code == 200 and r.json()["accepted"] == 5


async def test_openapi_documents_the_ingest_endpoints(client) -> None:
    schema = (await client.get("/openapi.json")).json()
    assert "post" in schema["paths"]["/api/v1/fixes"]
    assert {"get", "post"} <= schema["paths"]["/osmand"].keys()
    assert schema["components"]["securitySchemes"]["trackerToken"]["scheme"] == "bearer"


async def test_moves_during_ingest_leave_every_fix_with_its_installation(client, conn, tracker, pool) -> None:
    """Trackers moved while their fixes are being written: each stored fix ends up in the vehicle
    its tracker was installed in at the fix's time (the writer's lock, registry epoch and the
    move's re-attribution together), and nothing is lost or doubled."""
    await fleet.add_vehicle(conn, "QRS2E45")
    bodies = [{"fixes": [fix(i * 5 + j) for j in range(5)]} for i in range(80)]

    async def posts() -> list[httpx.Response]:
        out = []
        for chunk in range(0, len(bodies), 8):
            out += await asyncio.gather(*(post(client, tracker, b) for b in bodies[chunk : chunk + 8]))
        return out

    async def moves() -> None:
        async with pool.acquire() as c:
            for k, plate in enumerate(["QRS2E45", "ABC1D23", "QRS2E45", "ABC1D23", "QRS2E45"]):
                await asyncio.sleep(0.02)
                await fleet.move_tracker(c, tracker.unique_id, plate, T0 + timedelta(seconds=30 * (60 + 70 * k)))

    answers, _ = await asyncio.gather(posts(), moves())
    assert all(a.status_code == 200 for a in answers)
    assert sum(a.json()["accepted"] for a in answers) == 400 == await count(conn)
    wrong = await conn.fetchval("""
        SELECT count(*) FROM fixes f
        WHERE f.vehicle_id IS DISTINCT FROM (SELECT i.vehicle_id FROM tracker_installations i
                                             WHERE i.tracker_id = f.tracker_id AND i.during @> f.ts)""")
    assert wrong == 0


async def test_overload_sheds_with_503_and_stores_nothing(test_db, tracker, conn) -> None:
    app = create_app(test_db.settings(writer_max_pending_rows=10))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            r = await post(c, tracker, {"fixes": [fix(i) for i in range(11)]})
            assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
            assert "overloaded" in r.json()["detail"]
            assert (await post(c, tracker, {"fixes": [fix(i) for i in range(10)]})).json()["accepted"] == 10
    assert await count(conn) == 10


def batch_body(first: int, n: int) -> bytes:
    """n fixes one second apart going back from T0 (never in the future), as a JSON batch."""
    return orjson.dumps(
        {"fixes": [fix(i, ts=(T0 - timedelta(seconds=i)).isoformat()) for i in range(first, first + n)]}
    )


async def trickle(*chunks: bytes, gate: asyncio.Event | None = None, started: list[bool] | None = None):
    """A request body that arrives only once `gate` opens (a client still uploading)."""
    if started is not None:
        started.append(True)
    if gate is not None:
        await gate.wait()
    for chunk in chunks:
        yield chunk


async def holding(app, nbytes: int, requests: int = 1) -> None:
    """Wait until the app's in-flight budget holds exactly this much."""
    for _ in range(500):
        budget = getattr(app.state, "ingest_budget", None)
        if budget is not None and (budget.bytes, budget.requests) == (nbytes, requests):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"budget never held {nbytes} bytes in {requests} requests")


async def test_inflight_budget_sheds_before_reading_and_is_always_released(test_db, tracker, conn) -> None:
    """A request whose declared body does not fit the bytes in flight gets 503 + Retry-After at once,
    before its body is read, and stores nothing; every request gives its share back when it ends,
    whether it succeeded, failed on its body, was shed mid-upload, hit the writer's limit or died."""
    kib = 1024
    settings = test_db.settings(
        max_body_bytes=64 * kib, ingest_max_inflight_bytes=64 * kib, writer_max_pending_rows=790
    )
    app = create_app(settings)
    json_auth = {**tracker.auth, "Content-Type": "application/json"}
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            slow, gate = batch_body(0, 300), asyncio.Event()
            assert 20 * kib < len(slow) < 40 * kib
            held = asyncio.create_task(
                c.post(
                    "/api/v1/fixes",
                    content=trickle(slow, gate=gate),
                    headers={**json_auth, "Content-Length": str(len(slow))},
                )
            )
            await holding(app, len(slow))

            big, started = batch_body(300, 600), list[bool]()
            assert len(big) + len(slow) > 64 * kib
            r = await c.post(
                "/api/v1/fixes",
                content=trickle(big, started=started),
                headers={**json_auth, "Content-Length": str(len(big))},
            )
            assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
            assert "overloaded" in r.json()["detail"] and not started  # answered without reading the body
            # Undeclared (chunked) bodies are counted as they arrive: shed once they no longer fit.
            r = await c.post("/api/v1/fixes", content=trickle(big[: 20 * kib], big[20 * kib :]), headers=json_auth)
            assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
            # A small request still fits beside the held one: the budget is bytes, not a lock.
            r = await post(c, tracker, {"fixes": [fix(0, ts=(T0 + timedelta(seconds=1)).isoformat())]})
            assert r.status_code == 200 and r.json()["accepted"] == 1
            await holding(app, len(slow))
            assert await count(conn) == 1

            gate.set()
            assert (await held).json()["accepted"] == 300
            await holding(app, 0, 0)

            # Failures of every kind give their share back.
            r = await c.post("/api/v1/fixes", content=b"{" + b" " * 60 * kib, headers=json_auth)
            assert r.status_code == 400
            r = await c.post("/api/v1/fixes", content=trickle(b" " * 40 * kib, b" " * 40 * kib), headers=json_auth)
            assert r.status_code == 413
            r = await c.post("/api/v1/fixes", content=batch_body(1000, 791), headers=json_auth)
            assert r.status_code == 503 and "overloaded" in r.json()["detail"]  # the writer's pending limit
            r = await c.post("/api/v1/fixes", content=batch_body(0, 1), headers={"Authorization": "Bearer wrong"})
            assert r.status_code == 401

            class Gone(Exception):
                pass

            async def dies() -> AsyncIterator[bytes]:
                yield b'{"fixes": ['
                raise Gone("the upload broke off")  # raised inside the app, as it reads the body

            with pytest.raises(Gone):
                await c.post("/api/v1/fixes", content=dies(), headers={**json_auth, "Content-Length": str(30 * kib)})
            await holding(app, 0, 0)

            whole = batch_body(2000, 780)  # needs nearly the whole budget: nothing may be left held
            assert len(whole) > 60 * kib
            r = await c.post("/api/v1/fixes", content=whole, headers=json_auth)
            assert r.status_code == 200 and r.json()["accepted"] == 780
    assert await count(conn) == 1 + 300 + 780


async def test_inflight_request_cap_sheds_osmand_too(test_db, tracker, conn) -> None:
    app = create_app(test_db.settings(ingest_max_inflight_requests=1))
    position = {"id": tracker.unique_id, "lat": "-10.43", "lon": "-62.47", "timestamp": str(int(T0.timestamp()) + 1)}
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            slow, gate = batch_body(0, 5), asyncio.Event()
            headers = {**tracker.auth, "Content-Type": "application/json", "Content-Length": str(len(slow))}
            held = asyncio.create_task(c.post("/api/v1/fixes", content=trickle(slow, gate=gate), headers=headers))
            await holding(app, len(slow))
            r = await c.get("/osmand", params=position)
            assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
            assert await count(conn) == 0
            gate.set()
            assert (await held).json()["accepted"] == 5
            assert (await c.get("/osmand", params=position)).status_code == 200
    assert await count(conn) == 6


async def test_a_full_writer_queue_sheds_before_reading(test_db, tracker, conn) -> None:
    """While the writer's queue is full (here: the database stalls it), new requests get 503 +
    Retry-After before their bodies are read, and what was queued is stored once it can be."""
    app = create_app(test_db.settings(writer_max_pending_rows=10))
    async with app.router.lifespan_context(app):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as c:
            async with conn.transaction():
                await conn.execute("LOCK TABLE fixes IN EXCLUSIVE MODE")  # inserts wait
                queued = asyncio.create_task(post(c, tracker, {"fixes": [fix(i) for i in range(10)]}))
                for _ in range(500):
                    if app.state.ingest.waiting_rows == 10:
                        break
                    await asyncio.sleep(0.01)
                body, started = batch_body(100, 1), list[bool]()
                headers = {**tracker.auth, "Content-Type": "application/json", "Content-Length": str(len(body))}
                r = await c.post("/api/v1/fixes", content=trickle(body, started=started), headers=headers)
                assert r.status_code == 503 and int(r.headers["retry-after"]) > 0
                assert "10 fixes waiting" in r.json()["detail"] and not started
            assert (await queued).json()["accepted"] == 10
            assert (await c.post("/api/v1/fixes", content=body, headers=headers)).json()["accepted"] == 1
    assert await count(conn) == 11
