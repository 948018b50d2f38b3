"""A fiscalização site of the browser tests' own: its own database and `telemetria serve` process (the shared
site's simulator and its users' edits must not change what these tests count), with the school year, a demo
contract and a route assigned today to each of its vehicles, fixes posted over HTTP as a tracker does, and
occurrence rows inserted directly when a test builds a page on known ones.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import orjson
from playwright.async_api import Browser

from telemetria.contracts import store as contract_store
from telemetria.contracts.calendar import MarkedDay, SchoolYear, holidays_by_day, why_not
from telemetria.db import init_connection
from telemetria.fix import Fix
from telemetria.localtime import LOCAL_TZ
from telemetria.settings import Settings
from telemetria.sim.demo import ensure_demo_registry
from telemetria.sim.vehicle import vehicle_route
from telemetria.sim.wire import body
from tests.browser.conftest import TILES, Site, Tab
from tests.conftest import scratch_database
from tests.db.conftest import People, make_people, register
from tests.e2e.conftest import serve

ROOT = Path(__file__).resolve().parents[2]
# The screenshots docs/fiscalizacao.md shows, saved by these tests: into docs/img/ when asked
# (DOCS_SCREENSHOTS=1 ./dev test, then commit them), else beside the other artifacts, so an ordinary
# run leaves the committed images alone.
DOCS_IMG = ROOT / "docs" / "img" if os.environ.get("DOCS_SCREENSHOTS") else ROOT / "test-artifacts" / "docs"
SEED = 1


@dataclass
class Vehicle:
    vehicle_id: int
    plate: str
    auth: dict[str, str]  # the tracker's token header
    route: Any  # the simulator's route the demo registry assigned to it (line with lat/lon arrays)


@dataclass
class FiscSite:
    url: str
    dsn: str
    people: People
    vehicles: dict[str, Vehicle] = field(default_factory=dict)

    async def post(self, plate: str, fixes: Sequence[Fix]) -> None:
        """Post fixes as the vehicle's tracker does (the real ingest path)."""
        async with httpx.AsyncClient(base_url=self.url, timeout=30) as client:
            r = await client.post("/api/v1/fixes", content=body(list(fixes)), headers=self.vehicles[plate].auth)
            assert r.status_code == 200, r.text

    async def api(self, role: str, method: str, path: str, **kw: Any) -> httpx.Response:
        async with httpx.AsyncClient(base_url=self.url, timeout=60) as client:
            return await client.request(method, path, headers=self.people.auth(role), **kw)

    async def sql(self, query: str, *args: Any) -> None:
        """Run one statement on the site's database (a test moving a deadline into the past)."""
        conn = await asyncpg.connect(self.dsn)
        try:
            await conn.execute(query, *args)
        finally:
            await conn.close()

    async def insert_occurrence(
        self, plate: str, kind: str, start: datetime, *, facts: dict[str, Any] | None = None,
        lat: float | None = None, lon: float | None = None, place: str | None = None, status: str = "detected",
    ) -> int:  # fmt: skip
        """An occurrence row as the detector stores one (classification copied from occurrence_kinds), with its
        `detected` history row; its id."""
        v = self.vehicles[plate]
        conn = await asyncpg.connect(self.dsn)
        try:
            await init_connection(conn)
            oid: int = await conn.fetchval(
                "INSERT INTO occurrences (kind, vehicle_id, contractor_id, day, start_ts, end_ts, lat, lon, place,"
                " facts, duty, article, severity, status, completed_ts, received_at)"
                " SELECT $1, v.id, v.contractor_id, ($3 AT TIME ZONE 'America/Porto_Velho')::date, $3, $3 + interval"
                " '2 minutes', $4, $5, $6, $7, k.duty, k.article, k.severity, $8, $3, now()"
                " FROM vehicles v, occurrence_kinds k WHERE v.id = $2 AND k.kind = $1 RETURNING id",
                kind, v.vehicle_id, start, lat, lon, place, facts or {}, status,
            )  # fmt: skip
            await conn.execute(
                "INSERT INTO occurrence_history (occurrence_id, actor, action, to_status) VALUES ($1, 'detector',"
                " 'detected', 'detected')",
                oid,
            )
            return oid
        finally:
            await conn.close()


