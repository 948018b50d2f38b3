"""Expensive work through one bounded job queue (issue 33, item 3): a user's second verification or PDF/XLSX
export while one is running is 429 "tente novamente em N s" with Retry-After, and an upload is read within the
service's bounds (rows, vehicle-days, sheets), so a small file cannot cost minutes."""

from __future__ import annotations

import io
import pickle
import tempfile
from typing import Any

import asyncpg
import httpx
import openpyxl
import pytest

from telemetria.jobs import Jobs, user_key
from telemetria.seals import verify
from tests.db.conftest import People
from tests.db.test_measurement_api import FIRST, LAST
from tests.db.test_measurement_api import _setup as measurement_setup
from tests.db.test_occurrences_api import api, auth, occurrence, to_notified, world  # noqa: F401  (fixtures)
from tests.db.test_seal_tamper import DAY, _export, _fixes, _post, _register, _seal
from tests.db.world import World


def _jobs(client: httpx.AsyncClient) -> Jobs:
    """The app's queue, with two turns: one a test holds for a user, one for the others."""
    app = client.app  # type: ignore[attr-defined]
    app.state.jobs = Jobs(workers=2, queue=4, per_user=1)
    return app.state.jobs  # type: ignore[no-any-return]


@pytest.fixture
async def exported(client: httpx.AsyncClient, pool: asyncpg.Pool, conn: asyncpg.Connection, people: People) -> Any:
    t = await _register(conn, people.contractor_id, "JOB1A23", "jobs-1")
    await _post(client, t, _fixes(10))
    await _seal(pool)
    return t, await _export(client, people, t.vehicle_id)


async def test_a_users_second_heavy_job_is_told_when_to_try_again(
    client: httpx.AsyncClient, people: People, exported: Any
) -> None:
    t, data = exported
    jobs = _jobs(client)
    held = await jobs.enter(user_key(people.ids["contractor"]))
    try:
        mine = people.auth("contractor")
        r = await client.post("/api/v1/seals/verify", files={"file": ("t.csv", data)}, headers=mine)
        assert r.status_code == 429, r.text
        assert "tente novamente em" in r.json()["detail"] and int(r.headers["Retry-After"]) >= 1
        # Another user is not held back by it.
        ok = await client.post("/api/v1/seals/verify", files={"file": ("t.csv", data)}, headers=people.auth("auditor"))
        assert ok.status_code == 200, ok.text
    finally:
        jobs.leave(held)
    r = await client.post("/api/v1/seals/verify", files={"file": ("t.csv", data)}, headers=people.auth("contractor"))
    assert r.status_code == 200 and r.json()["valid"] is True
    # A PDF or a workbook is a turn too.
    params = {"vehicle_id": str(t.vehicle_id), "from": DAY.isoformat(), "to": DAY.isoformat()}
    h = people.auth("auditor")
    held = await jobs.enter(user_key(people.ids["auditor"]))
    try:
        for fmt in ("pdf", "xlsx"):
            r = await client.get("/api/v1/reports/track", params={**params, "format": fmt}, headers=h)
            assert r.status_code == 429 and "tente novamente em" in r.json()["detail"], fmt
    finally:
        jobs.leave(held)
    for fmt in ("pdf", "xlsx"):
        r = await client.get("/api/v1/reports/track", params={**params, "format": fmt}, headers=people.auth("auditor"))
        assert r.status_code == 200, fmt
    assert jobs._running == 0 and not jobs._by_user  # every turn given back once its document was sent


