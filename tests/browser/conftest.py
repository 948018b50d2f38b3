"""The web system in a real headless browser: Debian's chromium driven by Playwright, against the real server.

One site per test run: a database of its own, `telemetria serve` as a process, users of every
role, a recorded day of one vehicle (speeding, a detour, stops) and a simulator posting live
fixes every second for three more. Map tiles point at an unreachable host and every request
that is not for our server is aborted, so every test also checks that the pages work without
tiles (and without the internet).
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
from playwright.async_api import Browser, Page, async_playwright

from telemetria.db import init_connection
from telemetria.settings import Settings
from telemetria.web import nav
from tests.conftest import ScratchDb, scratch_database
from tests.db.conftest import PASSWORD, People, make_people
from tests.db.test_reports_accuracy import DAY, _register, _run
from tests.e2e.conftest import CLI, ROOT, serve

CHROMIUM = "/usr/bin/chromium"
ARTIFACTS = ROOT / "test-artifacts"
TILES = "http://tiles.invalid/{z}/{x}/{y}.png"  # never reachable: the pages must work without tiles
# As the environment's probe found: without these flags Chromium keeps trying hosts this closed network refuses.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--lang=pt-BR"]  # fmt: skip
LIVE_FLEET = "WEB"
LIVE_PLATES = ("WEB1A00", "WEB1A01", "WEB1A02")  # the simulator's plates: two of contractor 1, one of contractor 2


@dataclass
class Site:
    url: str
    dsn: str
    people: People
    history_vehicle_id: int
    history_plate: str
    history_day: str
    live_ids: dict[str, int]

    def token(self, role: str) -> dict[str, str]:
        return self.people.auth(role)


@pytest.fixture(scope="session")
async def web_db(base_settings: Settings) -> AsyncIterator[ScratchDb]:
    """A database of the browser tests' own, so other tests' clean-ups never pull data from under a page."""
    async with scratch_database(base_settings, "telemetria_web") as db:
        yield db


@pytest.fixture(scope="session")
async def site(web_db: ScratchDb) -> AsyncIterator[Site]:
    data = Path(tempfile.mkdtemp(prefix="telemetria-web-"))
    env = {
        **os.environ,
        "TELEMETRIA_DATABASE_URL": web_db.dsn,
        "TELEMETRIA_DATA_DIR": str(data),
        "TELEMETRIA_MAP_LAYERS": f'[{{"name": "Mapa de ruas", "tiles": ["{TILES}"], "attribution": "teste"}}]',
        "TELEMETRIA_LIVE_POLL_S": "1",
        "TELEMETRIA_ROLLUP_INTERVAL_S": "0",
        "TELEMETRIA_DETECTOR_INTERVAL_S": "0",  # the pages here need no detection; its process would only load CPU
        "TELEMETRIA_LOGIN_ATTEMPTS_PER_MIN": "1000",
        "TELEMETRIA_MEASUREMENT_CLOSE_GRACE_DAYS": "60",  # closing the measured month (Nov 2026) asks to confirm
    }
    conn = await asyncpg.connect(web_db.dsn)
    await init_connection(conn)
    try:
        people = await make_people(conn)
        run = _run(3)
        hist = await _register(conn, people, run, "HIS1A11", "web-history")
    finally:
        await conn.close()
    server = serve(env)
    url = next(server)
    sim = None
    try:
        async with httpx.AsyncClient(base_url=url, timeout=30) as client:
            for upload in run.uploads:
                r = await client.post("/api/v1/fixes", content=_body(upload.fixes), headers=hist.auth)
                assert r.status_code == 200, r.text
        sim = subprocess.Popen(  # noqa: ASYNC220 (started once per run; it runs beside the tests)
            [*CLI, "simulate", "--url", url, "--vehicles", "3", "--interval", "1", "--fleet", LIVE_FLEET,
             "--signal-loss-per-hour", "0"],  # a tracker in a signal-loss window looks late (CI, 2 Dec)
            env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
        )  # fmt: skip
        live_ids = await _live_fleet(web_db.dsn, people, sim)
        yield Site(url, web_db.dsn, people, hist.vehicle_id, "HIS1A11", DAY, live_ids)
    finally:
        if sim is not None:
            os.killpg(sim.pid, signal.SIGTERM)
            sim.wait(timeout=15)
        server.close()
        shutil.rmtree(data, ignore_errors=True)


def _body(fixes: Any) -> bytes:
    from telemetria.sim.wire import body

    return body(fixes)


async def _live_fleet(dsn: str, people: People, sim: subprocess.Popen[str]) -> dict[str, int]:
    """Wait until the simulator registered its vehicles and posted; give them their contractors."""
    conn = await asyncpg.connect(dsn)
    try:
        deadline = time.monotonic() + 60
        while True:
            rows = await conn.fetch(
                "SELECT v.id, v.plate FROM vehicles v WHERE v.plate = ANY ($1)"
                " AND EXISTS (SELECT 1 FROM fixes f WHERE f.vehicle_id = v.id)",
                list(LIVE_PLATES),
            )
            if len(rows) == len(LIVE_PLATES):
                break
            if sim.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the simulator did not start posting: {sim.stderr.read() if sim.stderr else ''}")
            await asyncio.sleep(0.2)
        ids = {r["plate"]: r["id"] for r in rows}
        owners = (people.contractor_id, people.contractor_id, people.other_contractor_id)
        for plate, owner in zip(LIVE_PLATES, owners, strict=True):
            await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", owner, ids[plate])
        return ids
    finally:
        await conn.close()


@pytest.fixture(scope="session")
async def browser() -> AsyncIterator[Browser]:
    if not shutil.which(CHROMIUM):
        raise AssertionError(f"{CHROMIUM} is missing: `./dev test` installs Debian's chromium package")
    async with async_playwright() as pw:
        b = await pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        await b.close()


@dataclass
class Tab:
    """A browser page of one test, and what went wrong in it (script errors fail the test)."""

    page: Page
    site: Site
    errors: list[str]

    async def open(self, path: str) -> None:
        await self.page.goto(self.site.url + path)

    async def login(self, username: str, password: str = PASSWORD, then: str | None = "/mapa") -> None:
        """Log in, wait for the role's home page (nav.HOMES: the day panel for admin and monitor), then open `then`
        when it is another page (None: stay home)."""
        await self.open("/entrar")
        await self.page.get_by_label("Usuário").fill(username)
        await self.page.get_by_label("Senha").fill(password)
        await self.page.get_by_role("button", name="Entrar").click()
        home = nav.HOMES.get(username, "/mapa")  # the test users are named after their roles
        await self.page.wait_for_url(re.compile(re.escape(home) + "$"))
        if then is not None and then != home:
            await self.open(then)

    async def shot(self, name: str) -> Path:
        """A full-page screenshot under test-artifacts/, to look at."""
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        await self.page.screenshot(path=str(path), full_page=True)
        return path


def _ours(site: Site) -> re.Pattern[str]:
    return re.compile("^" + re.escape(site.url) + "/")


@pytest.fixture
async def tab(browser: Browser, site: Site) -> AsyncIterator[Tab]:
    ctx = await browser.new_context(
        locale="pt-BR", timezone_id="America/Porto_Velho", accept_downloads=True,
        viewport={"width": 1280, "height": 860},
    )  # fmt: skip
    ours = _ours(site)

    async def outside(route: Any) -> None:
        if ours.match(route.request.url):
            await route.continue_()
        else:  # tiles and anything else off-site: unreachable, as on a closed network
            await route.abort("internetdisconnected")

    await ctx.route("**/*", outside)
    page = await ctx.new_page()
    page.set_default_timeout(15_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield Tab(page, site, errors)
    await ctx.close()
    assert not errors, f"script errors on the page: {errors}"


@pytest.fixture(scope="session", autouse=True)
def _artifacts() -> Iterator[None]:
    ARTIFACTS.mkdir(exist_ok=True)
    yield
