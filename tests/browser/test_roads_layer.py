"""The imported road network as the map's offline base layer (issue 20), in a real browser: the layer menu offers
it, its roads are drawn from the service itself while every tile server is unreachable, and named close up."""

from __future__ import annotations

from datetime import date

import asyncpg
from playwright.async_api import expect

from telemetria.roads import store
from telemetria.sim.roadnet import grid_ways
from telemetria.sim.roads import make_grid
from tests.browser.conftest import Tab

LAYER = "Estradas importadas (sem internet)"


async def test_the_imported_roads_are_a_base_layer_with_their_names(tab: Tab) -> None:
    conn = await asyncpg.connect(tab.site.dsn)
    # In force only from 2099: drawn on the maps (the network in use), while no report of the shared site changes.
    network = await store.import_ways(
        conn, iter(grid_ways(make_grid(1))), source="grade.osm.pbf", sha256="ab" * 32, by="test",
        effective_from=date(2099, 1, 1),
    )  # fmt: skip
    try:
        await tab.login("monitor")
        page = tab.page
        await page.locator(".leaflet-control-layers").hover()
        await page.get_by_label(LAYER).check()
        await expect(page.locator("path.road-line").first).to_be_attached()
        # Close enough for the names (zoom 14 and on). The map first fits every vehicle of the shared site, and how
        # far out that is depends on the vehicles other browser tests registered before: zoom in until names show.
        for _ in range(8):
            await page.get_by_role("button", name="Zoom in").click()
            await page.wait_for_timeout(400)
            if await page.locator(".leaflet-tooltip.road-name").count():
                break
        await expect(page.locator(".leaflet-tooltip.road-name").first).to_be_visible()
        names = await page.locator(".leaflet-tooltip.road-name").all_inner_texts()
        assert any(n.startswith(("Linha ", "Travessão ", "Rua ", "Avenida ", "BR-", "RO-")) for n in names), names
        await tab.shot("roads-base-layer")
        await page.reload()  # the choice is remembered
        await expect(page.locator("path.road-line").first).to_be_attached()
    finally:
        await conn.execute("DELETE FROM road_networks WHERE id = $1", network.id)
        await conn.close()