async def test_an_upload_is_read_within_the_services_bounds(
    client: httpx.AsyncClient, people: People, exported: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, data = exported
    h = people.auth("auditor")
    monkeypatch.setattr(verify, "WEB_MAX_ROWS", 8)  # the file has more records: refused, naming the bound
    r = await client.post("/api/v1/seals/verify", files={"file": ("t.csv", data)}, headers=h)
    assert r.status_code == 400 and r.json()["field"] == "file" and "more than 8 rows" in r.json()["detail"]
    assert len(verify.parse(data).groups) == 1  # the CLI's bounds read it whole
    # A workbook of many (empty) sheets is refused before it is opened.
    book = openpyxl.Workbook()
    for i in range(verify.MAX_SHEETS + 1):
        book.create_sheet(f"s{i}")
    buf = io.BytesIO()
    book.save(buf)
    r = await client.post("/api/v1/seals/verify", files={"file": ("t.xlsx", buf.getvalue())}, headers=h)
    assert r.status_code == 400 and "sheets" in r.json()["detail"], r.text


async def test_the_boletim_files_wait_their_turn_like_the_other_exports(
    client: httpx.AsyncClient, conn: asyncpg.Connection, people: People
) -> None:
    """Issue 33's leftover: the boletim PDF and XLSX take a turn of the same queue: a user's second one while the
    first runs is 429 "tente novamente em N s"; another user goes through; the turn is given back once sent."""
    w = await measurement_setup(client, conn, people)
    jobs = _jobs(client)
    params = {"contract_id": str(w["k"]), "from": FIRST, "to": LAST}
    held = await jobs.enter(user_key(people.ids["auditor"]))
    try:
        for fmt in ("pdf", "xlsx"):
            r = await client.get("/api/v1/reports/measurement", params={**params, "format": fmt},
                                 headers=people.auth("auditor"))  # fmt: skip
            assert r.status_code == 429 and "tente novamente em" in r.json()["detail"], fmt
            assert int(r.headers["Retry-After"]) >= 1
        r = await client.get("/api/v1/reports/measurement", params={**params, "format": "pdf"},
                             headers=people.auth("monitor"))  # fmt: skip
        assert r.status_code == 200, r.text
    finally:
        jobs.leave(held)
    for fmt in ("pdf", "xlsx"):
        r = await client.get("/api/v1/reports/measurement", params={**params, "format": fmt},
                             headers=people.auth("auditor"))  # fmt: skip
        assert r.status_code == 200, fmt
    assert jobs._running == 0 and not jobs._by_user


async def test_the_termo_notificacao_and_occurrence_files_wait_their_turn(
    api: httpx.AsyncClient,  # noqa: F811
    conn: asyncpg.Connection,
    world: World,  # noqa: F811
) -> None:
    oid = await occurrence(conn, world)
    await to_notified(api, world, oid)
    app = api._transport.app  # type: ignore[attr-defined]
    app.state.jobs = jobs = Jobs(workers=2, queue=4, per_user=1)
    monitor = world.people.ids["monitor"]
    held = await jobs.enter(user_key(monitor))
    try:
        for path in ("termo.pdf", "notificacao.pdf"):
            r = await api.get(f"/api/v1/occurrences/{oid}/{path}", headers=auth(world, "monitor"))
            assert r.status_code == 429 and "tente novamente em" in r.json()["detail"], path
        for fmt in ("pdf", "xlsx"):
            r = await api.get("/api/v1/occurrences", params={"from": "2026-03-02", "format": fmt},
                              headers=auth(world, "monitor"))  # fmt: skip
            assert r.status_code == 429, fmt
    finally:
        jobs.leave(held)
    r = await api.get(f"/api/v1/occurrences/{oid}/termo.pdf", headers=auth(world, "monitor"))
    assert r.status_code == 200 and r.content.startswith(b"%PDF")
    r = await api.get("/api/v1/occurrences", params={"from": "2026-03-02", "format": "pdf"},
                      headers=auth(world, "monitor"))  # fmt: skip
    assert r.status_code == 200
    assert jobs._running == 0 and not jobs._by_user


async def test_a_files_rows_are_read_and_judged_in_the_worker_not_on_the_event_loop(
    client: httpx.AsyncClient, people: People, exported: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading 100,000 rows and comparing them with the seals' lines held a tracker's post for half a second
    (bench.contention --only verify, p99 536 ms): both run in the queue's worker process, which does not see this
    process's functions replaced. Fails if either runs in the service's process (there, the answer is a 500)."""
    _, data = exported

    def not_here(*_: Any) -> Any:
        raise AssertionError("a file's rows were handled in the service's process")

    monkeypatch.setattr(verify, "judge", not_here)
    monkeypatch.setattr(verify, "parse", not_here)
    r = await client.post("/api/v1/seals/verify", files={"file": ("t.csv", data)}, headers=people.auth("auditor"))
    assert r.status_code == 200 and r.json()["valid"] is True, r.text
    assert [d["rows"] for d in r.json()["days"]] == [10]


async def test_an_uploads_bytes_go_to_the_worker_through_a_private_folder_not_the_pools_pipe(
    client: httpx.AsyncClient, people: People, exported: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """A 12 MB body pickled to the worker, and the read file's pickle sent back and out again, were megabytes
    copied by the service's threads holding the GIL (pauses a tracker's post waited behind: bench.contention).
    What crosses the pool's pipe must be small, both ways; and the folder is gone once answered. Fails when the
    body or the read file is handed to the pool as bytes."""
    _, data = exported
    crossed: list[int] = []
    jobs = Jobs(workers=2, queue=4, per_user=1)
    client.app.state.jobs = jobs  # type: ignore[attr-defined]
    in_process = jobs.in_process

    async def measured(fn: Any, *args: Any) -> Any:
        result = await in_process(fn, *args)
        crossed.append(len(pickle.dumps((args, result), pickle.HIGHEST_PROTOCOL)))
        # Neither the body nor the read file, whatever their size (the file here is small: 10 rows).
        assert not any(isinstance(x, bytes | bytearray | verify.Parsed) for x in (*args, result)), fn
        return result

    monkeypatch.setattr(jobs, "in_process", measured)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    padding = {"other": "x" * 200_000}  # a field the verification skips: the body is 200 kB larger than the file
    r = await client.post(
        "/api/v1/seals/verify", files={"file": ("t.csv", data)}, data=padding, headers=people.auth("auditor")
    )
    assert r.status_code == 200 and r.json()["valid"] is True, r.text
    assert len(crossed) == 2 and max(crossed) < 20_000, crossed
    assert list(tmp_path.iterdir()) == []


async def test_a_refused_upload_leaves_no_folder_behind(
    client: httpx.AsyncClient, people: People, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    """The folder is removed whatever the answer: here the worker refuses the file (400)."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    files = {"file": ("t.csv", b"not;an;export\r\n1;2;3\r\n")}
    r = await client.post("/api/v1/seals/verify", files=files, headers=people.auth("auditor"))
    assert r.status_code == 400 and r.json()["field"] == "file", r.text
    assert list(tmp_path.iterdir()) == []
