"""The charts in a real browser: drawn from the same API JSON as the tables (read back through their axes),
with the limit and 100 % lines, the speeding episodes marked, a cursor that follows playback, and on a phone."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.async_api import Locator, expect

from tests.browser.conftest import ARTIFACTS, LIVE_PLATES, Tab
from tests.browser.test_phone import PHONE

WEEK = ("2026-11-17", "2026-11-23")  # the recorded day (23/11) and the six before: its route is assigned from 22/11

# Read a chart's picture: its y ticks (value → y), and each bar's top and bottom, each path's drawing.
READ = """fig => {
  const num = (e, a) => Number(e.getAttribute(a));
  return {
    ticks: [...fig.querySelectorAll('.axis.y .tick')]
      .map(g => [Number(g.dataset.value), num(g.querySelector('line'), 'y1')]),
    bars: [...fig.querySelectorAll('rect.bar')].map(r => ({ cls: r.getAttribute('class'), top: num(r, 'y'),
      bottom: num(r, 'y') + num(r, 'height'), category: Number(r.dataset.category) })),
    refs: [...fig.querySelectorAll('g.ref line')].map(l => [num(l, 'y1'), num(l, 'y2')]),
    paths: Object.fromEntries([...fig.querySelectorAll('path.line')].map(p => [p.dataset.series, p.getAttribute('d')])),
    ranges: fig.querySelectorAll('rect.range').length,
    width: fig.querySelector('svg').getBoundingClientRect().width,
    labelledby: fig.querySelector('svg').getAttribute('aria-labelledby'),
    describedby: fig.querySelector('svg').getAttribute('aria-describedby'),
  };
}"""


class Axis:
    """The y axis as drawn: value ↔ y, fitted on its ticks (they must lie on one straight scale)."""

    def __init__(self, ticks: list[list[float]]) -> None:
        assert len(ticks) >= 2, ticks
        (v0, y0), (v1, y1) = ticks[0], ticks[-1]
        self.per = (y1 - y0) / (v1 - v0)
        self.v0, self.y0 = v0, y0
        for v, y in ticks:
            assert self.y(v) == pytest.approx(y, abs=0.2), "ticks off their scale"

    def y(self, value: float) -> float:
        return self.y0 + (value - self.v0) * self.per

    def value(self, y: float) -> float:
        return self.v0 + (y - self.y0) / self.per

    @property
    def px(self) -> float:
        """One pixel in the axis' unit: the tolerance of reading a value off the picture."""
        return abs(1 / self.per)


async def _read(fig: Locator) -> dict[str, Any]:
    await expect(fig).to_be_visible()
    return dict(await fig.evaluate(READ))


async def _api(tab: Tab, kind: str, **params: Any) -> dict[str, Any]:
    async with httpx.AsyncClient(base_url=tab.site.url, timeout=60) as client:
        r = await client.get(f"/api/v1/reports/{kind}", params=params, headers=tab.site.token("auditor"))
    assert r.status_code == 200, r.text
    return dict(r.json())


def _bars(data: dict[str, Any], categories: list[str], cls: str) -> tuple[dict[str, float], float]:
    """The values of the bars of one series as drawn, read on the y axis, by category; and the reading's tolerance."""
    axis = Axis(data["ticks"])
    bars = [b for b in data["bars"] if cls in b["cls"].split()]
    for b in bars:
        assert b["bottom"] == pytest.approx(axis.y(0), abs=0.2)  # every bar stands on 0
    return {categories[b["category"]]: axis.value(b["top"]) for b in bars}, axis.px


def _points(d: str) -> list[tuple[str, list[float]]]:
    """The commands of an SVG path: [("M", [x, y]), ("V", [y]), ...]."""
    return [(c, [float(n) for n in args.split()]) for c, args in re.findall(r"([MLHV])([-\d. ]+)", d)]


async def _accessible(tab: Tab, data: dict[str, Any], table: str) -> None:
    """The chart is named by its caption and described in words and by the table with its numbers."""
    page = tab.page
    caption = page.locator(f"#{data['labelledby']}")
    await expect(caption).not_to_be_empty()
    ids = data["describedby"].split()
    assert table in ids
    await expect(page.locator(f"#{ids[0]}")).to_contain_text("tabela")