def drive(route: Any, start: datetime, n: int, step_s: float, speed_kmh: float, *, at_m: float = 0.0) -> list[Fix]:
    """`n` fixes every `step_s` seconds from `start`, along the route's line from `at_m` metres, at `speed_kmh`."""
    lat, lon = route.line.lat, route.line.lon
    # The line's cumulative length in metres (equirectangular: short steps, good to well under a metre).
    cum = [0.0]
    for i in range(1, len(lat)):
        dy = (lat[i] - lat[i - 1]) * 111_320.0
        dx = (lon[i] - lon[i - 1]) * 111_320.0 * math.cos(math.radians(lat[i]))
        cum.append(cum[-1] + math.hypot(dx, dy))
    out = []
    for k in range(n):
        s = min(at_m + k * step_s * speed_kmh / 3.6, cum[-1])
        j = next((i for i in range(1, len(cum)) if cum[i] >= s), len(cum) - 1)
        f = 0.0 if cum[j] == cum[j - 1] else (s - cum[j - 1]) / (cum[j] - cum[j - 1])
        out.append(Fix(start + timedelta(seconds=k * step_s), float(lat[j - 1] + f * (lat[j] - lat[j - 1])),
                       float(lon[j - 1] + f * (lon[j] - lon[j - 1])), speed_kmh=speed_kmh, ignition=True))  # fmt: skip
    return out


async def _registry(conn: asyncpg.Connection, people: People, plates: Sequence[str]) -> dict[str, Vehicle]:
    """The vehicles (contractor 1's, with trackers), today a school day, the demo contract and routes assigned."""
    today = datetime.now(UTC).astimezone(LOCAL_TZ).date()
    extra = () if why_not(today, holidays_by_day(today.year)) is None else (MarkedDay(today, "teste"),)
    year = SchoolYear(today.year, date(today.year, 1, 2), date(today.year, 12, 31), (), extra)
    await contract_store.put_school_year(conn, year, "tests")
    out = {}
    for i, plate in enumerate(plates):
        t = await register(conn, plate, f"fisc-{i + 1:04d}", datetime.now(UTC) - timedelta(days=2))
        await conn.execute("UPDATE vehicles SET contractor_id = $1 WHERE id = $2", people.contractor_id, t.vehicle_id)
        out[plate] = Vehicle(t.vehicle_id, plate, t.auth, vehicle_route(SEED, i))
    await ensure_demo_registry(conn, SEED, list(plates))
    return out


@asynccontextmanager
async def fisc_site(base_settings: Settings, name: str, plates: Sequence[str], **env: str) -> AsyncIterator[FiscSite]:
    """The site, with `env` added to the server's settings (e.g. the detector's interval)."""
    async with scratch_database(base_settings, name) as db:
        data = Path(tempfile.mkdtemp(prefix="telemetria-fisc-"))
        conn = await asyncpg.connect(db.dsn)
        try:
            await init_connection(conn)
            people = await make_people(conn)
            vehicles = await _registry(conn, people, plates)
        finally:
            await conn.close()
        layers = [{"name": "Mapa de ruas", "tiles": [TILES], "attribution": "teste"}]
        server_env = {
            **os.environ, "TELEMETRIA_DATABASE_URL": db.dsn, "TELEMETRIA_DATA_DIR": str(data),
            "TELEMETRIA_MAP_LAYERS": orjson.dumps(layers).decode(),
            "TELEMETRIA_ROLLUP_INTERVAL_S": "0", "TELEMETRIA_LOGIN_ATTEMPTS_PER_MIN": "1000", **env,
        }  # fmt: skip
        server = serve(server_env)
        url = next(server)
        try:
            yield FiscSite(url, db.dsn, people, vehicles)
        finally:
            server.close()
            shutil.rmtree(data, ignore_errors=True)


@asynccontextmanager
async def fisc_tab(browser: Browser, site: FiscSite, *, downloads: bool = False) -> AsyncIterator[Tab]:
    """A desktop tab in the municipality's locale and zone on `site`; fails the test on any script error."""
    ctx = await browser.new_context(locale="pt-BR", timezone_id="America/Porto_Velho", accept_downloads=downloads,
                                    viewport={"width": 1280, "height": 900})  # fmt: skip
    page = await ctx.new_page()
    page.set_default_timeout(30_000)
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    yield Tab(page, Site(site.url, site.dsn, site.people, 0, "", "", {}), errors)
    await ctx.close()
    assert not errors, f"script errors on the page: {errors}"