async def test_the_history_speed_chart_follows_playback_and_moves_it(tab: Tab) -> None:
    site, page = tab.site, tab.page
    day = site.history_day
    params = {"vehicle_id": site.history_vehicle_id, "from": day, "to": day}
    track = [p for p in (await _api(tab, "track", **params))["positions"] if p["used"]]
    episodes = (await _api(tab, "speeding", **params))["episodes"]
    assert episodes and track
    await tab.login("auditor")
    await tab.open(f"/historico?vehicle_id={site.history_vehicle_id}&from={day}T00:00&to={day}T23:59")
    await expect(page.locator("#h-status")).to_have_text(re.compile(r"posições no período"), timeout=30_000)
    fig = page.locator("figure.speed-chart")
    data = await _read(fig)
    await _accessible(tab, data, "h-events")
    axis = Axis(data["ticks"])

    # One point per position the map plays back, at its speed.
    speed = _points(data["paths"]["velocidade"])
    assert len(speed) == len([p for p in track if p["speed_kmh"] is not None]) == len(track)
    drawn = [axis.value(args[1]) for _, args in speed]
    assert drawn == pytest.approx([p["speed_kmh"] for p in track], abs=axis.px)
    # The limit line at the limits the API gives, and every speeding episode marked.
    limit = _points(data["paths"]["limite"])
    levels = {round(axis.value(args[-1])) for c, args in limit if c in "MV"}
    assert levels == {round(p["limit_kmh"]) for p in track}
    assert data["ranges"] == len(episodes)
    await fig.screenshot(path=str(ARTIFACTS / "chart-history-speed.png"))

    # The cursor follows the playback ...
    cursor = fig.locator("line.cursor")
    await expect(cursor).to_have_attribute("data-index", "0")
    start = await cursor.get_attribute("x1")
    await page.get_by_label("Velocidade da reprodução").select_option("300")
    await page.get_by_role("button", name="▶ Reproduzir").click()
    await expect(cursor).not_to_have_attribute("data-index", "0")
    await page.get_by_role("button", name="❚❚ Pausar").click()
    assert await cursor.get_attribute("x1") != start
    slider = page.get_by_label("Momento da trajetória")
    assert await cursor.get_attribute("data-index") == await slider.input_value()
    # ... and a click on the chart takes the playback, the map and the cursor there.
    box = await fig.locator("rect.hit").bounding_box()  # the plot area
    assert box is not None
    await page.mouse.click(box["x"] + box["width"] * 0.75, box["y"] + box["height"] / 2)
    chosen = int(await slider.input_value())
    assert abs(chosen - 0.75 * (len(track) - 1)) < len(track) * 0.1  # the fixes come about every 30 s
    await expect(cursor).to_have_attribute("data-index", str(chosen))
    when = track[chosen]["time"]
    await expect(page.locator("#h-now")).to_contain_text(f"{when[8:10]}/{when[5:7]}/{when[:4]} {when[11:19]}")
    await tab.shot("chart-history")


async def test_the_km_chart_draws_km_per_day_beside_the_planned_route_km(tab: Tab) -> None:
    site, page = tab.site, tab.page
    ids = [site.history_vehicle_id, site.live_ids[LIVE_PLATES[0]]]  # the second has no position in that week
    doc = await _api(tab, "km", vehicle_id=ids, **{"from": WEEK[0], "to": WEEK[1]}, by="day")
    days = sorted({r["date"] for r in doc["vehicles"]})
    await tab.login("auditor")
    await tab.open(f"/relatorios/km?vehicle_id={ids[0]}&vehicle_id={ids[1]}&from={WEEK[0]}&to={WEEK[1]}&by=day")
    fig = page.locator("figure.km-chart")
    data = await _read(fig)
    await _accessible(tab, data, "report-table")

    # The group (both vehicles): a bar per day with positions, and a planned bar per day with a route.
    km = {d: sum(r["km"] for r in doc["vehicles"] if r["date"] == d and r["method"] != "no_fixes") for d in days}
    with_fixes = {r["date"] for r in doc["vehicles"] if r["method"] != "no_fixes"}
    assert with_fixes == {WEEK[1]}
    bars, px = _bars(data, days, "km")
    assert bars == pytest.approx({d: km[d] for d in with_fixes}, abs=px)
    planned = {r["date"]: r["planned_km"] for r in doc["vehicles"] if r["planned_km"] is not None}
    assert set(planned) == {"2026-11-22", "2026-11-23"}
    bars, px = _bars(data, days, "planned")
    assert bars == pytest.approx(planned, abs=px)
    await expect(fig.locator(".chart-note")).to_contain_text("grupo de 2 veículos")
    await expect(page.locator("#report-table tfoot")).to_contain_text(re.compile(r"\d+,\d\d"))
    await fig.screenshot(path=str(ARTIFACTS / "chart-km-group.png"))
    await tab.shot("chart-km")

    # One vehicle at a time: the one without positions draws no km bar.
    await page.get_by_label("Veículos no gráfico").select_option(label=LIVE_PLATES[0])
    await expect(fig.locator(".chart-note")).to_contain_text(LIVE_PLATES[0])
    assert not [b for b in (await _read(fig))["bars"] if "km" in b["cls"].split()]
    await page.get_by_label("Veículos no gráfico").select_option(label=site.history_plate)
    await expect(fig.locator("rect.bar.km")).to_have_count(1)

    # By vehicle: a bar per vehicle with positions, and the week's planned km beside it.
    whole = await _api(tab, "km", vehicle_id=ids, **{"from": WEEK[0], "to": WEEK[1]})
    await page.get_by_label("Agrupar").select_option(label="Por veículo")
    await page.get_by_role("button", name="Gerar relatório").click()
    await expect(fig).to_contain_text("Km rodados por veículo")
    data = await _read(fig)
    plates = [r["plate"] for r in whole["vehicles"]]
    bars, px = _bars(data, plates, "km")
    assert bars == pytest.approx({r["plate"]: r["km"] for r in whole["vehicles"] if r["method"] != "no_fixes"}, abs=px)
    bars, px = _bars(data, plates, "planned")
    assert bars == pytest.approx({site.history_plate: sum(planned.values())}, abs=px)


async def test_the_reporting_chart_draws_the_daily_coverage_under_the_100_percent_line(tab: Tab) -> None:
    site, page = tab.site, tab.page
    doc = await _api(tab, "reporting", vehicle_id=site.history_vehicle_id, **{"from": WEEK[0], "to": WEEK[1]})
    days = [r["date"] for r in doc["days"]]
    await tab.login("auditor")
    await tab.open(f"/relatorios/reporting?vehicle_id={site.history_vehicle_id}&from={WEEK[0]}&to={WEEK[1]}")
    fig = page.locator("figure.coverage-chart")
    data = await _read(fig)
    await _accessible(tab, data, "report-table")
    axis = Axis(data["ticks"])
    covered = {r["date"]: 100 * r["coverage"] for r in doc["days"] if r["coverage"] is not None}
    assert covered, "the recorded day must have time in service"
    bars = {days[b["category"]]: axis.value(b["top"]) for b in data["bars"]}
    assert bars == pytest.approx(covered, abs=axis.px)
    assert len(data["refs"]) == 1 and data["refs"][0] == pytest.approx([axis.y(100)] * 2, abs=0.2)
    await expect(fig.locator("g.ref text")).to_have_text("100 %")
    await fig.screenshot(path=str(ARTIFACTS / "chart-reporting.png"))
    await tab.shot("chart-reporting")


CHART_PAGES = {
    "history": ("/historico?vehicle_id={v}&from={d}T00:00&to={d}T23:59", "figure.speed-chart"),
    "km": ("/relatorios/km?vehicle_id={v}&from=" + WEEK[0] + "&to={d}&by=day", "figure.km-chart"),
    "reporting": ("/relatorios/reporting?vehicle_id={v}&from=" + WEEK[0] + "&to={d}", "figure.coverage-chart"),
}


@pytest.mark.parametrize("name", list(CHART_PAGES))
async def test_each_chart_is_readable_on_a_phone_and_prints(tab: Tab, name: str) -> None:
    site, page = tab.site, tab.page
    path, selector = CHART_PAGES[name]
    await page.set_viewport_size(PHONE)
    await tab.login("auditor")
    await tab.open(path.format(v=site.history_vehicle_id, d=site.history_day))
    fig = page.locator(selector)
    data = await _read(fig)
    await page.wait_for_timeout(300)
    width = await page.evaluate("Math.max(document.documentElement.scrollWidth, document.body.scrollWidth)")
    assert width <= PHONE["width"] and data["width"] <= PHONE["width"]
    font = await fig.locator("svg text").first.evaluate("t => t.getBoundingClientRect().height")
    assert font >= 10, "axis labels too small to read on a phone"
    await fig.scroll_into_view_if_needed()
    await page.screenshot(path=str(ARTIFACTS / f"chart-{name}-phone.png"))

    # Printed: the chart and the tables stay, the forms and buttons go.
    await page.set_viewport_size({"width": 1000, "height": 1400})
    await page.emulate_media(media="print")
    await expect(fig).to_be_visible()
    await expect(fig.locator("svg")).to_be_visible()
    await expect(page.locator("form").first).to_be_hidden()
    await expect(page.locator("header.top")).to_be_hidden()
    await page.screenshot(path=str(ARTIFACTS / f"chart-{name}-print.png"), full_page=True)
